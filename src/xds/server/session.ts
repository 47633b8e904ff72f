// One xDS stream (SotW or Delta, ADS or a per-type service): subscriptions, ACK/NACK tracking and
// the decision of what to send next. The session sends at most one response per type at a time
// and builds it from the *current* snapshot when it goes out, so a slow client is coalesced to
// the newest state instead of queueing stale ones, and its memory is bounded by the snapshot.
//
// What the client holds is tracked per type: `held` (as if it accepts everything sent), `acked`
// (as of its last ACK) and `kept` (what it may still hold beyond those: SotW EDS/RDS resources a
// later response left out, or an earlier stream's state after a reconnect). Responses are
// computed against `held`, which is why a NACKed version is never resent: only a change to the
// snapshot or the subscription differs. Make-before-break reads all three: a listener waits for
// clusters that are ACKed and not being removed; a cluster stays while anything may still use it.
import { status as GrpcStatus } from "@grpc/grpc-js";
import type { SnapshotCache } from "../cache/cache.js";
import type { CachedResource, Snapshot, TypeSnapshot } from "../cache/snapshot.js";
import { ENVOY_TYPE_ORDER } from "../resource/specs.js";
import { CLUSTER_TYPE_URL } from "../resource/type-urls.js";
import {
  clientKey,
  NO_IDENTITY,
  type HeldResource,
  type NodeIdentity,
  type StreamConfig,
  type XdsProtocol,
  type XdsStatus,
} from "../client-status.js";
import { type Logger } from "../../util/logger.js";
import type { Clock } from "./clock.js";
import type { TimerHandle } from "../../util/clock.js";
import type { Interner } from "./intern.js";
import type { Held, NodeMemory } from "./memory.js";
import type { Nonce, ShareKey, SharedResponse, SharedResponses } from "./shared.js";
import { Subscription, type SubscriptionChange } from "./subscription.js";
import {
  holdsAllOf,
  incrementalInSotw,
  isQuiet,
  markQuiet,
  NO_HELD,
  onlyAdded,
  planDelta,
  planSotw,
  retainedFor,
  rewarmEndpoints,
  stateOf,
  waitingFor,
  type Plan,
  type StreamTypes,
  type TypeState,
} from "./plan.js";
import {
  deltaResponse,
  sotwResponse,
  type DeltaRequest,
  type ErrorDetail,
  type SotwRequest,
  type WireResponse,
} from "./codec.js";

/** The transport of one stream as a session uses it (a grpc-js call, or a fake in tests). */
export interface StreamCall {
  /** Queues a response; false means "stop writing until drained()". */
  write(response: WireResponse): boolean;
  /** Ends the stream with status OK (the client reconnects, possibly to another replica). */
  end(): void;
  /** Ends the stream with an error status. */
  fail(code: GrpcStatus, details: string): void;
  readonly peer: string;
  /**
   * The client's verified identity (server/authz.ts identityKey); NO_IDENTITY when absent, as on a
   * port without client certificates, where every client shares it (then the node group and id
   * alone tell clients apart, as they always did there: whoever reaches a plaintext port is trusted).
   */
  readonly identity?: string;
}

/** What sessions share: the cache, the status recorder, time, ids and the group index. */
export interface SessionContext {
  readonly cache: SnapshotCache;
  readonly status: XdsStatus;
  readonly logger: Logger;
  readonly clock: Clock;
  /** A nonce never used before by this process (nor, with its random prefix, by another), numbered in order. */
  nonce(): Nonce;
  /** Responses the streams of the current round of pumps share. */
  readonly shared: SharedResponses;
  streamId(): string;
  /** Maximum stream age in ms (0 = unlimited) and its ± jitter fraction. */
  readonly maxStreamAgeMs: number;
  readonly maxStreamAgeJitter: number;
  /** Resource names a stream may subscribe to, over all its types (a wildcard counts none). */
  readonly maxNamesPerStream: number;
  join(session: Session): void;
  leave(session: Session): void;
  /** What nodes last acknowledged, across reconnects. */
  readonly memory: NodeMemory;
  /** One copy of the type URLs and node strings all streams repeat. */
  readonly strings: Interner;
}

const NOTHING_RETAINED: ReadonlyMap<string, CachedResource> = new Map();

/** One xDS stream's protocol state machine. */
export class Session {
  /** Server-assigned id, also the status key. */
  readonly id: string;
  /** One per type URL, in push order (CDS, EDS, LDS, RDS, then others): pump() walks it as it is. */
  #types: StreamTypes = [];
  #node: NodeIdentity | undefined;
  /** clientKey of the stream's identity and node: what the server remembers is filed under it. */
  #client: string | undefined;
  #blocked = false;
  #closed = false;
  #scheduled = false;
  /** Number of the newest nonce this stream sent (see shared.ts). */
  #lastNonceSeq = 0;
  #ageTimer: TimerHandle | undefined;
  /** When the stream identified its node (the "connected" line); its disconnect says how long ago. */
  #connectedAt = 0;

  constructor(
    private readonly ctx: SessionContext,
    private readonly call: StreamCall,
    /** SotW or Delta. */
    readonly protocol: XdsProtocol,
    /** "ads", or the per-type service label. */
    readonly service: string,
    /** The only type a per-type service carries; undefined on ADS. */
    readonly fixedTypeUrl: string | undefined,
  ) {
    this.id = ctx.streamId();
  }

  /** Node group (`node.cluster`) once the first request arrived. */
  get group(): string | undefined {
    return this.#node?.cluster;
  }

  /** The stream's node, once known. */
  get node(): NodeIdentity | undefined {
    return this.#node;
  }

  // ------------------------------------------------------------------ requests

  /** A state-of-the-world DiscoveryRequest arrived. */
  handleSotw(req: SotwRequest): void {
    if (this.#closed) return;
    const now = this.ctx.clock.now();
    if (!this.#identify(req.node, now)) return;
    const typeUrl = this.#typeUrl(req.typeUrl);
    if (typeUrl === undefined) return;
    const { state: ts, created } = this.#typeState(typeUrl, now);
    if (!created && ts.lastNonce !== "") {
      // Rule 5: only a request answering the latest response counts; others are superseded.
      if (req.responseNonce !== ts.lastNonce) {
        this.ctx.logger.debug(
          { stream: this.id, typeUrl, nonce: req.responseNonce, latest: ts.lastNonce },
          "ignoring SotW request with a stale nonce",
        );
        // Nothing is sent for it, but names it dropped are no longer held by the client: make-
        // before-break must not count on them.
        this.#forgetUnrequested(ts, req.resourceNames);
        return;
      }
      if (ts.inflight?.nonce === req.responseNonce) this.#settle(ts, req.errorDetail, now);
    }
    if (created) this.#recallSotw(ts, req.versionInfo);
    this.#subscribeSotw(ts, req.resourceNames, created, now);
    this.schedule();
  }

  /** A DeltaDiscoveryRequest arrived. */
  handleDelta(req: DeltaRequest): void {
    if (this.#closed) return;
    const now = this.ctx.clock.now();
    if (!this.#identify(req.node, now)) return;
    const typeUrl = this.#typeUrl(req.typeUrl);
    if (typeUrl === undefined) return;
    const { state: ts, created } = this.#typeState(typeUrl, now);
    if (req.responseNonce !== "" && ts.inflight?.nonce === req.responseNonce) {
      this.#settle(ts, req.errorDetail, now);
    } else if (req.responseNonce !== "" && req.responseNonce !== ts.lastNonce) {
      // Rule 5 (Delta): not an ACK of anything current, but its subscription changes still apply.
      this.ctx.logger.debug(
        { stream: this.id, typeUrl, nonce: req.responseNonce },
        "Delta request with a stale nonce: applying its subscription changes only",
      );
    }
    this.#subscribeDelta(ts, req, created, now);
    this.schedule();
  }

  /** The transport can take writes again. */
  drained(): void {
    this.#blocked = false;
    this.schedule();
  }

  /**
   * Pumps after the current I/O callbacks: requests that arrived together (a reconnecting
   * client's subscriptions) and snapshot changes set together are answered as one.
   */
  schedule(): void {
    if (this.#scheduled || this.#closed) return;
    this.#scheduled = true;
    this.ctx.clock.defer(() => {
      this.#scheduled = false;
      try {
        this.pump();
      } catch (e) {
        this.ctx.logger.error({ err: e, stream: this.id }, "xDS push failed");
        this.fail(GrpcStatus.INTERNAL, "internal error");
      }
    });
  }

  /** The client half-closed its side: finish ours cleanly. */
  clientEnded(): void {
    this.end("client closed the stream");
  }

  /** Ends the stream with status OK (stream age, server shutdown). */
  end(reason: string): void {
    if (this.#closed) return;
    if (this.#node === undefined)
      this.ctx.logger.debug({ stream: this.id, reason }, "ending xDS stream before its first request");
    this.#cleanup("info", reason);
    this.call.end();
  }

  /** Ends the stream with an error status. */
  fail(code: GrpcStatus, details: string): void {
    if (this.#closed) return;
    if (this.#node === undefined) this.ctx.logger.warn({ stream: this.id, code, details }, "failing xDS stream");
    this.#cleanup("warn", `${GrpcStatus[code]}: ${details}`, { code });
    this.call.fail(code, details);
  }

  /** The transport went away (`reason`: cancelled by the client, a transport error). */
  transportClosed(reason = "the connection closed"): void {
    this.#cleanup("info", reason);
  }

  /**
   * Forgets the stream. A stream that was "connected" (its node known) logs one "disconnected" line:
   * a proxy that went away is otherwise seen only as missing from the status page.
   */
  #cleanup(level: "info" | "warn", reason: string, extra: object = {}): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#ageTimer !== undefined) this.ctx.clock.clearTimeout(this.#ageTimer);
    this.ctx.leave(this);
    if (this.#node === undefined) return;
    const now = this.ctx.clock.now();
    this.ctx.status.recordClose(this.id, now);
    this.ctx.logger[level](
      { ...this.#described(this.#node), durationMs: now - this.#connectedAt, reason, ...extra },
      "xDS stream disconnected",
    );
  }

  /** What the connect and disconnect lines say of the stream. */
  #described(node: NodeIdentity): object {
    const identity = this.call.identity ?? NO_IDENTITY;
    return {
      stream: this.id,
      node: node.id,
      group: node.cluster,
      ...(identity === NO_IDENTITY ? {} : { identity }),
      kind: streamKind(this.protocol, this.service),
      peer: this.call.peer,
    };
  }

  // Rule 8: the stream is keyed on the node of its first request; later ones may omit it.
  #identify(declared: NodeIdentity | undefined, now: number): boolean {
    if (this.#node) return true;
    if (!declared || declared.id === "" || declared.cluster === "") {
      this.fail(
        GrpcStatus.INVALID_ARGUMENT,
        "the first request must carry node.id and node.cluster (the node group, <namespace>/<ProxyServer>)",
      );
      return false;
    }
    const { strings } = this.ctx;
    const node = {
      id: declared.id,
      cluster: strings.intern(declared.cluster),
      userAgent: strings.intern(declared.userAgent),
    };
    this.#node = node;
    const identity = this.call.identity ?? NO_IDENTITY;
    this.#client = clientKey(identity, node);
    this.ctx.status.recordOpen(
      {
        streamId: this.id,
        node,
        identity,
        peer: this.call.peer,
        protocol: this.protocol,
        service: this.service,
        connectedAt: now,
      },
      (typeUrl) => this.#config(typeUrl),
    );
    this.ctx.join(this);
    const { maxStreamAgeMs: age, maxStreamAgeJitter: jitter } = this.ctx;
    if (age > 0) {
      const delay = age * (1 + jitter * (2 * this.ctx.clock.random() - 1));
      this.#ageTimer = this.ctx.clock.setTimeout(
        () => {
          this.end("maximum stream age reached");
        },
        Math.max(1, delay),
      );
    }
    this.#connectedAt = now;
    this.ctx.logger.info(this.#described(node), "xDS stream connected");
    return true;
  }

  #typeUrl(requested: string): string | undefined {
    if (this.fixedTypeUrl !== undefined) {
      if (requested === "" || requested === this.fixedTypeUrl) return this.fixedTypeUrl;
      this.fail(
        GrpcStatus.INVALID_ARGUMENT,
        `type_url ${requested} is not served by this service (expected ${this.fixedTypeUrl})`,
      );
      return undefined;
    }
    if (requested === "") {
      this.fail(GrpcStatus.INVALID_ARGUMENT, "type_url is required on an aggregated (ADS) stream");
      return undefined;
    }
    return this.ctx.strings.intern(requested);
  }

  #typeState(typeUrl: string, now: number): { state: TypeState; created: boolean } {
    const existing = stateOf(this.#types, typeUrl);
    if (existing) return { state: existing, created: false };
    const state: TypeState = {
      typeUrl,
      subscription: Subscription.NONE,
      held: new Map(),
      acked: new Map(),
      kept: new Map(),
      inflight: undefined,
      lastNonce: "",
      lastVersion: "",
      firstPending: true,
      resyncOnly: false,
      subscriptionChanged: true,
      narrowed: false,
      subscribedAt: now,
      quietSnap: undefined,
      quietHeld: undefined,
      quietSub: undefined,
      addedSinceQuiet: undefined,
    };
    const rank = (t: string): number => {
      const i = ENVOY_TYPE_ORDER.indexOf(t);
      return i === -1 ? ENVOY_TYPE_ORDER.length : i;
    };
    // concat, then sort in place: an array exactly as long as the types.
    this.#types = this.#types
      .concat([state])
      .sort((a, b) => rank(a.typeUrl) - rank(b.typeUrl) || (a.typeUrl < b.typeUrl ? -1 : 1));
    return { state, created: true };
  }

  #legacyWildcardAllowed(typeUrl: string): boolean {
    return this.ctx.cache.typeSpec(typeUrl)?.legacyWildcard ?? true;
  }

  // Rules 3, 4, 6: the request answers the response in flight.
  #settle(ts: TypeState, error: ErrorDetail | undefined, now: number): void {
    const inflight = ts.inflight;
    if (!inflight) return;
    ts.inflight = undefined;
    if (error) {
      this.ctx.status.recordNack(
        this.id,
        inflight.push,
        { version: inflight.version, nonce: inflight.nonce, at: now, code: error.code, message: error.message },
        ts.typeUrl,
      );
    } else {
      ts.acked = inflight.next;
      // A full-state (LDS/CDS) ACK says exactly what the client holds.
      if (this.protocol === "sotw" && !incrementalInSotw(ts.typeUrl)) ts.kept = NO_HELD;
      if (this.#client !== undefined)
        this.ctx.memory.remember(this.#client, ts.typeUrl, inflight.version, inflight.next, "acked");
      this.ctx.status.recordAck(
        this.id,
        inflight.push,
        { version: inflight.version, nonce: inflight.nonce, at: now },
        ts.typeUrl,
      );
    }
  }

  /** A reconnecting SotW client holds what it last ACKed if it names that version. */
  #recallSotw(ts: TypeState, version: string): void {
    const client = this.#client;
    if (version === "" || client === undefined) return;
    const remembered = this.ctx.memory.recall(client, ts.typeUrl, version);
    if (remembered) {
      ts.held = remembered.held;
      ts.acked = remembered.held;
      // EDS/RDS: besides that response, it may keep anything earlier ones gave it.
      if (!incrementalInSotw(ts.typeUrl)) return;
    }
    // Otherwise it holds something we cannot pin down: assume anything it was recently given,
    // until an ACK on this stream says what it has.
    const kept = new Map<string, Held>();
    for (const r of this.ctx.memory.candidates(client, ts.typeUrl)) for (const [n, h] of r.held) kept.set(n, h);
    ts.kept = kept;
  }

  /** A SotW request that is not acted upon still tells which names the client no longer holds. */
  #forgetUnrequested(ts: TypeState, requested: readonly string[]): void {
    if (requested.length === 0 || requested.includes("*")) return;
    const names = new Set(requested);
    const keep = (m: ReadonlyMap<string, Held>): ReadonlyMap<string, Held> =>
      [...m.keys()].every((n) => names.has(n)) ? m : new Map([...m].filter(([n]) => names.has(n)));
    ts.held = keep(ts.held);
    ts.acked = keep(ts.acked);
    ts.kept = keep(ts.kept);
  }

  // Rule 9: empty first request = wildcard for LDS/CDS, "*" = explicit wildcard.
  #subscribeSotw(ts: TypeState, requested: readonly string[], created: boolean, now: number): void {
    const change = ts.subscription.sotw(requested, created, this.#legacyWildcardAllowed(ts.typeUrl));
    if (!this.#withinNameLimit(ts, change.subscription)) return;
    if (change.narrowed) ts.narrowed = true;
    ts.subscription = change.subscription;
    this.#noteSubscription(ts, change.added, now);
    this.#prune(ts);
  }

  // Rules 17, 19: Delta subscriptions change incrementally; a reconnect declares what it holds.
  #subscribeDelta(ts: TypeState, req: DeltaRequest, created: boolean, now: number): void {
    if (created) {
      const current =
        this.group === undefined ? undefined : this.ctx.cache.getSnapshot(this.group)?.types.get(ts.typeUrl);
      const held = new Map<string, Held>();
      const client = this.#client;
      for (const [name, version] of req.initialVersions) {
        const res = current?.resources.get(name);
        const known =
          res?.version === version
            ? res
            : client !== undefined
              ? this.ctx.memory.resource(client, ts.typeUrl, name, version)?.res
              : undefined;
        held.set(name, { version, res: known });
      }
      ts.held = held;
      ts.acked = held;
      ts.resyncOnly = req.initialVersions.size > 0;
    }
    const legacyAllowed = this.#legacyWildcardAllowed(ts.typeUrl);
    const before = ts.subscription;
    const change = ts.subscription.delta(req.subscribe, req.unsubscribe, created, legacyAllowed);
    if (!this.#withinNameLimit(ts, change.subscription)) return;
    ts.subscription = change.subscription;
    trackAdded(ts, before, change);
    this.#noteSubscription(ts, change.added, now);
    // Only a narrowing drops names: after one that only adds (and after an ACK), what the client
    // holds is still all subscribed, and walking it would make every request cost the whole set.
    if (created || change.narrowed) this.#prune(ts);
  }

  /** Ends the stream when `next` would take it past the names a stream may subscribe to. */
  #withinNameLimit(ts: TypeState, next: Subscription): boolean {
    const max = this.ctx.maxNamesPerStream;
    let names = next.names.size;
    for (const other of this.#types) if (other !== ts) names += other.subscription.names.size;
    if (names <= max) return true;
    this.fail(
      GrpcStatus.RESOURCE_EXHAUSTED,
      `this stream would subscribe to ${String(names)} resource names, more than the limit of ${String(max)} per stream (--xds-max-names-per-stream)`,
    );
    return false;
  }

  #noteSubscription(ts: TypeState, added: boolean, now: number): void {
    if (!added) return;
    ts.subscriptionChanged = true;
    ts.subscribedAt = now;
  }

  /** Forget what the client holds of names it no longer subscribes to. */
  #prune(ts: TypeState): void {
    const sub = ts.subscription;
    if (sub.wildcard) return;
    const keep = (m: ReadonlyMap<string, Held>): ReadonlyMap<string, Held> => {
      for (const name of m.keys()) {
        if (!sub.names.has(name)) return new Map([...m].filter(([n]) => sub.names.has(n)));
      }
      return m;
    };
    ts.held = keep(ts.held);
    ts.acked = keep(ts.acked);
    ts.kept = keep(ts.kept);
  }

  // ------------------------------------------------------------------ responses

  /** Sends whatever is due, in make-before-break order: CDS, EDS, LDS, RDS, then other types. */
  pump(): void {
    if (this.#stopped()) return;
    const group = this.group;
    if (group === undefined) return;
    const snapshot = this.ctx.cache.getSnapshot(group);
    if (!snapshot) return;
    for (const ts of this.#types) {
      if (this.#stopped()) return;
      if (ts.inflight) continue; // docs/xds-protocol.md#rule-21: one response per type in flight, built when it leaves
      const typeSnap = snapshot.types.get(ts.typeUrl);
      if (isQuiet(ts, typeSnap)) continue;
      // Only names added since the last quiet plan: nothing held is gone, so nothing is retained.
      const incremental = onlyAdded(ts, typeSnap) !== undefined;
      const retained = incremental ? NOTHING_RETAINED : this.#retained(ts, typeSnap);
      const plan = this.protocol === "sotw" ? planSotw(ts, typeSnap, retained) : planDelta(ts, typeSnap, retained);
      if (!plan) {
        markQuiet(ts, typeSnap, retained, incremental);
        continue;
      }
      // Make-before-break ordering only exists within one aggregated stream.
      const waiting = this.fixedTypeUrl === undefined ? waitingFor(ts, plan.changed, this.#types) : undefined;
      if (waiting !== undefined) {
        this.ctx.logger.debug(
          { stream: this.id, typeUrl: ts.typeUrl, waiting },
          "holding back until the client has what this needs",
        );
        continue;
      }
      this.#send(ts, plan, snapshot, typeSnap, retained.size === 0);
      markQuiet(ts, typeSnap, retained, incremental);
    }
  }

  /** Closed, or waiting for the transport to drain. */
  #stopped(): boolean {
    return this.#closed || this.#blocked;
  }

  #retained(ts: TypeState, typeSnap: TypeSnapshot | undefined): ReadonlyMap<string, CachedResource> {
    // Nothing held is gone when the stream holds the snapshot's shared map (the usual idle type).
    if (this.fixedTypeUrl !== undefined || holdsAllOf(ts, typeSnap)) return NOTHING_RETAINED;
    const client = this.#client;
    return retainedFor(ts, typeSnap?.resources ?? NOTHING_RETAINED, this.#types, (t) =>
      client !== undefined ? this.ctx.memory.candidates(client, t).map((r) => r.held) : [],
    );
  }

  #send(
    ts: TypeState,
    plan: Plan,
    snapshot: Snapshot,
    typeSnap: TypeSnapshot | undefined,
    nothingRetained: boolean,
  ): void {
    const { nonce: numbered, response } = this.#response(ts, plan, typeSnap, nothingRetained);
    this.#lastNonceSeq = numbered.seq;
    const nonce = numbered.text;
    const now = this.ctx.clock.now();
    const bySubscription = ts.firstPending || ts.subscriptionChanged;
    const changeAt = bySubscription ? ts.subscribedAt : (typeSnap?.changedAt ?? snapshot.createdAt);
    const push = this.ctx.status.recordSent(
      this.id,
      snapshot.group,
      ts.typeUrl,
      {
        version: plan.version,
        nonce,
        at: now,
        resources: plan.count,
        removed: plan.removed.length,
        bytes: response.byteLength,
      },
      bySubscription ? "subscription" : "change",
      changeAt,
    );
    ts.inflight = { nonce, version: plan.version, next: plan.next, push };
    if (this.#client !== undefined) this.ctx.memory.remember(this.#client, ts.typeUrl, plan.version, plan.next, "sent");
    // On ADS the EDS answer follows on this stream, right after the updated clusters it warms.
    if (ts.typeUrl === CLUSTER_TYPE_URL && this.fixedTypeUrl === undefined) {
      const previous = ts.held;
      rewarmEndpoints(
        plan.changed.filter((c) => previous.get(c.name)?.res !== undefined),
        this.#types,
      );
    }
    ts.held = plan.next;
    if (this.protocol === "sotw" && incrementalInSotw(ts.typeUrl)) {
      // Usually everything kept is in the new response too: then kept is that (shared) map.
      let kept: ReadonlyMap<string, Held> = plan.next;
      if (![...ts.kept.keys()].every((n) => plan.next.has(n))) {
        const merged = new Map(ts.kept);
        for (const [n, h] of plan.next) merged.set(n, h);
        kept = merged;
      }
      ts.kept = kept;
      if (this.#client !== undefined) this.ctx.memory.remember(this.#client, ts.typeUrl, plan.version, kept, "kept");
    }
    ts.lastNonce = nonce;
    ts.lastVersion = plan.version;
    ts.firstPending = false;
    ts.subscriptionChanged = false;
    // Rule 21: respect transport backpressure; nothing more is written until drained().
    if (!this.call.write(response)) this.#blocked = true;
  }

  /** The plan as a response: the one another stream of this round made for the same inputs, or a new one. */
  #response(ts: TypeState, plan: Plan, typeSnap: TypeSnapshot | undefined, nothingRetained: boolean): SharedResponse {
    const key: ShareKey | undefined =
      typeSnap !== undefined && nothingRetained
        ? {
            typeSnap,
            protocol: this.protocol,
            subscription: ts.subscription,
            held: this.protocol === "delta" ? ts.held : undefined,
          }
        : undefined;
    const found = key === undefined ? undefined : this.ctx.shared.find(key, this.#lastNonceSeq);
    if (found !== undefined) return found;
    const nonce = this.ctx.nonce();
    const response =
      this.protocol === "sotw"
        ? sotwResponse(plan.version, ts.typeUrl, nonce.text, plan.entries)
        : deltaResponse(plan.version, ts.typeUrl, nonce.text, plan.entries, plan.removed);
    const made = { nonce, response };
    if (key !== undefined) this.ctx.shared.add(key, made);
    return made;
  }

  #config(typeUrl: string): StreamConfig | undefined {
    const ts = stateOf(this.#types, typeUrl);
    if (!ts) return undefined;
    // By name: a large Delta subscription's held map (held-map.ts) iterates in no particular order.
    const list = (m: ReadonlyMap<string, Held>): HeldResource[] =>
      [...m]
        .filter(([, h]) => h.version !== "")
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([name, h]) => ({ name, version: h.version, resource: h.res?.resource }));
    return { acked: list(ts.acked), sent: list(ts.held) };
  }
}

/**
 * Keeps TypeState.addedSinceQuiet: the names Delta requests added since the type was quiet, as
 * long as they only added names (no unsubscription, no wildcard change).
 */
function trackAdded(ts: TypeState, before: Subscription, change: SubscriptionChange): void {
  if (change.subscription === before) return;
  const names = change.addedNames;
  if (names === undefined || change.narrowed || change.subscription.wildcard !== before.wildcard) {
    ts.addedSinceQuiet = undefined;
  } else if (ts.quietSub === before) {
    ts.addedSinceQuiet = new Set(names);
  } else if (ts.addedSinceQuiet !== undefined) {
    for (const n of names) ts.addedSinceQuiet.add(n);
  }
}

/** "ADS", "Delta ADS", "LDS", "Delta CDS": the stream as an Envoy bootstrap names its config source. */
export function streamKind(protocol: XdsProtocol, service: string): string {
  return `${protocol === "delta" ? "Delta " : ""}${service.toUpperCase()}`;
}
