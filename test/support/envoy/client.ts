// An Envoy-like ADS client: what Envoy does on an ADS stream, minus the proxying, written from
// Envoy's documentation and importing nothing of the server it tests. Wildcard CDS and LDS; EDS
// subscribed for the EDS clusters it received and RDS for the route tables its listeners name (sent
// before the ACK of the response that introduced them, as Envoy does); warming as the xDS protocol
// describes it (https://www.envoyproxy.io/docs/envoy/latest/api-docs/xds_protocol#resource-warming):
// a new or changed EDS cluster serves only once an EDS response for it arrives after it (until
// then the previous version, if any, keeps serving), a listener once its route configurations are
// there. NACKs on its own what Envoy rejects (rules.ts), and through a test's validation hook;
// Delta reconnects with initial_resource_versions. An order checker records every make-before-break
// violation: a listener or route table using a cluster that is not warm, or a cluster removed
// while in use. The configuration is kept so tests can select filter chains like Envoy would, and
// open connections on them, which listener updates drain as Envoy documents it (drain.ts).
import { EventEmitter } from "node:events";
import { Client, credentials, Metadata, type ChannelCredentials, type ClientDuplexStream } from "@grpc/grpc-js";
import { TYPE_URLS } from "./protos.js";
import { ENVOY_CHANNEL_OPTIONS, METHODS } from "./raw.js";
import { edsServiceName, listenerClusters, rdsNames, routeClusters } from "./refs.js";
import { canonical, keptChains } from "./drain.js";
import { at, list, text } from "./json.js";
import { envoyRejects } from "./rules.js";
import { selectChain, type ConnectionInfo, type SelectedChain } from "./select.js";
import {
  decodeDeltaResponse,
  decodeSotwResponse,
  encodeDeltaRequest,
  encodeSotwRequest,
  type DecodedResource,
  type DeltaRequestInit,
  type DeltaResponse,
  type SotwRequestInit,
  type SotwResponse,
} from "./wire.js";

export type { ConnectionInfo, SelectedChain } from "./select.js";

const CLUSTER_TYPE_URL = TYPE_URLS.cluster;
const ENDPOINT_TYPE_URL = TYPE_URLS.endpoint;
const LISTENER_TYPE_URL = TYPE_URLS.listener;
const ROUTE_TYPE_URL = TYPE_URLS.route;

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

/** A downstream connection the proxy accepted (openConnection): its listener and the chain it runs on. */
export interface OpenConnection {
  readonly id: number;
  readonly conn: ConnectionInfo;
  readonly listener: string;
  readonly chain: string;
  /** The chain's canonical JSON when the connection was accepted: what a later update is compared with. */
  readonly config: string;
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
  /** Cluster name → the version that serves. */
  readonly #serving = new Map<string, HeldResource>();
  /** Cluster name → a newer EDS version waiting for its ClusterLoadAssignment. */
  readonly #warming = new Map<string, HeldResource>();
  validate: Validator | undefined;
  readonly #open = new Map<number, OpenConnection>();
  #connections = 0;
  /** Connections drained by listener updates (drain.ts), in the order drained. */
  readonly drained: OpenConnection[] = [];

  constructor(readonly options: EnvoyLikeOptions) {
    this.protocol = options.protocol ?? "sotw";
    this.validate = options.validate;
    for (const t of TYPES)
      this.#types.set(t, { resources: new Map(), version: "", nonce: "", names: new Set(), requested: false });
  }

  // ------------------------------------------------------------------ state

  /** Listeners by name (proto3 JSON). */
  get listeners(): ReadonlyMap<string, HeldResource> {
    return this.#state(LISTENER_TYPE_URL).resources;
  }
  /** Clusters by name. */
  get clusters(): ReadonlyMap<string, HeldResource> {
    return this.#state(CLUSTER_TYPE_URL).resources;
  }
  /** ClusterLoadAssignments by cluster name. */
  get endpoints(): ReadonlyMap<string, HeldResource> {
    return this.#state(ENDPOINT_TYPE_URL).resources;
  }
  /** Route configurations by name. */
  get routes(): ReadonlyMap<string, HeldResource> {
    return this.#state(ROUTE_TYPE_URL).resources;
  }

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

  /** A cluster is warm once some version of it serves: for EDS, one whose endpoints arrived after it. */
  isWarm(cluster: string): boolean {
    return this.#serving.has(cluster);
  }

  /** Clusters whose newest version still waits for its EDS response (an older one may be serving). */
  get warmingClusters(): readonly string[] {
    return [...this.#warming.keys()].sort();
  }

  /** The version of a cluster that serves traffic (the previous one while a change warms). */
  servingCluster(name: string): HeldResource | undefined {
    return this.#serving.get(name);
  }

  /** A listener is warm once every route configuration it loads over RDS is here. */
  isListenerWarm(name: string): boolean {
    const l = this.listeners.get(name);
    return l !== undefined && rdsNames(l.json).every((r) => this.routes.has(r));
  }

  /** The filter chain Envoy would pick on listener `name` for `conn`. */
  selectFilterChain(name: string, conn: ConnectionInfo): SelectedChain | undefined {
    const l = this.listeners.get(name);
    return l && selectChain(l.json, conn);
  }

  /** Where a connection goes: the listener bound to its port, the chain, the cluster's endpoints. */
  route(conn: ConnectionInfo): RouteResult | undefined {
    for (const [name, l] of this.listeners) {
      const port = (l.json["address"] as { socket_address?: { port_value?: number } } | undefined)?.socket_address
        ?.port_value;
      if (port !== conn.destinationPort) continue;
      const chain = selectChain(l.json, conn);
      if (!chain) return undefined;
      const cluster = chain.cluster === undefined ? undefined : this.clusters.get(chain.cluster)?.json;
      // A LOGICAL_DNS cluster carries its one endpoint (a hostname) itself; an EDS one gets it over EDS.
      const cla =
        chain.cluster === undefined
          ? undefined
          : cluster !== undefined && edsServiceName(cluster) === undefined
            ? (cluster["load_assignment"] as Record<string, unknown> | undefined)
            : this.endpoints.get(chain.cluster)?.json;
      const endpoints = (
        (cla?.["endpoints"] ?? []) as {
          lb_endpoints?: { endpoint?: { address?: { socket_address?: { address: string; port_value: number } } } }[];
        }[]
      )
        .flatMap((g) => g.lb_endpoints ?? [])
        .map((e) => e.endpoint?.address?.socket_address)
        .filter((a) => a !== undefined)
        .map((a) => `${a.address}:${a.port_value}`);
      return { listener: name, chain, endpoints };
    }
    return undefined;
  }

  /**
   * Accepts a downstream connection as Envoy would: the listener bound to its port picks a chain;
   * the connection stays open on that chain until a listener update drains it. Undefined when
   * no listener or chain takes it (Envoy closes it).
   */
  openConnection(conn: ConnectionInfo): OpenConnection | undefined {
    for (const [name, l] of this.listeners) {
      if (at(l.json, "address", "socket_address", "port_value") !== conn.destinationPort) continue;
      const picked = selectChain(l.json, conn);
      if (picked === undefined) return undefined;
      const config = canonical(
        list(l.json, "filter_chains").find((c) => text(c, "name") === picked.name) ??
          at(l.json, "default_filter_chain"),
      );
      const open: OpenConnection = { id: ++this.#connections, conn, listener: name, chain: picked.name, config };
      this.#open.set(open.id, open);
      return open;
    }
    return undefined;
  }

  /** Connections accepted and not drained, in the order accepted. */
  get openConnections(): readonly OpenConnection[] {
    return [...this.#open.values()];
  }

  /** Drains the open connections an accepted LDS update ends (drain.ts). */
  #drain(incoming: ReadonlyMap<string, HeldResource>, removed: readonly string[]): void {
    const kept = new Map<string, ReadonlySet<string>>();
    for (const open of this.#open.values()) {
      const before = this.listeners.get(open.listener)?.json;
      const after = removed.includes(open.listener) ? undefined : (incoming.get(open.listener)?.json ?? before);
      if (before === undefined || after === before) continue;
      let chains = kept.get(open.listener);
      if (chains === undefined) kept.set(open.listener, (chains = keptChains(before, after)));
      if (!chains.has(open.config)) {
        this.#open.delete(open.id);
        this.drained.push(open);
      }
    }
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
    await this.waitFor(
      () => [...versions].every(([t, v]) => this.version(t) === v),
      `versions ${JSON.stringify([...versions.values()])}`,
      timeoutMs,
    );
  }

  // ------------------------------------------------------------------ stream

  /** Opens the ADS stream and subscribes like Envoy: CDS and LDS wildcard, plus what it already uses. */
  connect(): void {
    if (this.#call) return;
    this.#client ??= new Client(
      this.options.address,
      this.options.credentials ?? credentials.createInsecure(),
      ENVOY_CHANNEL_OPTIONS,
    );
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
    call.on("error", () => {
      /* reported through "status" */
    });
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
      if (t === CLUSTER_TYPE_URL || t === LISTENER_TYPE_URL || this.#state(t).names.size > 0)
        this.#request(t, undefined);
    }
  }

  /**
   * Resolves once the server has answered everything this stream asked so far: a request for a
   * fresh type always gets a response, written after anything earlier requests caused.
   */
  async barrier(timeoutMs = 10_000): Promise<void> {
    const typeUrl = `type.googleapis.com/oooi.test.EnvoyLikeBarrier${String(++barrierCount)}`;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`${this.options.node.id}: barrier timed out`));
      }, timeoutMs);
      this.#barriers.set(typeUrl, () => {
        clearTimeout(timer);
        resolve();
      });
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
  #request(
    t: EnvoyType,
    ack: { nonce: string; error?: string } | undefined,
    diff?: { subscribe: string[]; unsubscribe: string[] },
  ): void {
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
    const error = dup ?? rejection(t, res.resources) ?? this.validate?.(t, res.resources);
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
    const error = dup ?? rejection(t, res.resources) ?? this.validate?.(t, res.resources);
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
    t: EnvoyType,
    res: SotwResponse | DeltaResponse,
    error: string | undefined,
    incoming: ReadonlyMap<string, HeldResource>,
    removed: readonly string[],
    version: string,
  ): void {
    const st = this.#state(t);
    if (error === undefined) {
      this.#checkOrder(t, incoming, removed);
      if (t === LISTENER_TYPE_URL) this.#drain(incoming, removed);
      for (const n of removed) st.resources.delete(n);
      // Like Envoy, keep only named resources it still subscribes to (a response may cross an unsubscription).
      const named = t === ENDPOINT_TYPE_URL || t === ROUTE_TYPE_URL;
      const rewarm = t === CLUSTER_TYPE_URL ? this.#warmClusters(incoming, removed) : false;
      for (const [n, r] of incoming) if (!named || st.names.has(n)) st.resources.set(n, r);
      st.version = version;
      if (t === ENDPOINT_TYPE_URL) this.#endpointsArrived(incoming);
      // Envoy subscribes to what the new resources need before acknowledging them.
      if (t === CLUSTER_TYPE_URL) this.#resubscribe(ENDPOINT_TYPE_URL, this.#edsNames(), rewarm);
      if (t === LISTENER_TYPE_URL) this.#resubscribe(ROUTE_TYPE_URL, this.#rdsNames());
    }
    const record: ResponseRecord = {
      typeUrl: t,
      nonce: res.nonce,
      version,
      names: [...incoming.keys()],
      removed: res.kind === "delta" ? res.removed : removed,
      accepted: error === undefined,
      bytes: res.bytes,
      values: new Map(res.resources.map((r) => [r.name, r.value])),
    };
    this.log.push(record);
    this.#request(t, error === undefined ? { nonce: res.nonce } : { nonce: res.nonce, error });
    this.events.emit("response", record);
  }

  /**
   * A new or changed EDS cluster warms: it waits for an EDS response while the version it replaces
   * (if any) keeps serving; other clusters serve at once. Returns whether one started warming.
   */
  #warmClusters(incoming: ReadonlyMap<string, HeldResource>, removed: readonly string[]): boolean {
    for (const n of removed) {
      this.#serving.delete(n);
      this.#warming.delete(n);
    }
    let started = false;
    for (const [n, r] of incoming) {
      const newest = this.#warming.get(n) ?? this.#serving.get(n);
      if (newest !== undefined && JSON.stringify(newest.json) === JSON.stringify(r.json)) continue;
      if (edsServiceName(r.json) === undefined) {
        this.#serving.set(n, r);
        this.#warming.delete(n);
      } else {
        this.#warming.set(n, r);
        started = true;
      }
    }
    return started;
  }

  /** An EDS response completes the warming of every cluster waiting for one of its assignments. */
  #endpointsArrived(incoming: ReadonlyMap<string, HeldResource>): void {
    for (const [n, r] of this.#warming) {
      const service = edsServiceName(r.json);
      if (service === undefined || !incoming.has(service)) continue;
      this.#serving.set(n, r);
      this.#warming.delete(n);
    }
  }

  #edsNames(): Set<string> {
    const out = new Set<string>();
    for (const c of this.clusters.values()) {
      const e = edsServiceName(c.json);
      if (e !== undefined) out.add(e);
    }
    return out;
  }

  #rdsNames(): Set<string> {
    const out = new Set<string>();
    for (const l of this.listeners.values()) for (const r of rdsNames(l.json)) out.add(r);
    return out;
  }

  /**
   * Sends the type's subscription when its names changed, or when `rewarm`: a warming cluster opens
   * its own EDS watch, and Envoy's SotW mux then re-sends the request even with unchanged names.
   */
  #resubscribe(t: EnvoyType, names: Set<string>, rewarm = false): void {
    const st = this.#state(t);
    const subscribe = [...names].filter((n) => !st.names.has(n)).sort();
    const unsubscribe = [...st.names].filter((n) => !names.has(n)).sort();
    if (rewarm && this.protocol === "sotw" && st.requested && subscribe.length === 0 && unsubscribe.length === 0) {
      this.#request(t, undefined);
      return;
    }
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
        for (const c of t === LISTENER_TYPE_URL ? listenerClusters(r.json) : routeClusters(r.json)) {
          if (!this.isWarm(c))
            this.violations.push(
              `${t === LISTENER_TYPE_URL ? "listener" : "route configuration"} "${name}" arrived using cluster "${c}", which is not warm`,
            );
        }
      }
    }
    if (t === CLUSTER_TYPE_URL) {
      for (const c of removed) {
        for (const [kind, map, type] of [
          ["listener", this.listeners, LISTENER_TYPE_URL],
          ["route configuration", this.routes, ROUTE_TYPE_URL],
        ] as const) {
          for (const [name, r] of map) {
            const uses = type === LISTENER_TYPE_URL ? listenerClusters(r.json) : routeClusters(r.json);
            if (uses.includes(c)) this.violations.push(`cluster "${c}" removed while ${kind} "${name}" uses it`);
          }
        }
      }
    }
  }
}

/** The first resource of a response Envoy would reject, as its NACK text. */
function rejection(typeUrl: string, resources: readonly DecodedResource[]): string | undefined {
  for (const r of resources) {
    const error = envoyRejects(typeUrl, r.json);
    if (error !== undefined) return error;
  }
  return undefined;
}
