// One reconcile pass of the leader: server-side-apply the desired objects whose content changed,
// prune what is no longer desired, keep the attachment finalizer until an attachment's
// cross-namespace objects are gone, and write status. Every decision compares content hashes with
// what is observed (and with what this process applied but has not observed yet), so a converged
// cluster costs zero writes however often this runs.
import { ensureClientSecret, type OperatorCa } from "../../pki/store.js";
import { API_VERSION, GROUP, VERSION, type InfraClusterAttachment } from "../../api/schema.js";
import type { Outputs } from "../../pipeline/outputs.js";
import type { Clock } from "../../util/clock.js";
import { changedKeys, patchMap, REMOVED, type Removed } from "../../util/overlay-map.js";
import type { Observed } from "../../watchers/kube/observed.js";
import { apiPrefix } from "../../watchers/kube/resources.js";
import { statusCode, type KubeObject, type KubeRest } from "../../kube/rest.js";
import { applyBody, desiredHash, holdsManagedFields, observedHash } from "./applied.js";
import { MissingBindings } from "./bindings.js";
import type { DataPlaneView } from "../status/dataplane.js";
import type { DnsServingView } from "../status/dns-serving.js";
import {
  DesiredMemo,
  desiredInfrasByKey,
  desiredState,
  type DesiredInfra,
  type DesiredState,
} from "../desired/index.js";
import {
  ATTACHMENT_FINALIZER,
  ATTACHMENTS_ANNOTATION,
  CLEANUP_BY_FINALIZER,
  CLEANUP_LABEL,
  COMPONENT_LABEL,
  contentHash,
  INFRA_LABEL,
  MANAGED_KINDS,
  type DesiredObject,
} from "../desired/objects.js";
import { MANAGED_BY, MANAGED_BY_LABEL } from "../../api/labels.js";
import type { OperatorSettings } from "../desired/settings.js";
import { grantsKeaScc, KEA_SCC_NAME, keaSccBindingCommand } from "../desired/scc.js";
import type { Problem } from "../../model/types.js";
import type { OperatorMetrics } from "../process/metrics.js";
import { EventRecorder } from "./events.js";
import { cacheBehind } from "./unobserved.js";
import { statusBody, statusUpdates, type StatusUpdate } from "../status/object-status.js";
import { statusEntriesIn, statusMemory, statusScope } from "./status-scope.js";
import { nextTurn, Turns } from "../process/turns.js";
import {
  DesiredKeys,
  KIND_OF_RESOURCE,
  keyOf,
  passScope,
  RESOURCE_OF_KIND,
  type PassMemory,
  type PassScope,
} from "./pass-scope.js";
import type { Logger } from "../../util/logger.js";

/** Thrown (and swallowed by the caller) when leadership was lost mid-pass: the pass stops writing. */
export class NotLeaderError extends Error {}

/** Options of Reconciler. */
export interface ReconcilerOptions {
  readonly rest: KubeRest;
  readonly settings: OperatorSettings;
  readonly dataPlane: DataPlaneView;
  /** CoreDNS serving the current zones (src/operator/status/dns-serving.ts); undefined: the ConfigMap's content is enough. */
  readonly dnsServing?: DnsServingView;
  readonly clock: Clock;
  readonly logger: Pick<Logger, "debug" | "info" | "warn">;
  readonly metrics: OperatorMetrics;
  /** Checked before every write. */
  readonly isLeader: () => boolean;
  /**
   * A status identical to one this process wrote is not rewritten within this period even if the
   * observed status still differs: protects against an API server that alters what we write
   * (default 5 min).
   */
  readonly statusCooldownMs?: number;
  /**
   * The operator's CA (mTLS on xDS): each ProxyServer and DHCPServer gets its client certificate
   * Secret, issued and rotated here. Undefined: xDS in plaintext, no Secrets.
   */
  readonly pki?: OperatorCa;
  /** An attachment whose finalizer must stay although its cross-namespace objects are gone (apps-ingress cleanup pending). */
  readonly holdsFinalizer?: (attachment: KubeObject) => boolean;
  /**
   * A pass walks every object at least this long after the last pass that did (default 30 s, the
   * resync period); the passes between look only at what changed (src/operator/writing/pass-scope.ts).
   * The full walk is the safety net for what no watch event tells: a client certificate due for
   * rotation, an object changed while this replica did not lead. 0: every pass is full.
   */
  readonly fullPassMs?: number;
  /** Status entries computed per turn of the event loop (default STATUS_SLICE). */
  readonly statusSlice?: number;
}

/** What one pass did. */
export interface ReconcileResult {
  readonly applied: number;
  readonly deleted: number;
  readonly finalizers: number;
  readonly statuses: number;
  readonly desired: DesiredState;
}

/** A write this process made: its content hash and the observed resourceVersion it was decided on. */
interface AppliedRecord {
  readonly hash: string;
  readonly seenRv: string | undefined;
  readonly at: number;
  /** False when the record only notes that the observed object already matched (nothing was written). */
  readonly wrote?: boolean;
  /** The resourceVersion our apply produced: the object as we left it, whatever the server normalized. */
  readonly resultRv?: string;
  /** For the DNS ConfigMaps: the applied data (SOA serials continue from it until it is observed). */
  readonly data?: Readonly<Record<string, string>>;
  /** For a status: what was written (compared with until the watch delivers it). */
  readonly status?: Readonly<Record<string, unknown>>;
}

/**
 * The records by object key, noting the ConfigMaps whose DNS files moved: dnsFiles() looks again at
 * those and at the ConfigMaps the watch changed, nothing else (a status write, the most frequent,
 * moves none).
 */
class AppliedRecords extends Map<string, AppliedRecord> {
  /** "<namespace>/<name>" of the ConfigMaps whose record with data changed since dnsFiles() last looked. */
  readonly dnsMoved = new Set<string>();

  override set(key: string, value: AppliedRecord): this {
    if (value.data !== undefined || super.get(key)?.data !== undefined) this.dnsMoved.add(objectName(key));
    return super.set(key, value);
  }

  override delete(key: string): boolean {
    if (super.get(key)?.data !== undefined) this.dnsMoved.add(objectName(key));
    return super.delete(key);
  }
}

/** "<Kind>/<namespace>/<name>" → "<namespace>/<name>". */
const objectName = (key: string): string => key.slice(key.indexOf("/") + 1);

/** Our last status write while the cache is older than it (cacheBehind). */
function unobservedWrite(mine: AppliedRecord | undefined, cachedRv: string | undefined) {
  if (mine?.status === undefined || mine.wrote === false) return undefined;
  return cacheBehind(cachedRv, mine) ? mine.status : undefined;
}

/** One oooi_object_ready series as the last pass set it. */
interface ReadySeries {
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** How long a SubjectAccessReview's answer on a Kea ServiceAccount's SCC is reused ("report" mode). */
export const KEA_SCC_REVIEW_TTL_MS = 60_000;

const NO_PROBLEMS: readonly Problem[] = [];
const NO_FILES: ReadonlyMap<string, Readonly<Record<string, string>>> = new Map();
const NO_DATA: Readonly<Record<string, string>> = Object.freeze({});

/** Objects checked between two turns of the event loop. */
const STEPS = 64;
/** ReconcilerOptions.statusSlice's default. */
const STATUS_SLICE = 256;

/** ReconcilerOptions.fullPassMs's default: the pass loop's resync period. */
const FULL_PASS_MS = 30_000;

const isTransport = (e: unknown): boolean => statusCode(e) === undefined && !(e instanceof NotLeaderError);

/** Applies desired state, prunes, handles finalizers and writes status. */
export class Reconciler {
  readonly #o: ReconcilerOptions;
  readonly #applied = new AppliedRecords();
  /** dnsFiles()'s last answer and what it was read from. */
  #dnsFiles:
    | {
        readonly configmaps: ReadonlyMap<string, KubeObject>;
        readonly files: ReadonlyMap<string, Readonly<Record<string, string>>>;
      }
    | undefined;
  /** Unchanged Infras keep their desired objects from pass to pass (and so their hashes). */
  readonly #desired = new DesiredMemo();
  /** Live object → the desired object it was last found to hold every field of (the check is a deep walk). */
  readonly #holds = new WeakMap<KubeObject, DesiredObject>();

  readonly #events: EventRecorder;
  /** The oooi_object_ready series set by the last pass, to drop those whose object is gone. */
  readonly #readySeries = new Map<string, ReadySeries>();
  /** "<namespace>/<infra>" → whether its Kea ServiceAccount may use the SCC, and when that was asked. */
  readonly #keaScc = new Map<string, { readonly allowed: boolean; readonly at: number }>();
  /** What the last pass that finished without a failure saw; undefined: the next pass walks everything. */
  #memory: PassMemory | undefined;
  /** When the last full pass started. */
  #fullAt = -Infinity;
  /** Every desired object's key, kept from pass to pass. */
  readonly #desiredKeys = new DesiredKeys();
  /** Terminating attachments that still held the finalizer after the last pass: looked at on every pass. */
  #releasing = new Set<string>();

  constructor(o: ReconcilerOptions) {
    this.#o = o;
    this.#events = new EventRecorder(o);
  }

  /**
   * Each DNS ConfigMap's data ("<namespace>/<name>" → key → content) as observed, or as this process
   * last applied it while that write is not observed yet — SOA serials then always continue from
   * what the cluster holds, across restarts and leader changes (src/operator/inputs/dns-previous.ts).
   * Asked on every snapshot: the same ConfigMaps (a snapshot's view is immutable) and the same
   * records give the same answer, so a watch event of another kind walks no ConfigMap.
   */
  dnsFiles(observed: Observed): ReadonlyMap<string, Readonly<Record<string, string>>> {
    const configmaps = observed.raw.configmaps;
    const memo = this.#dnsFiles;
    const moved = this.#applied.dnsMoved;
    if (memo?.configmaps === configmaps && moved.size === 0) return memo.files;
    // Only the ConfigMaps that changed since, or whose records did, are looked at again (views of
    // one watch share their base, so finding them costs the change); the answer is the last one
    // patched at them, so what compares it with the one before (ClusterHolds) costs the change too.
    const keys =
      memo === undefined ? configmaps.keys() : new Set([...changedKeys(memo.configmaps, configmaps), ...moved]);
    const before = memo?.files ?? NO_FILES;
    const changes = new Map<string, Readonly<Record<string, string>> | Removed>();
    for (const key of keys) {
      const cm = configmaps.get(key);
      if (cm?.metadata?.labels?.[COMPONENT_LABEL] !== "dns") {
        if (before.has(key)) changes.set(key, REMOVED);
        continue;
      }
      const mine = this.#applied.get(keyOf("ConfigMap", cm.metadata.namespace, cm.metadata.name ?? ""));
      const data =
        mine?.data !== undefined && mine.seenRv === cm.metadata.resourceVersion && observedHash(cm) !== mine.hash
          ? mine.data
          : ((cm["data"] ?? NO_DATA) as Record<string, string>);
      if (before.get(key) !== data) changes.set(key, data);
    }
    moved.clear();
    const files = patchMap(before, changes);
    this.#dnsFiles = { configmaps, files };
    return files;
  }

  /** One pass over a snapshot and its rendering. Throws when some write failed (the caller retries). */
  async reconcile(observed: Observed, outputs: Outputs): Promise<ReconcileResult> {
    // A turn between the synchronous stretches (and every STEPS objects within them): a watch event
    // read meanwhile is published first, so it never waits for the pass (src/operator/process/turns.ts).
    const turns = new Turns(STEPS);
    const desired = desiredState(
      {
        state: outputs.state,
        outputs,
        settings: this.#o.settings,
        networkAttachments: observed.networkAttachments,
      },
      this.#desired,
    );
    const failures: unknown[] = [];
    const counts = { applied: 0, deleted: 0, finalizers: 0, statuses: 0 };
    const bindings = new MissingBindings(this.#o.settings.namespace);
    /** What writing found wrong on an Infra (Kea's SCC): shown in its status with the model's problems. */
    const found: Problem[] = [];
    const attempt = async (
      op: string,
      kind: string,
      write: () => Promise<boolean>,
      target?: { readonly namespace?: string | undefined; readonly name: string },
    ): Promise<void> => {
      // One refusal per namespace and role is enough: the rest waits for the binding (and the retry).
      if (target !== undefined && bindings.blocked(kind, target.name, target.namespace)) return;
      try {
        if (await write()) {
          this.#o.metrics.inc("oooi_writes_total", { op, kind });
          if (op === "apply") counts.applied++;
          else if (op === "delete") counts.deleted++;
          else if (op === "finalizer") counts.finalizers++;
          else counts.statuses++;
        }
      } catch (e) {
        if (e instanceof NotLeaderError || isTransport(e)) throw e;
        this.#o.metrics.inc("oooi_write_errors_total", { op, kind });
        if (statusCode(e) === 403 && target !== undefined && bindings.refused(kind, target.name, target.namespace))
          this.#o.logger.warn({ op, kind, ...target }, "write refused: the namespace lacks its RoleBinding");
        else this.#o.logger.warn({ op, kind, err: (e as Error).message }, "write failed; retrying later");
        failures.push(e);
      }
    };

    // What this pass looks at: everything, or what changed since the last pass (pass-scope.ts).
    const now = this.#o.clock.now();
    const memory = this.#memory;
    // Set again only by a pass that finishes without a failure: the pass after any other walks everything.
    this.#memory = undefined;
    const held = heldAttachments(observed, desired);
    const full = memory === undefined || now - this.#fullAt >= (this.#o.fullPassMs ?? FULL_PASS_MS);
    if (full) this.#fullAt = now;
    const desiredKeys = this.#desiredKeys;
    const moved = desiredKeys.update(desired);
    const scope: PassScope | undefined = full ? undefined : passScope(memory, observed.raw, moved, desiredKeys, held);
    this.#o.metrics.inc("oooi_reconcile_scope_total", { scope: full ? "full" : "changed" });

    await nextTurn();

    // 1. Finalizers first, so no attachment can vanish before its cleanup is possible.
    const attachments = observed.raw.attachments;
    for (const key of scope === undefined ? attachments.keys() : scope.attachments) {
      const a = attachments.get(key);
      if (a === undefined) continue;
      if (a.metadata?.deletionTimestamp !== undefined || (a.metadata?.finalizers ?? []).includes(ATTACHMENT_FINALIZER))
        continue;
      await attempt("finalizer", "InfraClusterAttachment", () =>
        this.#setFinalizers(a, [...(a.metadata?.finalizers ?? []), ATTACHMENT_FINALIZER]),
      );
    }

    // 2. Each Infra's namespaced objects, in apply order. Those already in place cost no await:
    // a pass over a converged cluster runs through them at once.
    // A pass limited to what changed finds its few Infras by key, in the same order.
    const lookedAt = scope === undefined ? desired.infras : scopedInfras(desired, scope.infras);
    for (const infra of lookedAt) {
      for (const o of infra.objects) {
        if (turns.due()) await nextTurn();
        if (this.#settled(o, observed)) continue;
        await attempt("apply", o.kind, () => this.#apply(o, observed, found), o.metadata);
      }
    }

    // 2a. OpenShift without the right to bind: whether each Kea ServiceAccount may use the SCC.
    if (this.#o.settings.keaScc === "report") await this.#reportUnboundKea(desired, found);

    // 2b. Client certificates of the data-plane children, owned by the Infra like the children
    // (each a read of its Secret: on a full pass, or for an Infra something changed for).
    const pki = this.#o.pki;
    if (pki !== undefined) {
      for (const infra of lookedAt) {
        for (const o of infra.objects) {
          const namespace = o.metadata.namespace;
          if ((o.kind !== "ProxyServer" && o.kind !== "DHCPServer") || namespace === undefined) continue;
          const owner = o.metadata.ownerReferences?.[0];
          const child = { namespace, name: o.metadata.name, ...(owner === undefined ? {} : { owner }) };
          await attempt("apply", "Secret", () => {
            this.#guard();
            return ensureClientSecret(this.#o.rest, pki, child, this.#o.clock.now());
          });
        }
      }
    }

    // 3. Cross-namespace objects, except those still needed by an Infra that lost its topology.
    const listsHeld = (o: KubeObject | undefined): boolean => attachmentsOf(o).some((a) => held.has(a));
    if (scope === undefined || scope.crossNamespace) {
      for (const o of desired.crossNamespace) {
        const live = this.#live(o.kind, o.metadata.namespace, o.metadata.name, observed);
        const wanted = new Set(attachmentsOf(o));
        if (attachmentsOf(live).some((a) => held.has(a) && !wanted.has(a)) || this.#settled(o, observed)) continue;
        await attempt("apply", o.kind, () => this.#apply(o, observed, found), o.metadata);
      }
    }

    // 4. Prune: per Infra with a desired state, and the finalizer-cleaned objects.
    const infraKeys = desiredInfrasByKey(desired);
    const candidates =
      scope?.prune ??
      [...KIND_OF_RESOURCE.keys()].flatMap((resource) =>
        [...observed.raw[resource].keys()].map((key) => [resource, key] as const),
      );
    for (const [resource, key] of candidates) {
      if (turns.due()) await nextTurn();
      const live = observed.raw[resource].get(key);
      const k = KIND_OF_RESOURCE.get(resource);
      const m = live?.metadata ?? {};
      if (live === undefined || k === undefined) continue;
      const labels = m.labels ?? {};
      if (labels[MANAGED_BY_LABEL] !== MANAGED_BY || m.deletionTimestamp !== undefined) continue;
      if (desiredKeys.has(keyOf(k.kind, m.namespace, m.name ?? ""))) continue;
      const cleanup = labels[CLEANUP_LABEL] === CLEANUP_BY_FINALIZER;
      const infra = labels[INFRA_LABEL];
      const prunable = cleanup
        ? !listsHeld(live)
        : infra !== undefined && infraKeys.has(`${m.namespace ?? ""}/${infra}`);
      if (!prunable) continue;
      await attempt(
        "delete",
        k.kind,
        () => this.#delete(k.apiVersion, k.plural, k.kind, m.namespace ?? "", m.name ?? ""),
        { namespace: m.namespace, name: m.name ?? "" },
      );
    }

    // 5. Release terminating attachments whose cross-namespace objects no longer name them: those
    // that changed, and those still waiting (their cleanup may have ended without an event of theirs).
    const releasing = new Set<string>();
    let named: Set<string> | undefined;
    for (const key of scope === undefined ? attachments.keys() : new Set([...scope.attachments, ...this.#releasing])) {
      const a = attachments.get(key);
      const m = a?.metadata ?? {};
      if (a === undefined || m.deletionTimestamp === undefined || !(m.finalizers ?? []).includes(ATTACHMENT_FINALIZER))
        continue;
      releasing.add(key);
      if (named === undefined) {
        named = new Set<string>();
        for (const np of observed.raw.networkpolicies.values()) for (const n of attachmentsOf(np)) named.add(n);
      }
      if (named.has(`${m.namespace ?? ""}/${m.name ?? ""}`) || this.#o.holdsFinalizer?.(a) === true) continue;
      await attempt("finalizer", "InfraClusterAttachment", () =>
        this.#setFinalizers(
          a,
          (m.finalizers ?? []).filter((f) => f !== ATTACHMENT_FINALIZER),
        ),
      );
    }
    this.#releasing = releasing;

    // 6. Status: every object's on a full pass, else those something changed for (status-scope.ts).
    await nextTurn();
    const dataPlane = this.#o.dataPlane.moment?.() ?? this.#o.dataPlane;
    const problems = found.length === 0 ? desired.problems : [...desired.problems, ...found];
    const statusNow =
      dataPlane.stamp === undefined || (this.#o.dnsServing !== undefined && this.#o.dnsServing.epoch === undefined)
        ? undefined
        : statusMemory(
            {
              renderings: outputs.byInfra,
              topologies: outputs.model.topologies,
              problems: [outputs.model.problems, desired.problems, found.length === 0 ? NO_PROBLEMS : found],
              stamp: (group) => dataPlane.stamp?.(group),
              dnsEpoch: this.#o.dnsServing?.epoch?.(),
            },
            memory?.status,
          );
    const statusIn =
      scope === undefined || memory?.status === undefined || statusNow === undefined || bindings.list().length > 0
        ? undefined
        : statusScope(memory.status, memory.raw, statusNow, observed.raw, scope.infras);
    const entries =
      statusIn === undefined || memory?.status === undefined
        ? outputs.status
        : statusEntriesIn(statusIn, outputs, memory.status, observed.raw);
    // A slice of the entries per turn: a full pass's every status (tens of thousands at 3,000
    // Infras) is not one stretch that a watch event waits behind. Each entry's status is its own.
    const updates: StatusUpdate[] = [];
    const withFound = found.length === 0 ? desired : { ...desired, problems };
    const slice = Math.max(1, this.#o.statusSlice ?? STATUS_SLICE);
    for (let i = 0; i < entries.length; i += slice) {
      if (i > 0) await nextTurn();
      updates.push(
        ...statusUpdates({
          observed,
          outputs,
          desired: withFound,
          dataPlane,
          ...(this.#o.dnsServing === undefined ? {} : { dnsServing: this.#o.dnsServing }),
          missingBindings: bindings.list(),
          now,
          unobservedStatus: (k) =>
            unobservedWrite(this.#applied.get(`status:${keyOf(k.kind, k.namespace, k.name)}`), k.resourceVersion),
          entries: entries.slice(i, i + slice),
        }),
      );
    }
    this.#setReadyGauge(updates, statusIn?.objects);
    await nextTurn();
    for (const u of updates) {
      const key = `status:${keyOf(u.kind, u.namespace, u.name)}`;
      const mine = this.#applied.get(key);
      if (u.upToDate) {
        // Up to date with our own unobserved write: keep comparing with it until the watch catches up.
        // (The hash of a record that wrote nothing is never compared: see `pending`.)
        if (
          unobservedWrite(mine, u.resourceVersion) === undefined &&
          (mine?.wrote !== false || mine.seenRv !== u.resourceVersion)
        )
          this.#applied.set(key, { hash: "", seenRv: u.resourceVersion, at: now, wrote: false });
        continue;
      }
      const hash = contentHash(withoutTransitionTimes(u.status));
      // Skip only a status we wrote ourselves and have not seen come back yet (or, within the
      // cooldown, one the server keeps normalizing). A status we merely saw up to date that has
      // since changed under us (e.g. an older write of ours arriving late) is written again at once.
      const pending =
        mine?.hash === hash &&
        mine.wrote !== false &&
        (mine.seenRv === u.resourceVersion || now - mine.at < (this.#o.statusCooldownMs ?? 300_000));
      if (pending) continue;
      await attempt("status", u.kind, async () => {
        this.#guard();
        const result = await this.#o.rest.request({
          method: "PATCH",
          path: `${apiPrefix(GROUP, VERSION)}/namespaces/${encodeURIComponent(u.namespace)}/${u.plural}/${encodeURIComponent(u.name)}/status`,
          query: { fieldManager: this.#o.settings.fieldManager, force: "true" },
          contentType: "application/apply-patch+yaml",
          body: statusBody(u),
        });
        const resultRv = result.metadata?.resourceVersion;
        this.#applied.set(key, {
          hash,
          seenRv: u.resourceVersion,
          at: now,
          status: u.status,
          ...(resultRv === undefined ? {} : { resultRv }),
        });
        // Announced once per status change: the status written is what the next pass compares with.
        for (const e of u.events) {
          await this.#events.record(
            { apiVersion: API_VERSION, kind: u.kind, namespace: u.namespace, name: u.name, uid: u.uid },
            e,
          );
        }
        return true;
      });
    }

    if (failures.length > 0) throw new AggregateError(failures, `${failures.length} write(s) failed`);
    this.#memory = {
      raw: observed.raw,
      held,
      unsettled: new Set(found.map((p) => `${p.object.namespace}/${p.object.name}`)),
      status: statusNow,
    };
    return { ...counts, desired };
  }

  /**
   * oooi_object_ready per object with a status, from the Ready condition this pass computed: for
   * every object, or (`changed` given) for those it computed, dropping those of `changed` that have
   * none any more (deleted). A child still in the cluster that its Infra no longer renders keeps its
   * series until the next full pass drops it. Only series that are new or changed are set:
   * prom-client hashes the labels of every set.
   */
  #setReadyGauge(updates: readonly StatusUpdate[], changed?: ReadonlySet<string>): void {
    const seen = new Set<string>();
    for (const u of updates) {
      const key = keyOf(u.kind, u.namespace, u.name);
      seen.add(key);
      const ready = (u.status["conditions"] as { type?: string; status?: string }[] | undefined)?.find(
        (c) => c.type === "Ready",
      );
      const value = ready?.status === "True" ? 1 : 0;
      const was = this.#readySeries.get(key);
      if (was?.value === value) continue;
      const labels = was?.labels ?? { kind: u.kind, namespace: u.namespace, name: u.name };
      this.#o.metrics.set("oooi_object_ready", value, labels);
      this.#readySeries.set(key, { labels, value });
    }
    for (const key of changed ?? [...this.#readySeries.keys()]) {
      const was = this.#readySeries.get(key);
      if (was === undefined || seen.has(key)) continue;
      this.#o.metrics.remove("oooi_object_ready", was.labels);
      this.#readySeries.delete(key);
    }
  }

  #guard(): void {
    if (!this.#o.isLeader()) throw new NotLeaderError("not the leader");
  }

  #live(kind: string, namespace: string | undefined, name: string, observed: Observed): KubeObject | undefined {
    const resource = RESOURCE_OF_KIND[kind];
    return resource === undefined ? undefined : observed.raw[resource].get(`${namespace ?? ""}/${name}`);
  }

  /**
   * Nothing to apply: the observed object holds the content (unchanged since our own apply left it,
   * or still holding every field we manage), our unobserved last write does, or it is being deleted
   * (foreground deletion of its owner, say: it is created again once gone). A hand edit that kept
   * the hash annotation is drift, applied again (at most once per edit).
   */
  #settled(o: DesiredObject, observed: Observed): boolean {
    const key = keyOf(o.kind, o.metadata.namespace, o.metadata.name);
    const hash = desiredHash(o);
    const live = this.#live(o.kind, o.metadata.namespace, o.metadata.name, observed);
    const rv = live?.metadata?.resourceVersion;
    const mine = this.#applied.get(key);
    if (live !== undefined && observedHash(live) === hash && (rv === mine?.resultRv || this.#holdsFields(o, live))) {
      if (mine?.hash !== hash || mine.seenRv !== rv)
        this.#applied.set(key, { ...(mine?.hash === hash ? mine : {}), hash, seenRv: rv, at: this.#o.clock.now() });
      return true;
    }
    return (mine?.hash === hash && mine.seenRv === rv) || live?.metadata?.deletionTimestamp !== undefined;
  }

  #holdsFields(o: DesiredObject, live: KubeObject): boolean {
    if (this.#holds.get(live) === o) return true;
    const holds = holdsManagedFields(o, live);
    if (holds) this.#holds.set(live, o);
    return holds;
  }

  /**
   * Server-side apply of an object that is not #settled. A kind the operator does not watch (Kea's
   * SCC RoleBinding) is read first: one it did not label is someone else's and never written —
   * if it already grants what ours would, nothing is missing; else the Infra reports the conflict.
   */
  async #apply(o: DesiredObject, observed: Observed, foreign: Problem[]): Promise<boolean> {
    const key = keyOf(o.kind, o.metadata.namespace, o.metadata.name);
    const hash = desiredHash(o);
    const live = this.#live(o.kind, o.metadata.namespace, o.metadata.name, observed);
    const rv = live?.metadata?.resourceVersion;
    const now = this.#o.clock.now();
    if (RESOURCE_OF_KIND[o.kind] === undefined && (await this.#someoneElses(o, foreign))) {
      return false;
    }
    const dnsData =
      o.kind === "ConfigMap" && o.metadata.labels[COMPONENT_LABEL] === "dns"
        ? (o["data"] as Record<string, string>)
        : undefined;
    this.#guard();
    const kind = MANAGED_KINDS.find((k) => k.kind === o.kind && k.apiVersion === o.apiVersion);
    if (kind === undefined) throw new Error(`${o.apiVersion} ${o.kind} is not a managed kind`);
    const result = await this.#o.rest.request({
      method: "PATCH",
      path: objectPath(o.apiVersion, kind.plural, o.metadata.namespace, o.metadata.name),
      query: { fieldManager: this.#o.settings.fieldManager, force: "true" },
      contentType: "application/apply-patch+yaml",
      body: applyBody(o, hash),
    });
    const resultRv = result.metadata?.resourceVersion;
    this.#applied.set(key, {
      hash,
      seenRv: rv,
      at: now,
      ...(resultRv === undefined ? {} : { resultRv }),
      ...(dnsData === undefined ? {} : { data: dnsData }),
    });
    return true;
  }

  /**
   * The Infras whose Kea ServiceAccount may not use the SCC, asked of the API server (a
   * SubjectAccessReview, as the operator does for its HTTP port): however the platform engineer
   * granted it, a binding of any name or a group's, the answer is the admission's.
   */
  async #reportUnboundKea(desired: DesiredState, problems: Problem[]): Promise<void> {
    const now = this.#o.clock.now();
    const seen = new Set<string>();
    for (const infra of desired.infras) {
      if (!infra.objects.some((o) => o.kind === "DHCPServer")) continue;
      const { namespace, name } = infra.infra;
      const key = `${namespace}/${name}`;
      seen.add(key);
      let answer = this.#keaScc.get(key);
      if (answer === undefined || now - answer.at >= KEA_SCC_REVIEW_TTL_MS) {
        try {
          const review = await this.#o.rest.request<{ status?: { allowed?: boolean } }>({
            method: "POST",
            path: "/apis/authorization.k8s.io/v1/subjectaccessreviews",
            body: {
              apiVersion: "authorization.k8s.io/v1",
              kind: "SubjectAccessReview",
              spec: {
                user: `system:serviceaccount:${namespace}:${name}-dhcp`,
                groups: ["system:serviceaccounts", `system:serviceaccounts:${namespace}`, "system:authenticated"],
                resourceAttributes: {
                  verb: "use",
                  group: "security.openshift.io",
                  resource: "securitycontextconstraints",
                  name: KEA_SCC_NAME,
                  namespace,
                },
              },
            },
          });
          answer = { allowed: review.status?.allowed === true, at: now };
          this.#keaScc.set(key, answer);
        } catch (e) {
          if (isTransport(e)) throw e;
          this.#o.logger.warn({ infra: key, err: (e as Error).message }, "cannot ask whether Kea may use its SCC");
          continue;
        }
      }
      if (!answer.allowed)
        problems.push({
          object: { kind: "Infra", namespace, name },
          field: "",
          reason: "KeaSccBindingNeeded",
          severity: "pending",
          message: `on OpenShift Kea's ServiceAccount ${name}-dhcp may not use the SCC ${KEA_SCC_NAME}, so its pods are not admitted; this operator may not bind it (deploy/openshift/ lets it): ${keaSccBindingCommand(namespace, name)}`,
        });
    }
    for (const key of this.#keaScc.keys()) if (!seen.has(key)) this.#keaScc.delete(key);
  }

  /** The unwatched object `o` exists without the operator's label (see #apply). */
  async #someoneElses(o: DesiredObject, foreign: Problem[]): Promise<boolean> {
    const { namespace = "", name } = o.metadata;
    const kind = MANAGED_KINDS.find((k) => k.kind === o.kind && k.apiVersion === o.apiVersion);
    if (kind === undefined) return false;
    let live: KubeObject & {
      roleRef?: { kind?: string; name?: string };
      subjects?: { kind?: string; name?: string; namespace?: string }[];
    };
    try {
      live = await this.#o.rest.request({
        method: "GET",
        path: objectPath(o.apiVersion, kind.plural, namespace, name),
      });
    } catch (e) {
      if (statusCode(e) === 404) return false;
      throw e;
    }
    if (live.metadata?.labels?.[MANAGED_BY_LABEL] === MANAGED_BY) return false;
    const infra = o.metadata.ownerReferences?.[0]?.name ?? "";
    if (o.kind === "RoleBinding" && grantsKeaScc(live, namespace, infra)) {
      // Theirs does the job: remembered as settled until this process restarts.
      this.#applied.set(keyOf(o.kind, namespace, name), {
        hash: desiredHash(o),
        seenRv: undefined,
        at: this.#o.clock.now(),
      });
      this.#o.logger.info(
        { kind: o.kind, namespace, name },
        "left alone: not ours, and already grants what ours would",
      );
      return true;
    }
    foreign.push({
      object: { kind: "Infra", namespace, name: infra },
      field: "",
      reason: "KeaSccBindingConflict",
      severity: "error",
      message: `${o.kind} ${namespace}/${name} exists and was not written by oooi; it is left as it is, but does not grant ServiceAccount ${infra}-dhcp the ClusterRole of Kea's SCC: delete or rename it so the operator can create its own`,
    });
    this.#o.logger.warn({ kind: o.kind, namespace, name }, "not ours: left alone, reported on the Infra");
    return true;
  }

  async #delete(apiVersion: string, plural: string, kind: string, namespace: string, name: string): Promise<boolean> {
    this.#guard();
    try {
      await this.#o.rest.request({
        method: "DELETE",
        path: objectPath(apiVersion, plural, namespace, name),
        query: { propagationPolicy: "Background" },
      });
    } catch (e) {
      if (statusCode(e) === 404) return false;
      throw e;
    }
    this.#applied.delete(keyOf(kind, namespace, name));
    this.#o.logger.info({ kind, namespace, name }, "pruned");
    return true;
  }

  /** Merge patch of metadata.finalizers, guarded by resourceVersion (409 when it moved meanwhile). */
  async #setFinalizers(a: KubeObject, finalizers: string[]): Promise<boolean> {
    this.#guard();
    const m = a.metadata ?? {};
    await this.#o.rest.request({
      method: "PATCH",
      path: objectPath(API_VERSION, "infraclusterattachments", m.namespace, m.name ?? ""),
      contentType: "application/merge-patch+json",
      body: {
        metadata: { finalizers: finalizers.length === 0 ? null : finalizers, resourceVersion: m.resourceVersion },
      },
    });
    this.#o.logger.info(
      { attachment: `${m.namespace ?? ""}/${m.name ?? ""}`, finalizers },
      finalizers.includes(ATTACHMENT_FINALIZER) ? "finalizer added" : "cleanup done; finalizer removed",
    );
    return true;
  }
}

function objectPath(apiVersion: string, plural: string, namespace: string | undefined, name: string): string {
  const slash = apiVersion.indexOf("/");
  const prefix =
    slash < 0 ? apiPrefix("", apiVersion) : apiPrefix(apiVersion.slice(0, slash), apiVersion.slice(slash + 1));
  return `${prefix}${namespace === undefined ? "" : `/namespaces/${encodeURIComponent(namespace)}`}/${plural}/${encodeURIComponent(name)}`;
}

/** "<namespace>/<name>" attachments an object is kept for (its ATTACHMENTS_ANNOTATION). */
function attachmentsOf(o: { metadata?: { annotations?: Readonly<Record<string, string>> } } | undefined): string[] {
  const v = o?.metadata?.annotations?.[ATTACHMENTS_ANNOTATION];
  return v === undefined || v === "" ? [] : v.split(",");
}

/**
 * Live attachments whose Infra exists but has no desired state right now (invalid, not observed
 * yet): their cross-namespace objects are kept as they are until the Infra is servable again.
 */
function heldAttachments(observed: Observed, desired: DesiredState): Set<string> {
  const servable = desiredInfrasByKey(desired);
  // The watch keys its Infras "<namespace>/<name>", as servable does.
  const existing = observed.raw.infras;
  const held = new Set<string>();
  // Every Infra servable (the usual case): no attachment is held, and none is looked at.
  if (sameKeys(existing, servable)) return held;
  for (const a of observed.raw.attachments.values()) {
    if (a.metadata?.deletionTimestamp !== undefined) continue;
    const infraName = ((a["spec"] ?? {}) as Partial<InfraClusterAttachment["spec"]>).infraRef?.name;
    const infra = `${a.metadata?.namespace ?? ""}/${infraName ?? ""}`;
    if (existing.has(infra) && !servable.has(infra))
      held.add(`${a.metadata?.namespace ?? ""}/${a.metadata?.name ?? ""}`);
  }
  return held;
}

/** Two maps with the same keys (equal counts, and every key of one in the other): no key built per entry. */
function sameKeys(a: ReadonlyMap<string, unknown>, b: ReadonlyMap<string, unknown>): boolean {
  if (a.size !== b.size) return false;
  for (const k of a.keys()) if (!b.has(k)) return false;
  return true;
}

/** The desired Infras among `keys` ("<namespace>/<name>"), in the desired state's order. */
function scopedInfras(desired: DesiredState, keys: ReadonlySet<string>): DesiredInfra[] {
  const byKey = desiredInfrasByKey(desired);
  // The desired state's order is its keys' order.
  return [...keys].sort().flatMap((key) => byKey.get(key) ?? []);
}

function withoutTransitionTimes(status: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const conditions = status["conditions"];
  if (!Array.isArray(conditions)) return { ...status };
  return {
    ...status,
    conditions: (conditions as Record<string, unknown>[]).map((c) =>
      Object.fromEntries(Object.entries(c).filter(([k]) => k !== "lastTransitionTime")),
    ),
  };
}
