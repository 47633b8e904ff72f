// The fake kube-apiserver's HTTP face: routing, content types, watch streams, fault hooks.
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { parse as parseYaml } from "yaml";
import {
  AGGREGATED_CONTENT_TYPE,
  aggregatedDiscovery,
  apiGroupDoc,
  apiGroupList,
  apiResourceList,
  apiVersions,
  versionInfo,
  wantsAggregated,
} from "./discovery.js";
import type { ServerVersion } from "./discovery.js";
import { ApiError, badRequest, expired, internalError, rvConflict } from "./errors.js";
import type { RequestMatch, RequestRecord, Verb } from "./faults.js";
import { FaultQueue, matches, RequestLog } from "./faults.js";
import { BUILTIN_KINDS } from "./kinds.js";
import { OPENAPI_V2_PROTOBUF, openApiV2, openApiV2Protobuf, openApiV3Group, openApiV3Index } from "./openapi.js";
import { parseFieldSelector, parseLabelSelector } from "./selectors.js";
import type { DeleteOptions, EventType, ListOptions, PatchType, WatchSink } from "./store.js";
import { Store } from "./store.js";
import { toTable, wantsTable } from "./table.js";
import type { Json, JsonObject, KubeObject, ResourceKind } from "./types.js";
import { apiVersionOf, isObject, meta } from "./types.js";

/** How the fake is configured at start. */
export interface FakeApiServerOptions {
  /** Kinds served from the start (default: BUILTIN_KINDS). Add EXTERNAL_KINDS / OOOI_KINDS as needed. */
  kinds?: readonly ResourceKind[];
  /** Watch events retained for resuming watches; older resourceVersions get 410 (default 10000). */
  historyLimit?: number;
  /** Creating in a missing namespace is 404, in a terminating one 403, as in kube-apiserver (default true). */
  requireNamespaces?: boolean;
  /** Stand-in garbage collector and namespace controller (default true). */
  garbageCollector?: boolean;
  /** Creating an apiextensions CustomResourceDefinition starts serving its kinds (default true). */
  crdsServeKinds?: boolean;
  /** Namespaces that exist at start (default default, kube-system, kube-public, kube-node-lease). */
  namespaces?: readonly string[];
  /** Period of automatic BOOKMARK events on watches that allow them; 0 disables (default 0). */
  bookmarkIntervalMs?: number;
  /** Server-side end of watches that give no timeoutSeconds; 0 keeps them open (default 0). */
  defaultWatchTimeoutSeconds?: number;
  /** Serve aggregated discovery to clients that ask for it (default true). */
  aggregatedDiscovery?: boolean;
  /** Reported by /version (default 1.31). */
  version?: ServerVersion;
}

interface ActiveWatch {
  record: RequestRecord;
  res: ServerResponse;
  end(abrupt: boolean): void;
}

type Route =
  | { type: "doc"; body: () => JsonObject | undefined; contentType?: string }
  | { type: "raw"; body: Buffer; contentType: string }
  | { type: "resource"; kind: ResourceKind; namespace?: string; name?: string; sub?: string; watchPath: boolean };

const NOT_FOUND_PATH = (): ApiError =>
  new ApiError(404, "NotFound", "the server could not find the requested resource");

/** A kube-apiserver stand-in on 127.0.0.1 (plain HTTP) for tests. */
export class FakeApiServer {
  /** State and semantics (use for seeding and direct reads; bypasses HTTP and the request log). */
  readonly store: Store;
  /** Every HTTP request served, for "how many writes" assertions. */
  readonly requests = new RequestLog();
  private readonly faults = new FaultQueue();
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly watches = new Set<ActiveWatch>();
  private readonly podLogs = new Map<string, string>();
  private readonly opts: FakeApiServerOptions;
  private bookmarkTimer: NodeJS.Timeout | undefined;
  private upTimer: NodeJS.Timeout | undefined;
  private listenPort = 0;
  private down = false;

  private constructor(opts: FakeApiServerOptions) {
    this.opts = opts;
    this.store = new Store({
      kinds: opts.kinds ?? BUILTIN_KINDS,
      historyLimit: opts.historyLimit ?? 10_000,
      requireNamespaces: opts.requireNamespaces ?? true,
      garbageCollector: opts.garbageCollector ?? true,
      crdsServeKinds: opts.crdsServeKinds ?? true,
      namespaces: opts.namespaces ?? ["default", "kube-system", "kube-public", "kube-node-lease"],
    });
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.on("connection", (s: Socket) => {
      this.sockets.add(s);
      s.on("close", () => this.sockets.delete(s));
    });
  }

  /** Starts a fake on 127.0.0.1 with a free port. */
  static async start(opts: FakeApiServerOptions = {}): Promise<FakeApiServer> {
    const f = new FakeApiServer(opts);
    await f.listen();
    if ((opts.bookmarkIntervalMs ?? 0) > 0) {
      f.bookmarkTimer = setInterval(() => {
        f.store.bookmark();
      }, opts.bookmarkIntervalMs);
      f.bookmarkTimer.unref();
    }
    return f;
  }

  private listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(this.listenPort, "127.0.0.1", () => {
        this.server.off("error", reject);
        const addr = this.server.address();
        if (addr !== null && typeof addr === "object") this.listenPort = addr.port;
        resolve();
      });
    });
  }

  /** Base URL, e.g. http://127.0.0.1:40123 (stable across down/up). */
  get url(): string {
    return `http://127.0.0.1:${this.listenPort}`;
  }

  /** Stops serving and closes every connection. */
  async stop(): Promise<void> {
    clearInterval(this.bookmarkTimer);
    clearTimeout(this.upTimer);
    for (const w of [...this.watches]) w.end(false);
    if (!this.down) await this.closeListener();
  }

  private closeListener(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => {
        resolve();
      });
      for (const s of this.sockets) s.destroy();
    });
  }

  // ---------------------------------------------------------------- registry

  /** Starts serving a kind at runtime (discovery updates at once). */
  addKind(k: ResourceKind): void {
    this.store.addKind(k);
  }

  /** Stops serving a kind at runtime; open watches on it are ended. */
  removeKind(k: Pick<ResourceKind, "group" | "version" | "plural">): void {
    this.store.removeKind(k.group, k.version, k.plural);
    for (const w of [...this.watches]) {
      if (w.record.group === k.group && w.record.resource === k.plural) w.end(false);
    }
  }

  /**
   * What GET pods/NAME/log answers for a pod (the kubelet's part: there is none). As kube-apiserver
   * (API reference, "read log of the specified Pod"): text/plain, the container's output; 404 when
   * the pod does not exist; 400 while its container has not started (here: no log set yet).
   */
  setPodLog(namespace: string, name: string, text: string): void {
    this.podLogs.set(`${namespace}/${name}`, text);
  }

  private servePodLog(res: ServerResponse, k: ResourceKind, ns: string, name: string, method: string): void {
    if (method !== "GET")
      throw new ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource");
    this.store.get(k, ns, name);
    const text = this.podLogs.get(`${ns}/${name}`);
    if (text === undefined)
      throw new ApiError(400, "BadRequest", `container in pod "${name}" is waiting to start: ContainerCreating`);
    res.writeHead(200, { "Content-Type": "text/plain", "Content-Length": Buffer.byteLength(text) });
    res.end(text);
  }

  /** Creates or replaces an object directly (status kept; not counted as a request). */
  seed(obj: JsonObject): KubeObject {
    return this.store.seed(obj);
  }

  // ---------------------------------------------------------------- hooks

  /** Sends a BOOKMARK with the current resourceVersion on every watch that allows bookmarks. */
  bookmark(): void {
    this.store.bookmark();
  }

  /** Compacts the event history: resuming a watch from any earlier resourceVersion gets 410 Expired. */
  compact(): void {
    this.store.compact();
  }

  /** Answers the next `count` matching requests with an error (default 500 InternalError). */
  failNext(count: number, opts: { match?: RequestMatch; code?: number; message?: string } = {}): void {
    const code = opts.code ?? 500;
    const message = opts.message ?? "injected failure";
    this.faults.add(count, opts.match, () =>
      code === 500
        ? internalError(message)
        : new ApiError(code, code === 503 ? "ServiceUnavailable" : code === 429 ? "Timeout" : "InternalError", message),
    );
  }

  /** Answers the next `count` matching write requests (default: any write) with 409 Conflict. */
  conflictNext(count: number, match: RequestMatch = { verb: ["create", "update", "patch", "delete"] }): void {
    this.faults.add(count, match, () =>
      rvConflict({ group: "", version: "v1", kind: "", plural: "object", namespaced: true }, "injected"),
    );
  }

  /** Makes the next `count` matching watch requests fail with 410: an ERROR event in a 200 stream (as kube-apiserver) or an HTTP 410. */
  expireNextWatch(opts: { count?: number; as?: "event" | "http"; match?: RequestMatch } = {}): void {
    this.faults.expireWatches(opts.count ?? 1, opts.as ?? "event", opts.match);
  }

  /**
   * Ends open watch streams (all, or those matching): by default cleanly, as kube-apiserver does at a
   * watch timeout; with `abrupt` the TCP connection is destroyed mid-stream. Returns how many ended.
   */
  resetWatches(opts: { abrupt?: boolean; match?: RequestMatch } = {}): number {
    let n = 0;
    for (const w of [...this.watches]) {
      if (!matches(opts.match, w.record)) continue;
      w.end(opts.abrupt === true);
      n++;
    }
    return n;
  }

  /** Open watch streams (optionally matching). */
  openWatches(match?: RequestMatch): number {
    return [...this.watches].filter((w) => matches(match, w.record)).length;
  }

  /**
   * Takes the server down: the port refuses connections and open connections are reset. Data is kept.
   * With `forMs`, it comes back by itself after that long; otherwise call goUp().
   */
  async goDown(forMs?: number): Promise<void> {
    if (this.down) return;
    this.down = true;
    // The port first, then the watches: a client re-listing after its watch ended must find it refused.
    const closed = this.closeListener();
    for (const w of [...this.watches]) w.end(true);
    await closed;
    if (forMs !== undefined) {
      this.upTimer = setTimeout(() => {
        void this.goUp();
      }, forMs);
    }
  }

  /** Brings the server back on the same port with the same data. */
  async goUp(): Promise<void> {
    clearTimeout(this.upTimer);
    if (!this.down) return;
    await this.listen();
    this.down = false;
  }

  /** Whether goDown() is in effect. */
  isDown(): boolean {
    return this.down;
  }

  /** Drops pending injected failures and expiries. */
  clearFaults(): void {
    this.faults.clear();
  }

  // ---------------------------------------------------------------- HTTP

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const arrived = performance.now();
    const url = new URL(req.url ?? "/", "http://fake");
    const method = (req.method ?? "GET").toUpperCase();
    const record: RequestRecord = { verb: "discovery", method, path: url.pathname, query: url.searchParams, status: 0 };
    const contentType = req.headers["content-type"];
    if (contentType !== undefined) record.contentType = contentType;
    const fm = url.searchParams.get("fieldManager");
    if (fm !== null) record.fieldManager = fm;
    let route: Route | undefined;
    try {
      const body = await readBody(req);
      route = this.route(url, req.headers.accept);
      if (route.type === "resource") describe(record, route, method, url.searchParams);
      this.requests.add(record);
      const injected = this.faults.take(record);
      if (injected !== undefined) throw injected;
      if (route.type === "raw") {
        res.writeHead(200, { "Content-Type": route.contentType, "Content-Length": route.body.length });
        res.end(route.body);
      } else if (route.type === "doc") {
        const doc = route.body();
        if (doc === undefined) throw NOT_FOUND_PATH();
        send(res, 200, doc, route.contentType);
      } else this.serveResource(req, res, route, method, url.searchParams, body, record);
    } catch (e) {
      if (route === undefined) this.requests.add(record);
      const err = e instanceof ApiError ? e : internalError(e instanceof Error ? e.message : String(e));
      if (!res.headersSent) send(res, err.code, err.status());
      else res.end();
    }
    if (record.status === 0 && !record.verb.startsWith("watch")) record.status = res.statusCode;
    record.ms = performance.now() - arrived;
  }

  private route(url: URL, accept: string | undefined): Route {
    const seg = url.pathname
      .split("/")
      .filter((s) => s !== "")
      .map(decodeURIComponent);
    const kinds = (): ResourceKind[] => this.store.kinds();
    const agg = this.opts.aggregatedDiscovery ?? true;
    const p = seg.join("/");
    if (p === "version")
      return { type: "doc", body: () => versionInfo(this.opts.version ?? { major: "1", minor: "31" }) };
    if (p === "healthz" || p === "readyz" || p === "livez") return { type: "doc", body: () => ({ status: "ok" }) };
    if (p === "openapi/v2") {
      return accept?.includes(OPENAPI_V2_PROTOBUF) === true
        ? { type: "raw", body: openApiV2Protobuf(), contentType: "application/octet-stream" }
        : { type: "doc", body: () => openApiV2() };
    }
    if (p === "openapi/v3") return { type: "doc", body: () => openApiV3Index(kinds()) };
    if (seg[0] === "openapi" && seg[1] === "v3" && seg.length >= 3) {
      return { type: "doc", body: () => openApiV3Group(kinds(), seg.slice(2).join("/")) };
    }
    if (p === "api") {
      return agg && wantsAggregated(accept)
        ? { type: "doc", body: () => aggregatedDiscovery(kinds(), true), contentType: AGGREGATED_CONTENT_TYPE }
        : { type: "doc", body: () => apiVersions(`127.0.0.1:${this.listenPort}`) };
    }
    if (p === "apis") {
      return agg && wantsAggregated(accept)
        ? { type: "doc", body: () => aggregatedDiscovery(kinds(), false), contentType: AGGREGATED_CONTENT_TYPE }
        : { type: "doc", body: () => apiGroupList(kinds()) };
    }
    let group: string;
    let version: string;
    let rest: string[];
    if (seg[0] === "api" && seg.length >= 2) {
      group = "";
      version = seg[1] ?? "";
      rest = seg.slice(2);
    } else if (seg[0] === "apis" && seg.length >= 2) {
      group = seg[1] ?? "";
      if (seg.length === 2) return { type: "doc", body: () => apiGroupDoc(kinds(), group) };
      version = seg[2] ?? "";
      rest = seg.slice(3);
    } else throw NOT_FOUND_PATH();
    if (rest.length === 0) return { type: "doc", body: () => apiResourceList(kinds(), group, version) };
    let watchPath = false;
    if (rest[0] === "watch") {
      watchPath = true;
      rest = rest.slice(1);
    }
    let namespace: string | undefined;
    if (
      rest[0] === "namespaces" &&
      rest.length >= 3 &&
      this.store.kindFor(group, version, rest[2] ?? "")?.namespaced === true
    ) {
      namespace = rest[1];
      rest = rest.slice(2);
    }
    const kind = this.store.kindFor(group, version, rest[0] ?? "");
    if (kind === undefined || rest.length > 3) throw NOT_FOUND_PATH();
    if (!kind.namespaced && namespace !== undefined) throw NOT_FOUND_PATH();
    const name = rest[1];
    const sub = rest[2];
    const podLog = sub === "log" && kind.group === "" && kind.plural === "pods";
    if (sub !== undefined && !podLog && !(sub === "status" && kind.statusSubresource === true)) throw NOT_FOUND_PATH();
    const r: Route = { type: "resource", kind, watchPath };
    if (namespace !== undefined) r.namespace = namespace;
    if (name !== undefined) r.name = name;
    if (sub !== undefined) r.sub = sub;
    return r;
  }

  private serveResource(
    req: IncomingMessage,
    res: ServerResponse,
    r: Extract<Route, { type: "resource" }>,
    method: string,
    q: URLSearchParams,
    body: Buffer,
    record: RequestRecord,
  ): void {
    const k = r.kind;
    const ns = r.namespace ?? "";
    const scope = r.sub === "status" ? ("status" as const) : ("main" as const);
    const manager = q.get("fieldManager") ?? userAgentManager(req.headers["user-agent"]);
    const dryRun = q.getAll("dryRun").includes("All");
    const single = r.name !== undefined;
    if (k.namespaced && single && r.namespace === undefined) throw NOT_FOUND_PATH();
    if (r.sub === "log") {
      this.servePodLog(res, k, ns, r.name ?? "", method);
      return;
    }
    switch (record.verb) {
      case "watch":
        this.serveWatch(req, res, r, q, record);
        return;
      case "get":
        if (wantsTable(req.headers.accept)) {
          const obj = this.store.get(k, ns, r.name ?? "");
          const rv = meta(obj).resourceVersion ?? "";
          const table = toTable([obj], { resourceVersion: rv }, q.get("includeObject"), k);
          send(res, 200, table, "application/json;as=Table;v=v1;g=meta.k8s.io");
          return;
        }
        sendText(res, 200, this.store.getJson(k, ns, r.name ?? ""));
        return;
      case "list": {
        const opts: ListOptions = {
          label: parseLabelSelector(q.get("labelSelector")),
          field: parseFieldSelector(q.get("fieldSelector")),
          ...(q.get("limit") !== null ? { limit: Number(q.get("limit")) } : {}),
          ...(q.get("continue") !== null ? { continueToken: q.get("continue") ?? "" } : {}),
          ...(q.get("resourceVersion") !== null ? { resourceVersion: q.get("resourceVersion") ?? "" } : {}),
          exact: q.get("resourceVersionMatch") === "Exact",
        };
        const listMeta = (l: { resourceVersion: string; continueToken?: string; remaining?: number }): JsonObject => {
          const m: JsonObject = { resourceVersion: l.resourceVersion };
          if (l.continueToken !== undefined) m["continue"] = l.continueToken;
          if (l.remaining !== undefined) m["remainingItemCount"] = l.remaining;
          return m;
        };
        if (wantsTable(req.headers.accept)) {
          const l = this.store.list(k, r.namespace, opts);
          send(
            res,
            200,
            toTable(l.items, listMeta(l), q.get("includeObject"), k),
            "application/json;as=Table;v=v1;g=meta.k8s.io",
          );
          return;
        }
        // The list's own fields, then the items' shared JSON texts: the same bytes as JSON.stringify of
        // { kind, apiVersion, metadata, items } without copying or re-serializing every object.
        const l = this.store.listJson(k, r.namespace, opts);
        const head = JSON.stringify({ kind: `${k.kind}List`, apiVersion: apiVersionOf(k), metadata: listMeta(l) });
        sendText(res, 200, `${head.slice(0, -1)},"items":[${l.items.join(",")}]}`);
        return;
      }
      case "create": {
        const obj = parseBody(body, record.contentType);
        if (!isObject(obj)) throw badRequest("request body must be an object");
        send(res, 201, this.store.create(k, ns, obj, { manager, dryRun }));
        return;
      }
      case "update": {
        const obj = parseBody(body, record.contentType);
        if (!isObject(obj)) throw badRequest("request body must be an object");
        send(res, 200, this.store.update(k, ns, r.name ?? "", obj, { manager, dryRun, scope }));
        return;
      }
      case "patch": {
        const type = patchType(record.contentType);
        const force = q.get("force") === "true";
        if (type === "apply" && q.get("fieldManager") === null) {
          throw badRequest("PATCH, application/apply-patch+yaml requires fieldManager parameter");
        }
        if (type !== "apply" && q.has("force")) throw badRequest("force is only allowed for apply patches");
        const existed = this.store.has(k, ns, r.name ?? "");
        const out = this.store.patch(k, ns, r.name ?? "", type, parseBody(body, record.contentType), {
          manager,
          dryRun,
          scope,
          force,
        });
        send(res, type === "apply" && !existed ? 201 : 200, out);
        return;
      }
      case "delete":
        send(res, 200, this.store.delete(k, ns, r.name ?? "", deleteOptions(body, q, dryRun)));
        return;
      case "deletecollection": {
        const opts = deleteOptions(body, q, dryRun);
        const l = this.store.list(k, r.namespace, {
          label: parseLabelSelector(q.get("labelSelector")),
          field: parseFieldSelector(q.get("fieldSelector")),
        });
        for (const o of l.items) {
          const m = o["metadata"] as { name?: string; namespace?: string } | undefined;
          this.store.delete(k, m?.namespace ?? "", m?.name ?? "", opts);
        }
        send(res, 200, { kind: `${k.kind}List`, apiVersion: apiVersionOf(k), metadata: {}, items: [] });
        return;
      }
      default:
        throw new ApiError(405, "MethodNotAllowed", `the server does not allow this method on the requested resource`);
    }
  }

  private serveWatch(
    req: IncomingMessage,
    res: ServerResponse,
    r: Extract<Route, { type: "resource" }>,
    q: URLSearchParams,
    record: RequestRecord,
  ): void {
    const expiry = this.faults.takeExpiry(record);
    if (expiry === "http") throw expired("too old resource version (injected)");
    const field = parseFieldSelector(q.get("fieldSelector"));
    const nameSel = r.name;
    res.statusCode = 200;
    res.setHeader("Content-Type", "application/json");
    res.setHeader("Cache-Control", "no-cache, private");
    res.setHeader("Transfer-Encoding", "chunked");
    // Each line is what JSON.stringify({ type, object }) gives, with the object's shared JSON text.
    const writeJson = (type: EventType, json: string): void => {
      if (!res.writableEnded) res.write(`{"type":${JSON.stringify(type)},"object":${json}}\n`);
    };
    const write = (type: EventType, obj: JsonObject): void => {
      writeJson(type, JSON.stringify(obj));
    };
    const sink: WatchSink = {
      kind: r.kind,
      label: parseLabelSelector(q.get("labelSelector")),
      field:
        nameSel === undefined
          ? field
          : (o: KubeObject) => field(o) && (o["metadata"] as { name?: string } | undefined)?.name === nameSel,
      bookmarks: q.get("allowWatchBookmarks") === "true",
      send: (type, obj) => {
        writeJson(type, obj.json());
      },
    };
    if (r.namespace !== undefined) sink.namespace = r.namespace;
    let unsubscribe: (() => void) | undefined;
    let timer: NodeJS.Timeout | undefined;
    const active: ActiveWatch = {
      record,
      res,
      end: (abrupt) => {
        cleanup();
        if (abrupt) req.socket.destroy();
        else res.end();
      },
    };
    const cleanup = (): void => {
      clearTimeout(timer);
      unsubscribe?.();
      unsubscribe = undefined;
      this.watches.delete(active);
    };
    res.flushHeaders();
    record.status = 200;
    if (expiry === "event") {
      write("ERROR", expired("too old resource version (injected)").status());
      res.end();
      return;
    }
    try {
      unsubscribe = this.store.watch(sink, q.get("resourceVersion") ?? undefined);
    } catch (e) {
      const err = e instanceof ApiError ? e : internalError(String(e));
      write("ERROR", err.status());
      res.end();
      return;
    }
    this.watches.add(active);
    res.on("close", cleanup);
    const timeout = Number(q.get("timeoutSeconds") ?? this.opts.defaultWatchTimeoutSeconds ?? 0);
    if (timeout > 0) {
      timer = setTimeout(() => {
        active.end(false);
      }, timeout * 1000);
    }
  }
}

function describe(
  record: RequestRecord,
  r: Extract<Route, { type: "resource" }>,
  method: string,
  q: URLSearchParams,
): void {
  record.resource = r.sub === undefined ? r.kind.plural : `${r.kind.plural}/${r.sub}`;
  record.group = r.kind.group;
  if (r.namespace !== undefined) record.namespace = r.namespace;
  if (r.name !== undefined) record.name = r.name;
  const single = r.name !== undefined;
  let verb: Verb;
  switch (method) {
    case "GET":
      verb = r.watchPath || q.get("watch") === "true" || q.get("watch") === "1" ? "watch" : single ? "get" : "list";
      break;
    case "POST":
      verb = single ? "discovery" : "create";
      break;
    case "PUT":
      verb = "update";
      break;
    case "PATCH":
      verb = "patch";
      break;
    case "DELETE":
      verb = single ? "delete" : "deletecollection";
      break;
    default:
      verb = "discovery";
  }
  if ((verb === "update" || verb === "patch") && !single) verb = "discovery";
  record.verb = verb;
}

function send(res: ServerResponse, code: number, body: Json, contentType = "application/json"): void {
  sendText(res, code, JSON.stringify(body), contentType);
}

function sendText(res: ServerResponse, code: number, text: string, contentType = "application/json"): void {
  res.writeHead(code, { "Content-Type": contentType, "Content-Length": Buffer.byteLength(text) });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      resolve(Buffer.concat(chunks));
    });
    req.on("error", reject);
  });
}

function parseBody(body: Buffer, contentType: string | undefined): Json {
  const text = body.toString("utf8");
  if (text.trim() === "") return {};
  try {
    if (contentType !== undefined && contentType.includes("yaml")) return parseYamlBody(text);
    return JSON.parse(text) as Json;
  } catch (e) {
    throw badRequest(`error decoding request body: ${e instanceof Error ? e.message : String(e)}`);
  }
}

// An apply configuration is YAML, and JSON is YAML: clients (client-go, client-node, kubectl) send JSON
// text, which JSON.parse reads the same two orders of magnitude faster than the YAML parser (7 µs vs
// 0.9 ms for a 2 KB ConfigMap; the parser was the fake's largest cost at benchmark scale). Anything
// JSON.parse refuses is read as YAML.
function parseYamlBody(text: string): Json {
  if (text.trimStart().startsWith("{")) {
    try {
      return JSON.parse(text) as Json;
    } catch {
      // not JSON: YAML flow or block syntax
    }
  }
  return parseYaml(text) as Json;
}

function patchType(contentType: string | undefined): PatchType {
  const ct = (contentType ?? "").split(";")[0]?.trim();
  switch (ct) {
    case "application/merge-patch+json":
      return "merge";
    case "application/strategic-merge-patch+json":
      return "strategic";
    case "application/json-patch+json":
      return "json";
    case "application/apply-patch+yaml":
    case "application/apply-patch+cbor":
      return "apply";
    default:
      throw new ApiError(
        415,
        "UnsupportedMediaType",
        `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml`,
      );
  }
}

function deleteOptions(body: Buffer, q: URLSearchParams, dryRun: boolean): DeleteOptions {
  const parsed = parseBody(body, "application/json");
  const b = isObject(parsed) ? parsed : {};
  const opts: DeleteOptions = { dryRun: dryRun || (Array.isArray(b["dryRun"]) && b["dryRun"].includes("All")) };
  const policy =
    q.get("propagationPolicy") ?? (typeof b["propagationPolicy"] === "string" ? b["propagationPolicy"] : undefined);
  if (policy === "Background" || policy === "Foreground" || policy === "Orphan") opts.propagationPolicy = policy;
  else if (policy !== undefined) throw badRequest(`invalid propagationPolicy: ${policy}`);
  if (b["orphanDependents"] === true) opts.propagationPolicy = "Orphan";
  const pre = b["preconditions"];
  if (isObject(pre)) {
    opts.preconditions = {};
    if (typeof pre["uid"] === "string") opts.preconditions.uid = pre["uid"];
    if (typeof pre["resourceVersion"] === "string") opts.preconditions.resourceVersion = pre["resourceVersion"];
  }
  return opts;
}

// kube-apiserver names an Update manager after the User-Agent's program name when no fieldManager is given.
function userAgentManager(ua: string | undefined): string {
  const name = (ua ?? "").split("/")[0]?.trim() ?? "";
  return name === "" ? "unknown" : name.slice(0, 128);
}
