// An Envoy-like ADS client: what Envoy does on an ADS stream, minus the proxying. Wildcard CDS and
// LDS; EDS subscribed for the EDS clusters it received and RDS for the route tables its listeners
// name (sent before the ACK of the response that introduced them, as Envoy does); clusters warm
// only once their endpoints arrived; ACK or NACK through a validation hook; Delta reconnects with
// initial_resource_versions. An order checker records every make-before-break violation: a
// listener or route table using a cluster that is not warm, or a cluster removed while in use.
// The current configuration is kept so tests can select filter chains like Envoy would.
import { EventEmitter } from "node:events";
import { Client, credentials, Metadata, type ChannelCredentials, type ClientDuplexStream } from "@grpc/grpc-js";
import { referencesOf } from "../../../src/xds/cache/refs.js";
import {
  CLUSTER_TYPE_URL, ENDPOINT_TYPE_URL, LISTENER_TYPE_URL, ROUTE_TYPE_URL,
} from "../../../src/xds/protos.js";
import { selectFilterChain, type ConnectionInfo, type SelectedChain } from "../../../src/xds/select.js";
import { METHODS } from "./raw.js";
import {
  decodeDeltaResponse, decodeSotwResponse, encodeDeltaRequest, encodeSotwRequest,
  type DecodedResource, type DeltaRequestInit, type DeltaResponse, type SotwRequestInit, type SotwResponse,
} from "./wire.js";

/** Returns an error text to NACK a response, or undefined to accept it. */
export type Validator = (typeUrl: string, resources: readonly DecodedResource[]) => string | undefined;

/** Options of an EnvoyLikeClient. */
export interface EnvoyLikeOptions {
  /** "127.0.0.1:PORT" of the ADS server. */
  readonly address: string;
  readonly node: { readonly id: string; readonly cluster: string };
  readonly protocol?: "sotw" | "delta";
  readonly validate?: Validator;
  readonly credentials?: ChannelCredentials;
}

/** A resource the client holds. */
export interface HeldResource {
  readonly version: string;
  readonly json: Record<string, unknown>;
}

/** One response as the client processed it. */
export interface ResponseRecord {
  readonly typeUrl: string;
  readonly nonce: string;
  /** version_info (SotW) or system_version_info (Delta). */
  readonly version: string;
  readonly names: readonly string[];
  readonly removed: readonly string[];
  readonly accepted: boolean;
  readonly bytes: number;
  /** Any bytes per resource name, as received. */
  readonly values: ReadonlyMap<string, Uint8Array>;
}

/** What a connection reaching the proxy would hit. */
export interface RouteResult {
  readonly listener: string;
  readonly chain: SelectedChain;
  readonly endpoints: readonly string[];
}

let barrierCount = 0;

const TYPES = [CLUSTER_TYPE_URL, ENDPOINT_TYPE_URL, LISTENER_TYPE_URL, ROUTE_TYPE_URL] as const;
type EnvoyType = (typeof TYPES)[number];

interface TypeState {
  /** Accepted resources by name. */
  readonly resources: Map<string, HeldResource>;
  /** Accepted version_info / system_version_info. */
  version: string;
  nonce: string;
  /** Explicit subscription (EDS/RDS); CDS/LDS are wildcard. */
  names: Set<string>;
  requested: boolean;
}

/** The events an EnvoyLikeClient emits. */
export interface EnvoyLikeEvents {
  response: [ResponseRecord];
  /** The stream ended (server closed it or the transport failed). */
  disconnected: [{ code: number; details: string }];
}

/** An Envoy stand-in speaking ADS (SotW or Delta) to an xDS server. */
export class EnvoyLikeClient {
  /** "response" after every processed response, "disconnected" when the stream ends. */
  readonly events = new EventEmitter<EnvoyLikeEvents>();
  /** Every make-before-break or protocol violation seen, in order. */
  readonly violations: string[] = [];
  /** Every response processed on any stream of this client, in order. */
  readonly log: ResponseRecord[] = [];
  readonly protocol: "sotw" | "delta";
  readonly #types = new Map<EnvoyType, TypeState>();
  #client: Client | undefined;
  #call: ClientDuplexStream<SotwRequestInit | DeltaRequestInit, SotwResponse | DeltaResponse> | undefined;
  #sentNode = false;
  #streams = 0;
  readonly #barriers = new Map<string, () => void>();
  validate: Validator | undefined;

  constructor(readonly options: EnvoyLikeOptions) {
    this.protocol = options.protocol ?? "sotw";
    this.validate = options.validate;
    for (const t of TYPES) this.#types.set(t, { resources: new Map(), version: "", nonce: "", names: new Set(), requested: false });
  }

  // ------------------------------------------------------------------ state

  /** Listeners by name (proto3 JSON). */
  get listeners(): ReadonlyMap<string, HeldResource> { return this.#state(LISTENER_TYPE_URL).resources; }
  /** Clusters by name. */
  get clusters(): ReadonlyMap<string, HeldResource> { return this.#state(CLUSTER_TYPE_URL).resources; }
  /** ClusterLoadAssignments by cluster name. */
  get endpoints(): ReadonlyMap<string, HeldResource> { return this.#state(ENDPOINT_TYPE_URL).resources; }
  /** Route configurations by name. */
  get routes(): ReadonlyMap<string, HeldResource> { return this.#state(ROUTE_TYPE_URL).resources; }

  /** Accepted version of a type ("" before any). */
  version(typeUrl: string): string {
    return this.#types.get(typeUrl as EnvoyType)?.version ?? "";
  }

  /** Whether the stream is open. */
  get connected(): boolean {
    return this.#call !== undefined;
  }

  /** Streams opened so far. */
  get streamCount(): number {
    return this.#streams;
  }

  /** A cluster is warm once it exists and, for EDS, its endpoints arrived. */
  isWarm(cluster: string): boolean {
    const c = this.clusters.get(cluster);
    if (!c) return false;
    const e = referencesOf(CLUSTER_TYPE_URL, c.json).endpoints;
    return e === undefined || this.endpoints.has(e);
  }

  /** The filter chain Envoy would pick on listener `name` for `conn`. */
  selectFilterChain(name: string, conn: ConnectionInfo): SelectedChain | undefined {
    const l = this.listeners.get(name);
    return l && selectFilterChain(l.json, conn);
  }

  /** Where a connection goes: the listener bound to its port, the chain, the cluster's endpoints. */
  route(conn: ConnectionInfo): RouteResult | undefined {
    for (const [name, l] of this.listeners) {
      const port = (l.json["address"] as { socket_address?: { port_value?: number } } | undefined)?.socket_address?.port_value;
      if (port !== conn.destinationPort) continue;
      const chain = selectFilterChain(l.json, conn);
      if (!chain) return undefined;
      const cla = chain.cluster === undefined ? undefined : this.endpoints.get(chain.cluster)?.json;
      const endpoints = ((cla?.["endpoints"] ?? []) as { lb_endpoints?: { endpoint?: { address?: { socket_address?: { address: string; port_value: number } } } }[] }[])
        .flatMap((g) => g.lb_endpoints ?? [])
        .map((e) => e.endpoint?.address?.socket_address)
        .filter((a) => a !== undefined)
        .map((a) => `${a.address}:${a.port_value}`);
      return { listener: name, chain, endpoints };
    }
    return undefined;
  }

  /** Resolves when `predicate` holds (checked after every response); rejects after `timeoutMs`. */
  async waitFor(predicate: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
    if (predicate()) return;
    await new Promise<void>((resolve, reject) => {
      const check = (): void => {
        if (!predicate()) return;
        cleanup();
        resolve();
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`${this.options.node.id}: timed out waiting for ${what}`));
      }, timeoutMs);
      const cleanup = (): void => {
        clearTimeout(timer);
        this.events.off("response", check);
      };
      this.events.on("response", check);
    });
  }

  /**
   * Whether the client holds exactly `expected` (type URL → name → resource version): same names,
   * and for Delta the same per-resource versions (SotW carries only version_info, checked apart).
   */
  holds(expected: ReadonlyMap<string, ReadonlyMap<string, string>>): boolean {
    for (const [t, resources] of expected) {
      const st = this.#types.get(t as EnvoyType);
      if (!st || st.resources.size !== resources.size) return false;
      for (const [name, version] of resources) {
        const h = st.resources.get(name);
        if (!h || (this.protocol === "delta" && h.version !== version)) return false;
      }
    }
    return true;
  }

  /** Resolves once every type's accepted version equals `versions` (type URL → version). */
  async waitForVersions(versions: ReadonlyMap<string, string>, timeoutMs = 10_000): Promise<void> {
    await this.waitFor(() => [...versions].every(([t, v]) => this.version(t) === v), `versions ${JSON.stringify([...versions.values()])}`, timeoutMs);
  }

  // ------------------------------------------------------------------ stream

  /** Opens the ADS stream and subscribes like Envoy: CDS and LDS wildcard, plus what it already uses. */
  connect(): void {
    if (this.#call) return;
    this.#client ??= new Client(this.options.address, this.options.credentials ?? credentials.createInsecure(), { "grpc.use_local_subchannel_pool": 1 });
    const delta = this.protocol === "delta";
    const call = this.#client.makeBidiStreamRequest<SotwRequestInit | DeltaRequestInit, SotwResponse | DeltaResponse>(
      delta ? METHODS.adsDelta : METHODS.adsSotw,
      (r) => (delta ? encodeDeltaRequest(r) : encodeSotwRequest(r)),
      (b) => (delta ? decodeDeltaResponse(b) : decodeSotwResponse(b)),
      new Metadata(),
    );
    this.#call = call;
    this.#streams += 1;
    this.#sentNode = false;
    call.on("data", (res: SotwResponse | DeltaResponse) => {
      if (this.#call !== call) return;
      const barrier = this.#barriers.get(res.typeUrl);
      if (barrier) {
        this.#barriers.delete(res.typeUrl);
        barrier();
        return;
      }
      if (res.kind === "sotw") this.#onSotw(res);
      else this.#onDelta(res);
    });
    call.on("error", () => { /* reported through "status" */ });
    call.on("status", (s: { code: number; details: string }) => {
      if (this.#call !== call) return;
      this.#call = undefined;
      this.events.emit("disconnected", { code: s.code, details: s.details });
    });
    for (const t of TYPES) {
      const st = this.#state(t);
      st.nonce = "";
      st.requested = false;
    }
    // Envoy asks for clusters first, then listeners; EDS/RDS names it already holds are re-subscribed.
    for (const t of TYPES) {
      if (t === CLUSTER_TYPE_URL || t === LISTENER_TYPE_URL || this.#state(t).names.size > 0) this.#request(t, undefined);
    }
  }

  /**
   * Resolves once the server has answered everything this stream asked so far: a request for a
   * fresh type always gets a response, written after anything earlier requests caused.
   */
  async barrier(timeoutMs = 10_000): Promise<void> {
    const typeUrl = `type.googleapis.com/oooi.test.EnvoyLikeBarrier${String(++barrierCount)}`;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => { reject(new Error(`${this.options.node.id}: barrier timed out`)); }, timeoutMs);
      this.#barriers.set(typeUrl, () => { clearTimeout(timer); resolve(); });
      this.#write(this.protocol === "sotw" ? { type_url: typeUrl } : { type_url: typeUrl });
    });
  }

  /** Cancels the stream (the client keeps its configuration, as Envoy does). */
  disconnect(): void {
    const call = this.#call;
    this.#call = undefined;
    call?.cancel();
  }

  /** Cancels the stream and closes the channel. */
  close(): void {
    this.disconnect();
    this.#client?.close();
    this.#client = undefined;
  }

  #state(t: string): TypeState {
    const s = this.#types.get(t as EnvoyType);
    if (!s) throw new Error(`not an Envoy type: ${t}`);
    return s;
  }

  #write(req: SotwRequestInit | DeltaRequestInit): void {
    if (!this.#sentNode) {
      req.node = { id: this.options.node.id, cluster: this.options.node.cluster, user_agent_name: "envoy-like" };
      this.#sentNode = true;
    }
    this.#call?.write(req);
  }

  /** Sends the type's current subscription, or an ACK/NACK of `nonce`. */
  #request(t: EnvoyType, ack: { nonce: string; error?: string } | undefined, diff?: { subscribe: string[]; unsubscribe: string[] }): void {
    const st = this.#state(t);
    const wildcard = t === CLUSTER_TYPE_URL || t === LISTENER_TYPE_URL;
    if (this.protocol === "sotw") {
      const req: SotwRequestInit = {
        type_url: t,
        version_info: st.version,
        resource_names: wildcard ? [] : [...st.names].sort(),
        response_nonce: ack?.nonce ?? st.nonce,
      };
      if (ack?.error !== undefined) req.error_detail = { code: 3, message: ack.error };
      this.#write(req);
    } else {
      const req: DeltaRequestInit = { type_url: t };
      if (!st.requested) {
        req.resource_names_subscribe = wildcard ? [] : [...st.names].sort();
        req.initial_resource_versions = Object.fromEntries([...st.resources].map(([n, r]) => [n, r.version]));
      } else if (diff) {
        req.resource_names_subscribe = diff.subscribe;
        req.resource_names_unsubscribe = diff.unsubscribe;
      }
      if (ack) req.response_nonce = ack.nonce;
      if (ack?.error !== undefined) req.error_detail = { code: 3, message: ack.error };
      this.#write(req);
    }
    st.requested = true;
  }

  // ------------------------------------------------------------------ responses

  #onSotw(res: SotwResponse): void {
    const t = res.typeUrl as EnvoyType;
    const st = this.#state(t);
    st.nonce = res.nonce;
    const incoming = new Map<string, HeldResource>();
    const dup = this.#duplicates(res.resources);
    for (const r of res.resources) incoming.set(r.name, { version: res.versionInfo, json: r.json });
    const fullState = t === CLUSTER_TYPE_URL || t === LISTENER_TYPE_URL;
    const removed = fullState ? [...st.resources.keys()].filter((n) => !incoming.has(n)) : [];
    const error = dup ?? this.validate?.(t, res.resources);
    this.#finish(t, res, error, incoming, removed, res.versionInfo);
  }

  #onDelta(res: DeltaResponse): void {
    const t = res.typeUrl as EnvoyType;
    const st = this.#state(t);
    st.nonce = res.nonce;
    const incoming = new Map<string, HeldResource>();
    const dup = this.#duplicates(res.resources);
    for (const r of res.resources) {
      if (r.name !== (t === ENDPOINT_TYPE_URL ? r.json["cluster_name"] : r.json["name"])) {
        this.violations.push(`Delta resource entry "${r.name}" carries a resource named differently`);
      }
      incoming.set(r.name, { version: r.version, json: r.json });
    }
    const removed = res.removed.filter((n) => st.resources.has(n));
    const error = dup ?? this.validate?.(t, res.resources);
    this.#finish(t, res, error, incoming, removed, res.systemVersionInfo);
  }

  #duplicates(resources: readonly DecodedResource[]): string | undefined {
    const seen = new Set<string>();
    for (const r of resources) {
      if (seen.has(r.name)) {
        this.violations.push(`resource "${r.name}" appears twice in one response`);
        return `duplicate resource name "${r.name}"`;
      }
      seen.add(r.name);
    }
    return undefined;
  }

  #finish(
    t: EnvoyType, res: SotwResponse | DeltaResponse, error: string | undefined,
    incoming: ReadonlyMap<string, HeldResource>, removed: readonly string[], version: string,
  ): void {
    const st = this.#state(t);
    if (error === undefined) {
      this.#checkOrder(t, incoming, removed);
      for (const n of removed) st.resources.delete(n);
      // Like Envoy, keep only named resources it still subscribes to (a response may cross an unsubscription).
      const named = t === ENDPOINT_TYPE_URL || t === ROUTE_TYPE_URL;
      for (const [n, r] of incoming) if (!named || st.names.has(n)) st.resources.set(n, r);
      st.version = version;
      // Envoy subscribes to what the new resources need before acknowledging them.
      if (t === CLUSTER_TYPE_URL) this.#resubscribe(ENDPOINT_TYPE_URL, this.#edsNames());
      if (t === LISTENER_TYPE_URL) this.#resubscribe(ROUTE_TYPE_URL, this.#rdsNames());
    }
    const record: ResponseRecord = {
      typeUrl: t, nonce: res.nonce, version, names: [...incoming.keys()],
      removed: res.kind === "delta" ? res.removed : removed, accepted: error === undefined, bytes: res.bytes,
      values: new Map(res.resources.map((r) => [r.name, r.value])),
    };
    this.log.push(record);
    this.#request(t, error === undefined ? { nonce: res.nonce } : { nonce: res.nonce, error });
    this.events.emit("response", record);
  }

  #edsNames(): Set<string> {
    const out = new Set<string>();
    for (const c of this.clusters.values()) {
      const e = referencesOf(CLUSTER_TYPE_URL, c.json).endpoints;
      if (e !== undefined) out.add(e);
    }
    return out;
  }

  #rdsNames(): Set<string> {
    const out = new Set<string>();
    for (const l of this.listeners.values()) for (const r of referencesOf(LISTENER_TYPE_URL, l.json).routes) out.add(r);
    return out;
  }

  #resubscribe(t: EnvoyType, names: Set<string>): void {
    const st = this.#state(t);
    const subscribe = [...names].filter((n) => !st.names.has(n)).sort();
    const unsubscribe = [...st.names].filter((n) => !names.has(n)).sort();
    if (subscribe.length === 0 && unsubscribe.length === 0 && st.requested) return;
    if (subscribe.length === 0 && unsubscribe.length === 0 && names.size === 0) return;
    st.names = names;
    // Envoy drops what it no longer subscribes to.
    for (const n of unsubscribe) st.resources.delete(n);
    this.#request(t, undefined, { subscribe, unsubscribe });
  }

  /** Make-before-break, as Envoy would experience it. */
  #checkOrder(t: EnvoyType, incoming: ReadonlyMap<string, HeldResource>, removed: readonly string[]): void {
    if (t === LISTENER_TYPE_URL || t === ROUTE_TYPE_URL) {
      for (const [name, r] of incoming) {
        for (const c of referencesOf(t, r.json).clusters) {
          if (!this.isWarm(c)) this.violations.push(`${t === LISTENER_TYPE_URL ? "listener" : "route configuration"} "${name}" arrived using cluster "${c}", which is not warm`);
        }
      }
    }
    if (t === CLUSTER_TYPE_URL) {
      for (const c of removed) {
        for (const [kind, map, type] of [["listener", this.listeners, LISTENER_TYPE_URL], ["route configuration", this.routes, ROUTE_TYPE_URL]] as const) {
          for (const [name, r] of map) {
            if (referencesOf(type, r.json).clusters.includes(c)) this.violations.push(`cluster "${c}" removed while ${kind} "${name}" uses it`);
          }
        }
      }
    }
  }
}
