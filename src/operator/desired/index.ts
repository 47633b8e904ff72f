// The operator's desired state: for every servable Infra, each Kubernetes object to
// server-side-apply, plus the cross-namespace NetworkPolicies. Pure, deterministic (sorted),
// never throws: an Infra whose objects cannot be valid gets none, with a problem saying why.
import type { Infra, InfraClusterAttachment } from "../../api/schema.js";
import { parseCidr } from "../../model/ipv4.js";
import { networkAttachment } from "../../model/network.js";
import { topologyKey } from "../../model/topology-key.js";
import { attachmentRef } from "../../model/attachments.js";
import { compareProblems, problemsByRef, refKey } from "../../model/problems.js";
import { changedKeys, patchMap, REMOVED, type Removed } from "../../util/overlay-map.js";
import { changedBetween, patchSortedList, type Changed } from "../../util/merge-sorted.js";
import { readyCondition } from "../../model/status.js";
import type { BuildResult, ClusterState, ObjectRef, Problem, ProblemReason, Topology } from "../../model/types.js";
import type { RenderedInfra } from "../../pipeline/outputs.js";
import { coreDnsWorkload } from "./coredns.js";
import { envoyWorkload, PROXY_PORTS, proxyService } from "./envoy.js";
import { splitHostPort } from "../../envoy/xds-address.js";
import { EXTERNAL_PORT, externalService } from "./external.js";
import { keaWorkload } from "./kea.js";
import { componentNetwork } from "./network.js";
import {
  cmp,
  COMPONENT_LABEL,
  INFRA_LABEL,
  attachmentOwner,
  infraOwner,
  INSTANCE_LABEL,
  isDns1035Label,
  isDns1123Subdomain,
  isLabelValue,
  NAME_LABEL,
  sortObjects,
  type DesiredObject,
  type OwnerReference,
} from "./objects.js";
import { MANAGED_BY, MANAGED_BY_LABEL } from "../../api/labels.js";
import { networkPolicies, proxyNetworkPolicy, type PolicyClaim } from "./policy.js";
import { imageOverride, type OperatorSettings } from "./settings.js";
import { keaSccBinding } from "./scc.js";

export * from "./objects.js";
export {
  operatorSettings,
  settingsFromEnv,
  defaultXdsAddress,
  DEFAULT_IMAGES,
  FIELD_MANAGER,
  XDS_PORT,
  XDS_SERVICE,
} from "./settings.js";
export type { OperatorSettings, WorkloadImages } from "./settings.js";

/** Everything the desired state is computed from. */
export interface DesiredInput {
  /** The observed cluster: Infra uids (owner references) and attachments' deletion state. */
  readonly state: ClusterState;
  /** renderAll(state): the model and, per Infra, the rendered CoreDNS ConfigMap data. */
  readonly outputs: {
    readonly model: Pick<BuildResult, "problems">;
    readonly infras: readonly Pick<RenderedInfra, "topology" | "coreDns">[];
  };
  readonly settings: OperatorSettings;
  /** Observed NetworkAttachmentDefinitions' spec.config by "<namespace>/<name>" (see network.ts). */
  readonly networkAttachments?: ReadonlyMap<string, string>;
}

/** One Infra's namespaced objects, each controller-owned by it (garbage-collected with it). */
export interface DesiredInfra {
  readonly infra: ObjectRef;
  /** In apply order. */
  readonly objects: readonly DesiredObject[];
}

/** What the reconciler applies. */
export interface DesiredState {
  /** Sorted by Infra namespace/name; only Infras with a topology and valid objects. */
  readonly infras: readonly DesiredInfra[];
  /**
   * Objects outside the Infras' namespaces (NetworkPolicies), in apply order: no owner
   * reference; cleaned by the attachment finalizer (CLEANUP_LABEL, ATTACHMENTS_ANNOTATION).
   * Terminating attachments contribute none, so applying this set and deleting labelled
   * objects not in it is the finalizer's cleanup.
   */
  readonly crossNamespace: readonly DesiredObject[];
  /** Why an Infra got no objects (or no proxy workload). */
  readonly problems: readonly Problem[];
}

type Component = "dhcp" | "dns" | "proxy";

type Rendering = Pick<RenderedInfra, "topology" | "coreDns">;

/** One Infra's part of a desired state, and what it was computed from (compared by identity or value). */
interface MemoEntry {
  /** "<namespace>/<name>" of the Infra. */
  readonly key: string;
  readonly rendered: Rendering;
  readonly infra: Infra;
  readonly settings: OperatorSettings;
  readonly nadConfig: string | undefined;
  /** Per attachment of the topology: terminating, and Ready by its own problems. */
  readonly flags: string;
  readonly desired: DesiredInfra | undefined;
  readonly claims: readonly PolicyClaim[];
  readonly problems: readonly Problem[];
}

/** The renderings the memo's entries were computed from, by "<namespace>/<name>". */
interface RenderingIndex {
  of: readonly Rendering[];
  readonly byKey: Map<string, Rendering>;
}

/** The Infras the memo's entries were computed from, by "<namespace>/<name>", and by the NAD each attaches to. */
interface InfraIndex {
  of: readonly Infra[];
  readonly byKey: Map<string, Infra>;
  readonly byNad: Map<string, Set<string>>;
}

/** The last answer and the entries it was assembled from, both in Infra order. */
interface LastAnswer {
  readonly state: DesiredState;
  readonly entries: readonly MemoEntry[];
  /** The claims of each entry with objects: crossNamespace's input. */
  readonly claims: readonly (readonly PolicyClaim[])[];
}

/**
 * The previous desired state's parts, for `desiredState` to reuse: an Infra whose rendering (the
 * same RenderedInfra object, which renderAll keeps while its topology is unchanged), Infra object,
 * settings, NAD config and attachments' flags are unchanged gets the same objects — the same
 * object identities, so their content hashes are not computed again (src/operator/writing/applied.ts).
 * Only the Infras one of those inputs moved for are visited, and the answer's lists are patched at
 * them: a watch event costs the Infras it feeds, not every Infra. Only the memo is mutated.
 */
export class DesiredMemo {
  /** Each Infra's entry, by "<namespace>/<name>"; an Infra without a uid has a problem in #unobserved instead. */
  readonly #entries = new Map<string, MemoEntry>();
  readonly #unobserved = new Map<string, Problem>();
  #renderings: { of: readonly Rendering[]; readonly byKey: Map<string, Rendering> } | undefined;
  #infras:
    { of: readonly Infra[]; readonly byKey: Map<string, Infra>; readonly byNad: Map<string, Set<string>> } | undefined;
  #nads: ReadonlyMap<string, string> | undefined;
  #settings: OperatorSettings | undefined;
  #cross:
    { readonly claims: readonly (readonly PolicyClaim[])[]; readonly objects: readonly DesiredObject[] } | undefined;
  #attachments: AttachmentFacts | undefined;
  /** The model's problems the last flags were read with. */
  #problems: readonly Problem[] | undefined;
  last: LastAnswer | undefined;

  /** Reuses or computes the cross-namespace objects of these per-Infra claims. */
  crossNamespace(claims: readonly (readonly PolicyClaim[])[]): readonly DesiredObject[] {
    const was = this.#cross;
    if (was?.claims.length === claims.length && was.claims.every((c, i) => c === claims[i])) return was.objects;
    const objects = sortObjects(networkPolicies(claims.flat())).map((o) => structuredClone(o));
    this.#cross = { claims, objects };
    return objects;
  }

  /**
   * The Infras ("<namespace>/<name>") whose entry may differ from the memo's: those whose rendering
   * or Infra object is not the one it was computed from, whose NAD's config moved, or in `moved`
   * (their attachments' flags); every Infra, and every one the memo holds, when the settings changed
   * or `moved` is undefined. The memo's indexes of these inputs are patched at what changed (each
   * list compared with the last by identity, without a key per element).
   */
  visit(
    renderings: readonly Rendering[],
    infras: readonly Infra[],
    nads: ReadonlyMap<string, string>,
    settings: OperatorSettings,
    moved: ReadonlySet<string> | undefined,
  ): Iterable<string> {
    const keys = new Set<string>(moved);
    const r: RenderingIndex = (this.#renderings ??= { of: [], byKey: new Map() });
    if (r.of !== renderings) {
      const { removed, added } = changedBetween(r.of, renderings, byTopologyKey);
      for (const x of removed) {
        const key = topologyKey(x.topology);
        if (r.byKey.get(key) === x) r.byKey.delete(key);
        keys.add(key);
      }
      for (const x of added) {
        const key = topologyKey(x.topology);
        r.byKey.set(key, x);
        keys.add(key);
      }
      r.of = renderings;
    }
    const i: InfraIndex = (this.#infras ??= { of: [], byKey: new Map(), byNad: new Map() });
    if (i.of !== infras) {
      const { removed, added } = changedBetween(i.of, infras, byInfraKey);
      const unindex = (x: Infra, key: string): void => {
        const nad = nadKeyOf(x);
        if (nad !== undefined) i.byNad.get(nad)?.delete(key);
      };
      for (const x of removed) {
        const key = infraKey(x);
        if (i.byKey.get(key) === x) {
          i.byKey.delete(key);
          unindex(x, key);
        }
        keys.add(key);
      }
      for (const x of added) {
        const key = infraKey(x);
        const was = i.byKey.get(key);
        if (was !== undefined) unindex(was, key);
        i.byKey.set(key, x);
        const nad = nadKeyOf(x);
        if (nad !== undefined) {
          const of = i.byNad.get(nad) ?? new Set<string>();
          of.add(key);
          i.byNad.set(nad, of);
        }
        keys.add(key);
      }
      i.of = infras;
    }
    if (this.#nads !== undefined && this.#nads !== nads)
      for (const nad of changedKeys(this.#nads, nads)) for (const key of i.byNad.get(nad) ?? []) keys.add(key);
    this.#nads = nads;
    const full = moved === undefined || this.#settings !== settings;
    this.#settings = settings;
    return full ? new Set([...r.byKey.keys(), ...this.#entries.keys(), ...this.#unobserved.keys()]) : keys;
  }

  rendering(key: string): Rendering | undefined {
    return this.#renderings?.byKey.get(key);
  }

  infra(key: string): Infra | undefined {
    return this.#infras?.byKey.get(key);
  }

  entry(key: string): MemoEntry | undefined {
    return this.#entries.get(key);
  }

  setEntry(key: string, entry: MemoEntry | undefined): void {
    if (entry === undefined) this.#entries.delete(key);
    else this.#entries.set(key, entry);
  }

  /** Notes whether an Infra waits for its uid (`ref`: its problem's object); true when that changed. */
  setUnobserved(key: string, ref: ObjectRef | undefined): boolean {
    if ((ref !== undefined) === this.#unobserved.has(key)) return false;
    if (ref === undefined) this.#unobserved.delete(key);
    else
      this.#unobserved.set(
        key,
        problem(
          ref,
          "metadata.uid",
          "InfraNotObserved",
          "the Infra's uid is not known yet; its objects are applied once it is",
        ),
      );
    return true;
  }

  /** The Infras waiting for their uid: their problems. */
  unobserved(): Iterable<Problem> {
    return this.#unobserved.values();
  }

  /**
   * The terminating attachments, each attachment's uid, and the Infras ("<namespace>/<name>")
   * whose attachments' flags may have moved since the last call: those with an attachment that
   * changed, or with a model problem about one that came or went. Undefined `moved`: any. After
   * the first call, both facts are patched at the attachments that changed (found by identity,
   * without a key per attachment), so a status write on one attachment costs that attachment.
   */
  attachmentFacts(
    attachments: readonly InfraClusterAttachment[],
    problems: readonly Problem[],
  ): AttachmentFacts & { readonly moved: ReadonlySet<string> | undefined } {
    const was = this.#attachments;
    const lastProblems = this.#problems;
    this.#problems = problems;
    if (was === undefined) {
      this.#attachments = factsOf(attachments, { removed: [], added: attachments }, NO_FACTS);
      return { ...this.#attachments, moved: undefined };
    }
    const moved = new Set<string>();
    let facts = was;
    if (was.of !== attachments) {
      const changed = changedBetween(was.of, attachments, byAttachmentKey);
      facts = factsOf(attachments, changed, was);
      for (const a of [...changed.removed, ...changed.added])
        moved.add(`${a.metadata.namespace}/${a.spec.infraRef.name}`);
      this.#attachments = facts;
    }
    if (lastProblems !== problems) {
      const { removed, added } =
        lastProblems === undefined
          ? { removed: [], added: problems }
          : changedBetween(lastProblems, problems, compareProblems);
      for (const p of [...removed, ...added]) {
        if (p.object.kind !== "InfraClusterAttachment") continue;
        const infra = facts.infraOf.get(refKey(p.object)) ?? was.infraOf.get(refKey(p.object));
        if (infra !== undefined) moved.add(infra);
      }
    }
    return { ...facts, moved };
  }
}

const infraKey = (i: Infra): string => `${i.metadata.namespace}/${i.metadata.name}`;
const byInfraKey = (x: Infra, y: Infra): number => cmp(infraKey(x), infraKey(y));
const byTopologyKey = (x: Rendering, y: Rendering): number => cmp(topologyKey(x.topology), topologyKey(y.topology));
const byEntryKey = (x: MemoEntry, y: MemoEntry): number => cmp(x.key, y.key);
/** The desired state's order of its Infras: by "<namespace>/<name>" as a string. */
export const byDesiredKey = (x: DesiredInfra, y: DesiredInfra): number => cmp(desiredKey(x), desiredKey(y));
const NO_NADS: ReadonlyMap<string, string> = new Map();

/** What the flags read of the attachments. */
interface AttachmentFacts {
  readonly of: readonly InfraClusterAttachment[];
  /** "<namespace>/<name>" of the attachments being deleted. */
  readonly terminating: ReadonlyMap<string, true>;
  /** Each attachment's uid, by refKey. */
  readonly uids: ReadonlyMap<string, string>;
  /** Each attachment's Infra ("<namespace>/<name>"), by refKey. */
  readonly infraOf: ReadonlyMap<string, string>;
}

const NO_FACTS: AttachmentFacts = { of: [], terminating: new Map(), uids: new Map(), infraOf: new Map() };

/** `was` without the attachments `removed` and with those `added` (a changed one is in both). */
function factsOf(
  of: readonly InfraClusterAttachment[],
  { removed, added }: Changed<InfraClusterAttachment>,
  was: AttachmentFacts,
): AttachmentFacts {
  const terminating = new Map<string, true | Removed>();
  const uids = new Map<string, string | Removed>();
  const infraOf = new Map<string, string | Removed>();
  for (const a of removed) {
    const key = refKey(attachmentRef(a));
    terminating.set(`${a.metadata.namespace}/${a.metadata.name}`, REMOVED);
    uids.set(key, REMOVED);
    infraOf.set(key, REMOVED);
  }
  for (const a of added) {
    const key = refKey(attachmentRef(a));
    if (a.metadata.deletionTimestamp !== undefined) terminating.set(`${a.metadata.namespace}/${a.metadata.name}`, true);
    const uid = a.metadata.uid;
    if (uid !== undefined && uid !== "") uids.set(key, uid);
    infraOf.set(key, `${a.metadata.namespace}/${a.spec.infraRef.name}`);
  }
  return {
    of,
    terminating: patchMap(was.terminating, terminating),
    uids: patchMap(was.uids, uids),
    infraOf: patchMap(was.infraOf, infraOf),
  };
}

const byAttachmentKey = (x: InfraClusterAttachment, y: InfraClusterAttachment): number =>
  cmp(`${x.metadata.namespace}/${x.metadata.name}`, `${y.metadata.namespace}/${y.metadata.name}`);

/** Computes every object the operator must apply; `memo` carries unchanged Infras' objects over from the last call. */
export function desiredState(input: DesiredInput, memo: DesiredMemo = new DesiredMemo()): DesiredState {
  const { state, settings } = input;
  const modelProblems = input.outputs.model.problems;
  const facts = memo.attachmentFacts(state.attachments, modelProblems);
  const { terminating, uids: attachmentUids, moved } = facts;
  // Ready = served, not terminating, and nothing blocking in its own problems (readyCondition).
  const ready = (ref: ObjectRef): boolean => {
    // Most attachments have no problem: no condition is built for them on every pass.
    const mine = problemsByRef(modelProblems).get(refKey(ref));
    return mine === undefined || readyCondition(mine).status === "True";
  };
  const nads = input.networkAttachments ?? NO_NADS;
  const visit = memo.visit(input.outputs.infras, state.infras, nads, settings, moved);

  const removed = new Set<MemoEntry>();
  const added: MemoEntry[] = [];
  let unobservedMoved = false;
  let claimsMoved = false;
  let problemsMoved = false;
  for (const key of visit) {
    const r = memo.rendering(key);
    const infra = memo.infra(key);
    const uid = infra?.metadata.uid;
    const observed = r !== undefined && infra !== undefined && uid !== undefined && uid !== "";
    if (memo.setUnobserved(key, r === undefined || observed ? undefined : r.topology.infra)) unobservedMoved = true;
    const was = memo.entry(key);
    let entry: MemoEntry | undefined;
    if (observed) {
      const nad = nadKeyOf(infra);
      const nadConfig = nad === undefined ? undefined : nads.get(nad);
      // The uid too: it owns the attachment's public Service, and a re-created attachment has a new one.
      // Read again when the rendering or one of its attachments (or a problem about one) moved.
      const flags =
        was?.rendered === r && moved !== undefined && !moved.has(key)
          ? was.flags
          : r.topology.attachments
              .map(
                (a) =>
                  `${terminating.has(`${a.ref.namespace}/${a.ref.name}`) ? "T" : "-"}${ready(a.ref) ? "R" : "-"}` +
                  (attachmentUids.get(refKey(a.ref)) ?? ""),
              )
              .join(",");
      entry =
        was?.rendered === r &&
        was.infra === infra &&
        was.settings === settings &&
        was.nadConfig === nadConfig &&
        was.flags === flags
          ? was
          : infraEntry(key, infra, uid, r, { settings, nadConfig, terminating, ready, attachmentUids }, flags, was);
    }
    if (entry === was) continue;
    memo.setEntry(key, entry);
    if (was !== undefined) removed.add(was);
    if (entry !== undefined) added.push(entry);
    if (claimsOf(was) !== claimsOf(entry)) claimsMoved = true;
    if ((was?.problems ?? NO_PROBLEMS) !== (entry?.problems ?? NO_PROBLEMS)) problemsMoved = true;
  }
  const last = memo.last;
  // No Infra's entry moved (a watch event that changed nothing here): the same answer.
  if (last !== undefined && !unobservedMoved && removed.size === 0 && added.length === 0) return last.state;

  added.sort(byEntryKey);
  const entries = patchSortedList(last?.entries ?? [], removed, added, byEntryKey);
  const desiredWas = new Set<DesiredInfra>();
  for (const e of removed) if (e.desired !== undefined) desiredWas.add(e.desired);
  const infras = patchSortedList(
    last?.state.infras ?? [],
    desiredWas,
    added.flatMap((e) => e.desired ?? []),
    byDesiredKey,
  );
  const claims =
    last === undefined || claimsMoved
      ? entries.flatMap((e) => (e.desired === undefined ? [] : [e.claims]))
      : last.claims;
  const problems =
    last === undefined || problemsMoved || unobservedMoved
      ? [...memo.unobserved(), ...entries.flatMap((e) => e.problems)].sort(
          (a, b) => cmp(refKey(a.object), refKey(b.object)) || cmp(a.reason, b.reason),
        )
      : last.state.problems;
  const desired: DesiredState = { infras, crossNamespace: memo.crossNamespace(claims), problems };
  const byKey = new Map<string, DesiredInfra | Removed>();
  for (const d of desiredWas) byKey.set(desiredKey(d), REMOVED);
  for (const e of added) if (e.desired !== undefined) byKey.set(e.key, e.desired);
  infrasByKeyOf.set(desired, patchMap(last === undefined ? NO_INFRAS : desiredInfrasByKey(last.state), byKey));
  memo.last = { state: desired, entries, claims };
  return desired;
}

/**
 * The desired Infras by "<namespace>/<name>": patched beside each answer of desiredState at the
 * Infras it moved (a persistent map), built for a desired state made any other way.
 */
export function desiredInfrasByKey(desired: DesiredState): ReadonlyMap<string, DesiredInfra> {
  let byKey = infrasByKeyOf.get(desired);
  if (byKey === undefined) {
    byKey = new Map(desired.infras.map((d) => [desiredKey(d), d]));
    infrasByKeyOf.set(desired, byKey);
  }
  return byKey;
}

const infrasByKeyOf = new WeakMap<DesiredState, ReadonlyMap<string, DesiredInfra>>();
const NO_INFRAS: ReadonlyMap<string, DesiredInfra> = new Map();
const desiredKey = (d: DesiredInfra): string => `${d.infra.namespace}/${d.infra.name}`;

/** An entry's part of the cross-namespace claims: none without objects. */
function claimsOf(e: MemoEntry | undefined): readonly PolicyClaim[] | undefined {
  return e?.desired === undefined ? undefined : e.claims;
}

const NO_PROBLEMS: readonly Problem[] = [];

/** "<namespace>/<name>" of the NAD an Infra attaches its components to, once per Infra object. */
function nadKeyOf(infra: Infra): string | undefined {
  if (nadKeys.has(infra)) return nadKeys.get(infra);
  const attached = networkAttachment(infra.spec.networkConfig, infra.metadata.namespace);
  const key = attached === undefined ? undefined : `${attached.namespace}/${attached.name}`;
  nadKeys.set(infra, key);
  return key;
}

const nadKeys = new WeakMap<Infra, string | undefined>();

/** One Infra's objects, claims and problems, computed. */
function infraEntry(
  key: string,
  infra: Infra,
  uid: string,
  r: Rendering,
  shared: Shared,
  flags: string,
  was: MemoEntry | undefined,
): MemoEntry {
  const ref = r.topology.infra;
  const found: Problem[] = [];
  const built = infraObjects(infra, uid, r, shared, found);
  const invalid = invalidNames(built.objects);
  if (invalid.length > 0)
    found.push(
      problem(
        ref,
        "metadata.name",
        "InvalidName",
        `objects derived from the Infra's name would be invalid (${invalid.join("; ")}); use a shorter name of lower-case letters, digits and '-' starting with a letter`,
      ),
    );
  const base = {
    key,
    rendered: r,
    infra,
    settings: shared.settings,
    nadConfig: shared.nadConfig,
    flags,
    // No problems (the usual case) is one list: an entry computed again then moves no problem.
    problems: found.length === 0 ? NO_PROBLEMS : found,
  };
  if (invalid.length > 0) return { ...base, desired: undefined, claims: [] };
  // Builders share label maps and env lists; each returned object owns its own copy.
  const desired = { infra: ref, objects: sortObjects(built.objects).map((o) => structuredClone(o)) };
  // The same claims keep their array, so the cross-namespace objects are not computed again.
  const same = was !== undefined && JSON.stringify(was.claims) === JSON.stringify(built.claims);
  return { ...base, desired, claims: same ? was.claims : built.claims };
}

/** Every object of a desired state in apply order: all namespaced-owned ones, then cross-namespace ones. */
export function allObjects(state: DesiredState): DesiredObject[] {
  return [...sortObjects(state.infras.flatMap((i) => i.objects)), ...state.crossNamespace];
}

function problem(object: ObjectRef, field: string, reason: ProblemReason, message: string): Problem {
  return { object, field, reason, message, severity: "error" };
}

/** What every Infra's objects depend on besides the Infra itself. */
interface Shared {
  readonly settings: OperatorSettings;
  /** spec.config of the Infra's NAD, as observed. */
  readonly nadConfig: string | undefined;
  /** "<namespace>/<name>" of attachments being deleted. */
  readonly terminating: ReadonlyMap<string, true>;
  /** An attachment's Ready condition as its status reports it (no blocking problem of its own). */
  readonly ready: (ref: ObjectRef) => boolean;
  /** Observed attachments' uids by refKey: owners of their public Services. */
  readonly attachmentUids: ReadonlyMap<string, string>;
}

function infraObjects(
  infra: Infra,
  uid: string,
  r: Pick<RenderedInfra, "topology" | "coreDns">,
  shared: Shared,
  problems: Problem[],
): { objects: DesiredObject[]; claims: PolicyClaim[] } {
  const { settings, terminating } = shared;
  const t: Topology = r.topology;
  const name = infra.metadata.name;
  const namespace = infra.metadata.namespace;
  const owner: OwnerReference = infraOwner(name, uid);
  const nc = infra.spec.networkConfig;
  const prefixLength = parseCidr(nc.cidr)?.prefix ?? 32;
  const attachment = networkAttachment(nc, namespace);
  const gateway = nc.gateway;
  if (attachment === undefined || gateway === undefined) {
    // Only an Infra served from its last good spec gets here: its current one names no network.
    problems.push(
      problem(
        t.infra,
        "spec.networkConfig",
        "InvalidSpec",
        "names no network and gateway to attach the components to; their workloads are not deployed",
      ),
    );
    return { objects: [], claims: [] };
  }
  const nadConfig = shared.nadConfig;
  const labels = (component: Component): Record<string, string> => ({
    [MANAGED_BY_LABEL]: MANAGED_BY,
    [INFRA_LABEL]: name,
    [COMPONENT_LABEL]: component,
  });
  const podLabels = (component: Component, program: string): Record<string, string> => ({
    [NAME_LABEL]: program,
    [INSTANCE_LABEL]: name,
    [COMPONENT_LABEL]: component,
  });
  const network = (component: Component, serverIP: string, interfaceName: string) =>
    componentNetwork({
      attachment,
      nadConfig,
      name: `${name}-${component}`,
      namespace,
      serverIP,
      prefixLength,
      gateway,
      interfaceName,
      labels: labels(component),
      owner,
    });
  const objects: DesiredObject[] = [];
  const claims: PolicyClaim[] = [];

  for (const [component, child] of [
    ["dhcp", t.children.dhcp],
    ["dns", t.children.dns],
    ["proxy", t.children.proxy],
  ] as const) {
    if (child === undefined) continue;
    objects.push({
      apiVersion: child.apiVersion,
      kind: child.kind,
      metadata: {
        name: child.metadata.name,
        namespace: child.metadata.namespace,
        labels: { ...child.metadata.labels, ...labels(component) },
        ownerReferences: [owner],
      },
      spec: child.spec,
    });
  }

  const proxyChild = t.children.proxy;
  if (proxyChild !== undefined && t.proxy !== undefined) {
    const pods = podLabels("proxy", "envoy");
    const xds = splitHostPort(settings.xdsAddress);
    if (xds === undefined) {
      problems.push(
        problem(
          t.infra,
          "",
          "InvalidOperatorSettings",
          `xDS address ${JSON.stringify(settings.xdsAddress)} is not host:port; the proxy workload is not deployed`,
        ),
      );
    } else {
      const net = network("proxy", t.proxy.serverIP, "net1");
      if (net.nad !== undefined) objects.push(net.nad);
      objects.push(
        ...envoyWorkload({
          infraName: name,
          namespace,
          nodeCluster: t.proxy.node,
          xds,
          image: imageOverride(proxyChild.spec.proxyImage) ?? settings.images.envoy,
          pinUserIds: settings.pinUserIds,
          xdsTls: settings.xdsTls,
          labels: labels("proxy"),
          podLabels: pods,
          networksAnnotation: net.annotation,
          owner,
        }),
      );
    }
    objects.push(proxyService({ infraName: name, namespace, labels: labels("proxy"), podLabels: pods, owner }));
    // The OAuth name the proxy routes for each: the HostedCluster's, else oauth.<domain> (src/model/endpoints.ts).
    const readyOAuthNames = t.attachments
      .filter((a) => a.served && !terminating.has(`${a.ref.namespace}/${a.ref.name}`) && shared.ready(a.ref))
      .flatMap((a) => a.endpoints.filter((e) => e.name === "oauth").map((e) => e.hostname));
    const ext = externalService({
      name,
      namespace,
      config: infra.spec.infraComponents?.proxy?.externalService ?? {},
      readyOAuthNames,
      labels: labels("proxy"),
      podLabels: pods,
      owner,
    });
    if (ext !== undefined) objects.push(ext);
    const attachmentServices = t.attachments.flatMap((a) => {
      const uid = shared.attachmentUids.get(refKey(a.ref));
      if (!a.served || terminating.has(`${a.ref.namespace}/${a.ref.name}`) || uid === undefined) return [];
      const svc = externalService({
        name: a.ref.name,
        namespace,
        config: { enabled: a.externalService !== undefined, ...a.externalService },
        readyOAuthNames: [],
        labels: labels("proxy"),
        podLabels: pods,
        owner: attachmentOwner(a.ref.name, uid),
      });
      return svc === undefined ? [] : [svc];
    });
    objects.push(...attachmentServices);
    const proxySpec = infra.spec.infraComponents?.proxy;
    objects.push(
      proxyNetworkPolicy({
        infraName: name,
        namespace,
        labels: labels("proxy"),
        podLabels: pods,
        owner,
        ports: PROXY_PORTS.map((p) => p.port),
        namespaceSelector: proxySpec?.internalClients?.namespaceSelector,
        publicPorts: ext === undefined && attachmentServices.length === 0 ? [] : [EXTERNAL_PORT],
      }),
    );
    for (const a of t.attachments) {
      const key = `${a.ref.namespace}/${a.ref.name}`;
      if (!a.served || terminating.has(key)) continue;
      claims.push({
        controlPlaneNamespace: a.controlPlaneNamespace,
        attachment: key,
        proxyNamespace: namespace,
        proxyPodLabels: pods,
      });
    }
  }

  const dnsChild = t.children.dns;
  if (dnsChild !== undefined && t.dns !== undefined && r.coreDns !== undefined) {
    const net = network("dns", t.dns.serverIP, "net1");
    if (net.nad !== undefined) objects.push(net.nad);
    objects.push(
      ...coreDnsWorkload({
        infraName: name,
        namespace,
        files: r.coreDns,
        image: imageOverride(dnsChild.spec.image) ?? settings.images.coredns,
        pinUserIds: settings.pinUserIds,
        labels: labels("dns"),
        podLabels: podLabels("dns", "coredns"),
        networksAnnotation: net.annotation,
        owner,
      }),
    );
  }

  const dhcpChild = t.children.dhcp;
  if (dhcpChild !== undefined && t.dhcp !== undefined) {
    const net = network("dhcp", t.dhcp.serverIP, t.dhcp.interface);
    if (net.nad !== undefined) objects.push(net.nad);
    objects.push(
      ...keaWorkload({
        infraName: name,
        namespace,
        node: t.dhcp.name,
        xdsTls: settings.xdsTls,
        xdsAddress: settings.xdsAddress,
        keaImage: imageOverride(dhcpChild.spec.image) ?? settings.images.kea,
        agentImage: settings.images.oooi,
        hooksDirectory: settings.keaHooksDirectory,
        interfaceName: t.dhcp.interface,
        leaseStorage: settings.leaseStorage,
        leaseStorageClass: settings.leaseStorageClass,
        labels: labels("dhcp"),
        podLabels: podLabels("dhcp", "kea"),
        networksAnnotation: net.annotation,
        owner,
      }),
    );
    if (settings.keaScc === "bind")
      objects.push(keaSccBinding({ infraName: name, namespace, labels: labels("dhcp"), owner }));
  }
  return { objects, claims };
}

/** Names and label values that the API server would reject. */
function invalidNames(objects: readonly DesiredObject[]): string[] {
  const out: string[] = [];
  for (const o of objects) {
    const n = o.metadata.name;
    const ok = o.kind === "Service" ? isDns1035Label(n) : isDns1123Subdomain(n);
    if (!ok) out.push(`${o.kind} ${n}`);
    for (const [k, v] of Object.entries(o.metadata.labels)) if (!isLabelValue(v)) out.push(`label ${k}=${v}`);
  }
  return [...new Set(out)];
}
