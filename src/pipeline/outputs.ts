// ClusterState → every file `oooi render` and `oooi serve` write, and the status of every object.
// Pure: the CLI does the writing.
import { metaTime } from "../util/clock.js";
import type { DHCPAllocation } from "../api/schema.js";
import { renderKea, type KeaRenderOptions } from "../dhcp/render/index.js";
import { renderCoreDns } from "../dns/render/index.js";
import { buildWithLastGood, NO_LAST_GOOD, type LastGood, type LastGoodBuild } from "./last-good.js";
import type { ObjectChange } from "../model/incremental/infras-read.js";
import { objectStatuses, readyCondition, type ReadyCondition } from "../model/status.js";
import type { BuildResult, ClusterState, DnsModel, ObjectRef, Problem, Topology } from "../model/types.js";
import { cmp, refKey } from "../model/problems.js";
import { topologyKey } from "../model/topology-key.js";
import { patchMap, REMOVED, type Removed } from "../util/overlay-map.js";
import { patchSortedList } from "../util/merge-sorted.js";
import { renderEnvoy, type EnvoyRender, type EnvoyRenderOptions } from "../envoy/render/index.js";
import type { EnvoyResources } from "../envoy/resources.js";
import { prettyJson } from "../envoy/render/json-text.js";
import { sameJson } from "./same-json.js";
import { envoyBootstrapYaml } from "../envoy/bootstrap.js";
import { DEFAULT_XDS_ADDRESS, splitHostPort } from "../envoy/xds-address.js";

export const STATUS_FILE = "status.json";
export const ENVOY_FILE = "envoy.json";
export const KEA_FILE = "kea-dhcp4.json";
/** The node group's Envoy bootstrap, beside its envoy.json: `envoy -c bootstrap.yaml` joins it. */
export const BOOTSTRAP_FILE = "bootstrap.yaml";

/** What one Infra renders to; a part is undefined when disabled or refused by its consistency check. */
export interface RenderedInfra {
  /**
   * The same object while the model keeps it (the incremental build keeps unchanged topologies).
   * Each rendered part is the rendering of a model that writes the same JSON as this topology's.
   */
  readonly topology: Topology;
  readonly envoy: EnvoyResources | undefined;
  /** Rendered when first read (LazyCoreDns): `serve` reads them only for --out, after the push. */
  readonly coreDns: Readonly<Record<string, string>> | undefined;
  readonly kea: { Dhcp4: object } | undefined;
  /**
   * Its files (relative path → content), built when first asked for: only a rendering that is
   * written (`render`, `serve --out`) reads them, and a big VLAN's envoy.json is megabytes.
   */
  readonly files: readonly (readonly [string, string])[];
  readonly childStatus: readonly StatusEntry[];
}

export interface StatusEntry {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly status: Record<string, unknown> & { readonly conditions: readonly ReadyCondition[] };
  readonly problems: readonly Omit<Problem, "object">[];
}

export interface Outputs {
  /** The state the model was built from: the input with refused versions replaced by their last good ones. */
  readonly state: ClusterState;
  readonly model: BuildResult;
  /** Pass back as RenderOptions.lastGood on the next rendering. */
  readonly lastGood: LastGood;
  /** The decoded state rendered (before refused versions were replaced) and its build, to continue from. */
  readonly input: ClusterState;
  readonly built: LastGoodBuild;
  /** RenderOptions.kea, .xdsAddress and .envoy as JSON: a kept topology keeps its rendering only under the same options. */
  readonly keaKey: string;
  /** RenderOptions.envoy as JSON: a proxy keeps its Envoy resources only under the same options. */
  readonly envoyKey: string;
  readonly infras: readonly RenderedInfra[];
  /** `infras` by Infra "<namespace>/<name>". */
  readonly byInfra: ReadonlyMap<string, RenderedInfra>;
  /** How `infras` differ from those of the rendering this one continued from (RenderOptions.reuse). */
  readonly delta: RenderingDelta | undefined;
  /** Relative path ("<namespace>/<child>/<file>") → content. */
  readonly files: ReadonlyMap<string, string>;
  readonly status: readonly StatusEntry[];
}

/** The renderings one rendering made anew, and those of the rendering it continued from that it no longer holds. */
export interface RenderingDelta {
  /** The `byInfra` of the rendering continued from (not that Outputs, which would keep every earlier one alive). */
  readonly from: ReadonlyMap<string, RenderedInfra>;
  /** In `infras`, not in the renderings of `from` (by identity). */
  readonly rendered: readonly RenderedInfra[];
  /** In `from`, not in `infras`: replaced by a rendering in `rendered`, or of an Infra gone. */
  readonly dropped: readonly RenderedInfra[];
}

const NO_RENDERINGS: ReadonlyMap<string, RenderedInfra> = new Map();

export interface RenderOptions {
  readonly kea?: KeaRenderOptions;
  /** Files of the previous rendering (same relative paths), so DNS serials only move on change. */
  readonly previous?: ReadonlyMap<string, string>;
  /**
   * The previous outputs of the same pipeline: a proxy whose model did not change keeps its
   * rendered resources (the same objects, so the xDS cache neither re-checks nor re-encodes them).
   */
  readonly reuse?: Outputs;
  /**
   * The keyed changes from `reuse`'s input to this state, as the watcher reported them; without
   * them they are found by object identity. Only the Infras they feed are built and rendered again.
   */
  readonly changes?: readonly ObjectChange[];
  /** Last accepted version of every object (previous Outputs.lastGood); none = nothing to fall back on. */
  readonly lastGood?: LastGood;
  /**
   * When this rendering happens (milliseconds since the epoch): the acceptance time of new versions
   * and the clock of DHCP grace periods. Injected so rendering stays pure.
   */
  readonly now?: number;
  /** The durable DHCP allocation tables (per DHCPServer "<namespace>/<name>"), as last persisted. */
  readonly dhcpAllocations?: ReadonlyMap<string, readonly DHCPAllocation[]>;
  /**
   * The xDS server each proxy's bootstrap.yaml points at; default serve's default listen address,
   * false = write no bootstrap (no xDS server to point at).
   */
  readonly xdsAddress?: { readonly host: string; readonly port: number } | false;
  /** How the Envoy resources are shaped (--filter-chain-matcher). */
  readonly envoy?: EnvoyRenderOptions;
}

export function renderAll(state: ClusterState, options: RenderOptions = {}): Outputs {
  const input: ClusterState = {
    ...state,
    ...(options.dhcpAllocations === undefined ? {} : { dhcpAllocations: options.dhcpAllocations }),
    ...(options.now === undefined ? {} : { now: options.now }),
  };
  const acceptedAt = options.now === undefined ? "an unknown time" : metaTime(options.now);
  const reuse = options.reuse;
  const built = buildWithLastGood(
    input,
    options.lastGood ?? NO_LAST_GOOD,
    acceptedAt,
    reuse === undefined ? undefined : { input: reuse.input, built: reuse.built, changes: options.changes },
  );
  const model = built.result;
  // Without `previous`, a rendering continues from the reused one's own files (serve): a kept
  // topology renders the same, and a rebuilt one's DNS serials continue from its reused files.
  // (Compared with the files the reused rendering built, if any: asking `reuse.files` would build them.)
  const continues =
    options.previous === undefined || (reuse !== undefined && options.previous === builtFiles.get(reuse));
  const previousByDir = continues ? new Map<string, Record<string, string>>() : groupByDir(options.previous);
  const xds = options.xdsAddress ?? splitHostPort(DEFAULT_XDS_ADDRESS) ?? false;
  const keaKey = JSON.stringify([options.kea ?? null, xds, options.envoy ?? null]);
  const envoyKey = JSON.stringify(options.envoy ?? {});
  const context: InfraContext = {
    options,
    previousByDir,
    continues,
    xds,
    sameOptions: reuse?.keaKey === keaKey,
    sameEnvoyOptions: reuse?.envoyKey === envoyKey,
  };

  // The reused renderings by Infra, patched (not rebuilt) with this one's: a change touches only
  // the Infras it rendered again.
  const before = reuse?.byInfra ?? NO_RENDERINGS;
  const changed = new Map<string, RenderedInfra | Removed>();
  const rendered: RenderedInfra[] = [];
  const dropped: RenderedInfra[] = [];
  let infras: readonly RenderedInfra[];
  if (reuse !== undefined && context.sameOptions && continues) {
    // Continuing the reused rendering: every topology the build did not rebuild is one it rendered,
    // so only the rebuilt Infras are looked at (a watch event of another kind costs nothing here).
    for (const key of built.rebuilt) {
      const t = built.build.parts.get(key)?.topology;
      const same = before.get(key);
      if (t === undefined) {
        if (same === undefined) continue;
        changed.set(key, REMOVED);
        dropped.push(same);
        continue;
      }
      const r = same?.topology === t ? same : renderInfra(t, same, context);
      if (r === same) continue;
      changed.set(key, r);
      rendered.push(r);
      if (same !== undefined) dropped.push(same);
    }
    rendered.sort(byTopology);
    infras = patchSortedList(reuse.infras, new Set(dropped), rendered, byTopology);
  } else infras = renderEvery(model.topologies, before, context, { changed, rendered, dropped });

  // status.json and the whole file map are built when asked for (serve without --out never does):
  // a change then costs the Infras it rebuilt, not every object's status.
  let status: readonly StatusEntry[] | undefined;
  let files: ReadonlyMap<string, string> | undefined;
  const statusOf = (): readonly StatusEntry[] => (status ??= statusEntries(built, infras));
  const outputs: Outputs = {
    state: built.state,
    model,
    infras,
    get files() {
      if (files === undefined) {
        files = filesOf(infras, statusOf());
        builtFiles.set(outputs, files);
      }
      return files;
    },
    get status() {
      return statusOf();
    },
    lastGood: built.memory,
    input,
    built,
    keaKey,
    envoyKey,
    byInfra: patchMap(before, changed),
    delta: reuse === undefined ? undefined : { from: before, rendered, dropped },
  };
  return outputs;
}

/** A rendering's Infras in order, each looked at: what changed is noted in `out`. */
function renderEvery(
  topologies: readonly Topology[],
  before: ReadonlyMap<string, RenderedInfra>,
  context: InfraContext,
  out: {
    readonly changed: Map<string, RenderedInfra | Removed>;
    readonly rendered: RenderedInfra[];
    readonly dropped: RenderedInfra[];
  },
): RenderedInfra[] {
  const infras: RenderedInfra[] = [];
  let found = 0;
  for (const t of topologies) {
    const key = topologyKey(t);
    const same = before.get(key);
    if (same !== undefined) found += 1;
    const r =
      same?.topology === t && context.sameOptions && (context.continues || sameDnsFiles(same, context.previousByDir))
        ? same
        : renderInfra(t, same, context);
    infras.push(r);
    if (r === same) continue;
    out.changed.set(key, r);
    out.rendered.push(r);
    if (same !== undefined) out.dropped.push(same);
  }
  // Some reused Infra has no topology now (rare: an Infra went): found by a walk of the reused ones.
  if (found < before.size) {
    const live = new Set(topologies.map(topologyKey));
    for (const [key, r] of before)
      if (!live.has(key)) {
        out.changed.set(key, REMOVED);
        out.dropped.push(r);
      }
  }
  return infras;
}

const byTopology = (a: RenderedInfra, b: RenderedInfra): number =>
  cmp(topologyKey(a.topology), topologyKey(b.topology));

/** The file map of each rendering whose `files` was asked for (renderAll compares `previous` with it). */
const builtFiles = new WeakMap<Outputs, ReadonlyMap<string, string>>();

/** Every object's status entry, sorted: the model's (Infras, attachments, objects with problems) and the children's. */
function statusEntries(built: LastGoodBuild, infras: readonly RenderedInfra[]): StatusEntry[] {
  const model = built.result;
  const extras = statusIndex(model);
  const all = [
    ...objectStatuses(built.state, model).map((s) =>
      entry(s.object, s.ready, s.problems, extras.get(refKey(s.object)) ?? {}),
    ),
    ...infras.flatMap((r) => r.childStatus),
  ];
  return sortedStatusEntries(all);
}

/** Status entries in Outputs.status's order (namespace, kind, name); each key made once, not per comparison. */
export function sortedStatusEntries(entries: Iterable<StatusEntry>): StatusEntry[] {
  const keyed = [...entries].map((e) => ({ e, key: `${e.namespace}/${e.kind}/${e.name}` }));
  keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return keyed.map(({ e }) => e);
}

function filesOf(infras: readonly RenderedInfra[], status: readonly StatusEntry[]): Map<string, string> {
  const files = new Map<string, string>();
  for (const r of infras) for (const [path, text] of r.files) files.set(path, text);
  files.set(STATUS_FILE, json({ objects: status }));
  return files;
}

interface InfraContext {
  readonly options: RenderOptions;
  /** The previous files by child directory, when they are not the reused rendering's own. */
  readonly previousByDir: ReadonlyMap<string, Record<string, string>>;
  /** The previous files are the reused rendering's own (or none were given and there is one to continue from). */
  readonly continues: boolean;
  /** Where each bootstrap.yaml points (false: write none). */
  readonly xds: { readonly host: string; readonly port: number } | false;
  /** The reused rendering had the same kea and xDS options (its Kea configurations were rendered under these). */
  readonly sameOptions: boolean;
  /** The reused rendering's RenderOptions.envoy are these (its Envoy resources are of the same form). */
  readonly sameEnvoyOptions: boolean;
}

/** A kept topology's CoreDNS files are still what the previous files hold (the operator's ConfigMaps). */
function sameDnsFiles(same: RenderedInfra, previousByDir: ReadonlyMap<string, Record<string, string>>): boolean {
  const dns = same.topology.children.dns;
  if (same.coreDns === undefined || dns === undefined) return true;
  const previous = previousByDir.get(childDir(dns.metadata));
  return Object.entries(same.coreDns).every(([k, text]) => previous?.[k] === text);
}

/**
 * One Infra's rendering and child statuses. A part whose model writes the same JSON as the one
 * its reused rendering came from keeps its rendered objects, so the xDS cache neither re-checks
 * nor re-encodes them.
 */
function renderInfra(t: Topology, same: RenderedInfra | undefined, context: InfraContext): RenderedInfra {
  const { options } = context;
  const childStatus: StatusEntry[] = [];
  // The models `same`'s parts were rendered from: the same objects when the topology was kept
  // (the options changed), else compared by content.
  const was = same?.topology;
  let envoy: EnvoyResources | undefined;
  if (t.proxy !== undefined && t.children.proxy !== undefined) {
    const r: EnvoyRender =
      same?.envoy !== undefined && context.sameEnvoyOptions && sameJson(was?.proxy, t.proxy)
        ? { ok: true, resources: same.envoy }
        : renderEnvoy(t.proxy, options.envoy, same?.envoy);
    if (r.ok) envoy = r.resources;
    childStatus.push(
      child(
        "ProxyServer",
        t.children.proxy.metadata,
        r.ok ? [] : r.errors,
        r.ok
          ? `${r.resources.listeners.length} listeners, ${r.resources.clusters.length} clusters for ${t.proxy.backends.length} backends`
          : "",
      ),
    );
  }

  let dnsFiles: LazyCoreDns | undefined;
  if (t.dns !== undefined && t.children.dns !== undefined) {
    const dir = childDir(t.children.dns.metadata);
    const wasHere = same !== undefined && sameDnsDir(same, dir) ? dnsCells.get(same) : undefined;
    if (options.previous === undefined && options.reuse === undefined) dnsFiles = new LazyCoreDns(t.dns, undefined);
    else if (context.continues) {
      // Same model, continuing from its own files: the rendering (serials included) is the same.
      dnsFiles = wasHere !== undefined && sameJson(was?.dns, t.dns) ? wasHere : new LazyCoreDns(t.dns, wasHere ?? {});
    } else {
      const previous = context.previousByDir.get(dir) ?? {};
      const kept = wasHere?.files;
      const unchanged =
        kept !== undefined &&
        sameJson(was?.dns, t.dns) &&
        Object.entries(kept).every(([k, text]) => previous[k] === text);
      dnsFiles = unchanged ? wasHere : new LazyCoreDns(t.dns, previous);
    }
    const [vlan, pods] = t.dns.views;
    childStatus.push(
      child(
        "DNSServer",
        t.children.dns.metadata,
        [],
        `${vlan.zones.length} VLAN-view zones, ${pods.zones.length} default-view zones`,
      ),
    );
  }

  let kea: { Dhcp4: object } | undefined;
  if (t.dhcp !== undefined && t.children.dhcp !== undefined) {
    // The Kea options are part of what it was rendered from: the same options (sameOptions) and model.
    kea =
      same?.kea !== undefined && context.sameOptions && sameJson(was?.dhcp, t.dhcp)
        ? same.kea
        : renderKea(t.dhcp, options.kea);
    childStatus.push(child("DHCPServer", t.children.dhcp.metadata, [], `${t.dhcp.reservations.length} reservations`));
  }
  const { xds } = context;
  let files: readonly (readonly [string, string])[] | undefined;
  const rendered: RenderedInfra = {
    topology: t,
    envoy,
    get coreDns() {
      return dnsFiles?.files;
    },
    kea,
    get files() {
      return (files ??= infraFiles(t, { envoy, coreDns: dnsFiles?.files, kea }, xds));
    },
    childStatus,
  };
  if (dnsFiles !== undefined) dnsCells.set(rendered, dnsFiles);
  return rendered;
}

/**
 * One Infra's CoreDNS files, rendered when first read. `serve` reads them only to write `--out`
 * (it answers DNS from the model), after the xDS push: a big VLAN's 10,000 zone files then never
 * delay its Envoys' Listener. Reading one reads the rendering it continues from first (serials as
 * if each had been rendered at once), but holds that one only weakly: renderings nobody reads
 * (`serve` without `--out`) never chain up in memory. One already collected was never read, so
 * nobody saw its serials; the next continues from the last files read before it was made.
 */
class LazyCoreDns {
  #files: Readonly<Record<string, string>> | undefined;
  #model: DnsModel | undefined;
  /** The unread rendering this one continues from, while it lives. */
  #before: WeakRef<LazyCoreDns> | undefined;
  /** What to continue from when `#before` is gone: the last files read before this one was made. */
  #fallback: Readonly<Record<string, string>> | undefined;

  /** `previous`: the files to continue from (serials), another rendering's, or none. */
  constructor(model: DnsModel, previous: Readonly<Record<string, string>> | LazyCoreDns | undefined) {
    this.#model = model;
    if (previous instanceof LazyCoreDns) {
      if (previous.#files === undefined) this.#before = new WeakRef(previous);
      this.#fallback = previous.#files ?? previous.#fallback;
    } else this.#fallback = previous;
  }

  get files(): Readonly<Record<string, string>> {
    if (this.#files === undefined) {
      const model = this.#model;
      if (model === undefined) throw new Error("unreachable: a CoreDNS rendering without its model");
      const previous = this.#before?.deref()?.files ?? this.#fallback;
      this.#files = renderCoreDns(model, previous === undefined ? {} : { previous }).files;
      this.#model = undefined;
      this.#before = undefined;
      this.#fallback = undefined;
    }
    return this.#files;
  }
}

/** Each rendering's CoreDNS files, read or not (RenderedInfra.coreDns reads them). */
const dnsCells = new WeakMap<RenderedInfra, LazyCoreDns>();

/** `same` rendered its CoreDNS files in this child directory ("<namespace>/<child>"), its Infra's own. */
function sameDnsDir(same: RenderedInfra, dir: string): boolean {
  const dns = same.topology.children.dns;
  return dns !== undefined && childDir(dns.metadata) === dir;
}

/**
 * One Infra's files. Each text is kept per rendered object (prettyJson keeps each resource's and
 * chain's text, kea's is kept here), so the files of a rendering that kept
 * most of the previous one's objects cost what changed.
 */
function infraFiles(
  t: Topology,
  parts: Pick<RenderedInfra, "envoy" | "coreDns" | "kea">,
  xds: InfraContext["xds"],
): [string, string][] {
  const files: [string, string][] = [];
  const { proxy, dns, dhcp } = t.children;
  if (proxy !== undefined && t.proxy !== undefined) {
    const dir = childDir(proxy.metadata);
    if (parts.envoy !== undefined) files.push([`${dir}/${ENVOY_FILE}`, `${prettyJson(parts.envoy)}\n`]);
    if (xds !== false) files.push([`${dir}/${BOOTSTRAP_FILE}`, envoyBootstrapYaml(t.proxy.node, xds)]);
  }
  if (dns !== undefined && parts.coreDns !== undefined)
    for (const [key, text] of Object.entries(parts.coreDns)) files.push([`${childDir(dns.metadata)}/${key}`, text]);
  if (dhcp !== undefined && parts.kea !== undefined)
    files.push([`${childDir(dhcp.metadata)}/${KEA_FILE}`, keaText(parts.kea)]);
  return files;
}

/** kea-dhcp4.json's text per rendered configuration (a big VLAN's holds 50,000 reservations). */
const keaTexts = new WeakMap<object, string>();

function keaText(kea: { Dhcp4: object }): string {
  let text = keaTexts.get(kea);
  if (text === undefined) {
    text = json(kea);
    keaTexts.set(kea, text);
  }
  return text;
}

/** The status fields beyond conditions: per Infra its attachments' count, per attachment what it was given. */
function statusIndex(model: BuildResult): Map<string, Record<string, unknown>> {
  const out = new Map<string, Record<string, unknown>>();
  for (const t of model.topologies) {
    const ref = { kind: "Infra", namespace: t.infra.namespace, name: t.infra.name };
    if (!out.has(refKey(ref))) out.set(refKey(ref), infraExtras(t));
    for (const a of t.attachments) {
      const key = refKey({ kind: "InfraClusterAttachment", namespace: a.ref.namespace, name: a.ref.name });
      if (!out.has(key)) out.set(key, attachmentExtras(a));
    }
  }
  return out;
}

/** What an Infra's status says beyond its Ready condition: its attachments, and how many are served. */
function infraExtras(t: Topology): Record<string, unknown> {
  return { attachments: { total: t.attachments.length, ready: t.attachments.filter((a) => a.served).length } };
}

/** What an attachment's status says beyond its Ready condition, from its Infra's topology. */
function attachmentExtras(a: Topology["attachments"][number]): Record<string, unknown> {
  return {
    domain: a.domain,
    controlPlaneNamespace: a.controlPlaneNamespace,
    workerAddresses: a.workerAddresses,
    endpoints: a.endpoints,
  };
}

/**
 * The entry `status` holds for an Infra or attachment of the state, built alone: from the problems
 * on it and the topology of its Infra (undefined when it has none).
 */
export function modelStatusEntry(
  ref: ObjectRef,
  problems: readonly Problem[],
  topology: Topology | undefined,
): StatusEntry {
  const same = (r: ObjectRef): boolean => r.namespace === ref.namespace && r.name === ref.name;
  const attached = ref.kind === "InfraClusterAttachment" ? topology?.attachments.find((a) => same(a.ref)) : undefined;
  const extra =
    ref.kind === "Infra" && topology !== undefined && same(topology.infra)
      ? infraExtras(topology)
      : attached === undefined
        ? {}
        : attachmentExtras(attached);
  return entry(ref, readyCondition(problems), problems, extra);
}

function entry(
  ref: ObjectRef,
  ready: ReadyCondition,
  problems: readonly Problem[],
  extra: Record<string, unknown>,
): StatusEntry {
  return {
    apiVersion: "hostedcluster.densityops.com/v1alpha1",
    kind: ref.kind,
    namespace: ref.namespace,
    name: ref.name,
    status: { conditions: [ready], ...extra },
    problems: problems.map(({ field, reason, message, severity }) => ({ field, reason, message, severity })),
  };
}

/** A child's status: Rendered, or refused with the renderer's problems (already bound to the child). */
function child(
  kind: string,
  meta: { namespace: string; name: string },
  problems: readonly Problem[],
  summary: string,
): StatusEntry {
  const ref = { kind, namespace: meta.namespace, name: meta.name };
  const ready: ReadyCondition =
    problems.length === 0
      ? { type: "Ready", status: "True", reason: "Rendered", message: summary }
      : {
          type: "Ready",
          status: "False",
          reason: "InconsistentConfig",
          message: `not published: ${problems.map((p) => p.message).join("; ")}`,
        };
  return entry(ref, ready, problems, {});
}

function childDir(meta: { namespace: string; name: string }): string {
  return `${meta.namespace}/${meta.name}`;
}

/** Previous files grouped by child directory ("<namespace>/<child>") → file name → content. */
function groupByDir(previous: ReadonlyMap<string, string> | undefined): Map<string, Record<string, string>> {
  const out = new Map<string, Record<string, string>>();
  for (const [path, text] of previous ?? []) {
    const cut = path.lastIndexOf("/");
    if (cut < 0) continue;
    const dir = path.slice(0, cut);
    const files = out.get(dir) ?? {};
    files[path.slice(cut + 1)] = text;
    out.set(dir, files);
  }
  return out;
}

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}
