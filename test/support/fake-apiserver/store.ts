// The fake's storage and semantics: objects, one global resourceVersion, a bounded event history for
// watches, finalizers, generation, field managers, and a garbage collector for ownerReferences and
// terminating namespaces. HTTP lives in server.ts; this module never touches the network.
import { randomBytes, randomUUID } from "node:crypto";
import { ApiError, alreadyExists, badRequest, expired, invalid, notFound, rvConflict } from "./errors.js";
import type { Manager, Scope } from "./fields.js";
import { recordUpdate, renderManagedFields, serverSideApply } from "./fields.js";
import { kindsFromCrd } from "./crds.js";
import { NAMESPACE } from "./kinds.js";
import { jsonPatch, mergePatch, strategicMergePatch } from "./patch.js";
import type { Selector } from "./selectors.js";
import { everything } from "./selectors.js";
import type { Json, JsonObject, KubeObject, ObjectMetadata, ResourceKind } from "./types.js";
import { apiVersionOf, clone, isObject, jsonEqual, kindKey, meta, tracksGeneration } from "./types.js";

/** Watch event types kube-apiserver sends. */
export type EventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";

/** One change in the history watches replay from. */
interface HistoryEvent {
  rv: number;
  type: "ADDED" | "MODIFIED" | "DELETED";
  key: string;
  obj: KubeObject;
  prev?: KubeObject;
}

interface StoredObject {
  kind: ResourceKind;
  obj: KubeObject;
  managers: Manager[];
}

/**
 * An object as a watch receives it. Stored objects never change once committed, so the JSON text of
 * each (per served version) is made once and shared by every watch, list and get; `copy` gives a
 * private deep copy to a caller that wants to read or change it.
 */
export interface WireObject {
  /** The JSON text, exactly JSON.stringify of the object as served. */
  json(): string;
  /** A deep copy the caller owns. */
  copy(): JsonObject;
}

/** A live watch: what it selects and where its events go. */
export interface WatchSink {
  /** Served kind (its version decides apiVersion on the wire). */
  kind: ResourceKind;
  namespace?: string;
  label: Selector;
  field: Selector;
  bookmarks: boolean;
  send(type: EventType, obj: WireObject): void;
}

/** LIST parameters: selectors, paging, and the resourceVersion to list at. */
export interface ListOptions {
  label?: Selector;
  field?: Selector;
  limit?: number;
  continueToken?: string;
  resourceVersion?: string;
  exact?: boolean;
}

/** Patch content types the fake accepts on PATCH. */
export type PatchType = "merge" | "strategic" | "json" | "apply";

/** Who is writing and how: the parts of a request that shape a write. */
export interface WriteOptions {
  scope?: Scope;
  /** fieldManager query parameter, or the manager derived from the User-Agent. */
  manager: string;
  force?: boolean;
  dryRun?: boolean;
}

/** DeleteOptions the fake honours. */
export interface DeleteOptions {
  propagationPolicy?: "Background" | "Foreground" | "Orphan";
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
}

/** Store configuration (see FakeApiServerOptions for meanings). */
export interface StoreOptions {
  kinds: readonly ResourceKind[];
  historyLimit: number;
  requireNamespaces: boolean;
  garbageCollector: boolean;
  crdsServeKinds: boolean;
  namespaces: readonly string[];
}

const GC_MANAGER = "kube-controller-manager";
const SERVER_METADATA = [
  "uid",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "generation",
] as const;

const nowString = (): string => new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
const objKey = (ns: string, name: string): string => `${ns}/${name}`;
const nameOf = (o: KubeObject): string => meta(o).name ?? "";

/** In-memory kube-apiserver state with its write semantics. */
export class Store {
  private rv = 0;
  private compactedThrough = 0;
  private readonly served = new Map<string, ResourceKind>(); // group/version/plural
  private readonly objects = new Map<string, Map<string, StoredObject>>(); // group/plural → ns/name
  // Events in resourceVersion order; the first `historyStart` are dropped (trimmed in bulk, so that
  // keeping the history bounded costs O(1) per write, not a splice of the whole array).
  private history: HistoryEvent[] = [];
  private historyStart = 0;
  private readonly watchers = new Map<string, Set<WatchSink>>(); // group/plural → watches of it
  // JSON text of stored objects by served apiVersion (and list-item form); see WireObject.
  private readonly wireCache = new WeakMap<KubeObject, Map<string, string>>();
  private readonly crdKinds = new Map<string, ResourceKind[]>(); // CRD name → kinds it registered
  /** Called whenever the set of served kinds changes (discovery caches). */
  onKindsChanged: () => void = () => undefined;

  constructor(readonly options: StoreOptions) {
    for (const k of options.kinds) this.addKind(k);
    for (const ns of options.namespaces) {
      this.seed({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
    }
  }

  // ------------------------------------------------------------------ kinds

  /** Starts serving a kind (and its storage, kept across remove/add). */
  addKind(k: ResourceKind): void {
    this.served.set(`${k.group}/${k.version}/${k.plural}`, k);
    if (!this.objects.has(kindKey(k))) this.objects.set(kindKey(k), new Map());
    this.onKindsChanged();
  }

  /** Stops serving a kind at one version (its objects stay stored, as with a CRD version turned off). */
  removeKind(group: string, version: string, plural: string): void {
    this.served.delete(`${group}/${version}/${plural}`);
    this.onKindsChanged();
  }

  /** Every served kind. */
  kinds(): ResourceKind[] {
    return [...this.served.values()];
  }

  /** The served kind at group/version/plural, if any. */
  kindFor(group: string, version: string, plural: string): ResourceKind | undefined {
    return this.served.get(`${group}/${version}/${plural}`);
  }

  /** The served kind for an apiVersion + kind pair. */
  kindByGvk(apiVersion: string, kind: string): ResourceKind | undefined {
    return this.kinds().find((k) => apiVersionOf(k) === apiVersion && k.kind === kind);
  }

  // ------------------------------------------------------------------ reads

  /** The current global resourceVersion. */
  resourceVersion(): number {
    return this.rv;
  }

  private bucket(k: ResourceKind): Map<string, StoredObject> {
    let b = this.objects.get(kindKey(k));
    if (b === undefined) {
      b = new Map();
      this.objects.set(kindKey(k), b);
    }
    return b;
  }

  private find(k: ResourceKind, ns: string, name: string): StoredObject | undefined {
    return this.bucket(k).get(objKey(k.namespaced ? ns : "", name));
  }

  // Wire form of a stored object at the served version.
  private out(k: ResourceKind, obj: KubeObject): KubeObject {
    const o = clone(obj);
    o.apiVersion = apiVersionOf(k);
    o.kind = k.kind;
    return o;
  }

  // JSON text of a stored object as out() (or, for `item` of a built-in kind, a list item) would give it.
  private wireJson(k: ResourceKind, obj: KubeObject, item: boolean): string {
    const listForm = item && k.builtin === true;
    const apiVersion = apiVersionOf(k);
    const key = listForm ? "" : `${apiVersion} ${k.kind}`;
    let texts = this.wireCache.get(obj);
    if (texts === undefined) {
      texts = new Map();
      this.wireCache.set(obj, texts);
    }
    let text = texts.get(key);
    if (text === undefined) {
      // A shallow copy keeps the key order out() gives (assigning an existing key keeps its place).
      const o: JsonObject = { ...obj };
      o["apiVersion"] = apiVersion;
      o["kind"] = k.kind;
      if (listForm) {
        delete o["apiVersion"];
        delete o["kind"];
      }
      text = JSON.stringify(o);
      texts.set(key, text);
    }
    return text;
  }

  private wire(k: ResourceKind, obj: KubeObject): WireObject {
    return { json: () => this.wireJson(k, obj, false), copy: () => this.out(k, obj) };
  }

  /** GET of one object. */
  get(k: ResourceKind, ns: string, name: string): KubeObject {
    return this.out(k, this.stored(k, ns, name).obj);
  }

  /** GET of one object as JSON text (what get() returns, serialized; shared, not copied). */
  getJson(k: ResourceKind, ns: string, name: string): string {
    return this.wireJson(k, this.stored(k, ns, name).obj, false);
  }

  /** Whether the object exists. */
  has(k: ResourceKind, ns: string, name: string): boolean {
    return this.find(k, ns, name) !== undefined;
  }

  private stored(k: ResourceKind, ns: string, name: string): StoredObject {
    const s = this.find(k, ns, name);
    if (s === undefined) throw notFound(k, name);
    return s;
  }

  /** LIST with selectors and limit/continue paging; items sorted by namespace/name. */
  list(
    k: ResourceKind,
    ns: string | undefined,
    opts: ListOptions,
  ): { items: KubeObject[]; resourceVersion: string; continueToken?: string; remaining?: number } {
    const { page, ...rest } = this.select(k, ns, opts);
    const items = page.map((s) => {
      const o = this.out(k, s.obj);
      if (k.builtin === true) {
        delete o.apiVersion;
        delete o.kind;
      }
      return o;
    });
    return { items, ...rest };
  }

  /** LIST as list() answers it, each item as JSON text (shared, not copied). */
  listJson(
    k: ResourceKind,
    ns: string | undefined,
    opts: ListOptions,
  ): { items: string[]; resourceVersion: string; continueToken?: string; remaining?: number } {
    const { page, ...rest } = this.select(k, ns, opts);
    return { items: page.map((s) => this.wireJson(k, s.obj, true)), ...rest };
  }

  private select(
    k: ResourceKind,
    ns: string | undefined,
    opts: ListOptions,
  ): { page: StoredObject[]; resourceVersion: string; continueToken?: string; remaining?: number } {
    if (
      opts.exact === true &&
      opts.resourceVersion !== undefined &&
      Number(opts.resourceVersion) < this.compactedThrough
    ) {
      throw expired(`too old resource version: ${opts.resourceVersion} (${this.compactedThrough + 1})`);
    }
    let after = "";
    if (opts.continueToken !== undefined && opts.continueToken !== "") {
      const tok = decodeContinue(opts.continueToken);
      if (tok.rv < this.compactedThrough) {
        throw expired(
          "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.",
        );
      }
      after = tok.after;
    }
    const label = opts.label ?? everything;
    const field = opts.field ?? everything;
    const all = [...this.bucket(k).entries()]
      .filter(([, s]) => ns === undefined || meta(s.obj).namespace === ns)
      .filter(([, s]) => label(s.obj) && field(s.obj))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .filter(([key]) => after === "" || key > after);
    const limit = opts.limit !== undefined && opts.limit > 0 ? opts.limit : all.length;
    const page = all.slice(0, limit);
    const res: { page: StoredObject[]; resourceVersion: string; continueToken?: string; remaining?: number } = {
      page: page.map(([, s]) => s),
      resourceVersion: String(this.rv),
    };
    const last = page[page.length - 1];
    if (all.length > limit && last !== undefined) {
      res.continueToken = Buffer.from(JSON.stringify({ rv: this.rv, after: last[0] })).toString("base64url");
      res.remaining = all.length - limit;
    }
    return res;
  }

  /** Namespaces that exist and are not terminating. */
  private checkNamespace(k: ResourceKind, ns: string): void {
    if (!k.namespaced || !this.options.requireNamespaces) return;
    const n = this.find(NAMESPACE, "", ns);
    if (n === undefined) throw notFound(NAMESPACE, ns);
    if (meta(n.obj).deletionTimestamp !== undefined) {
      throw new ApiError(
        403,
        "Forbidden",
        `${k.plural} "${nameOf(n.obj)}" is forbidden: unable to create new content in namespace ${ns} because it is being terminated`,
        { name: ns, kind: k.plural, group: k.group },
      );
    }
  }

  // ------------------------------------------------------------------ writes

  /** POST: create (status dropped for kinds with a status subresource, as kube-apiserver does). */
  create(k: ResourceKind, ns: string, body: JsonObject, w: WriteOptions): KubeObject {
    return this.createInternal(k, ns, body, w, true);
  }

  private createInternal(
    k: ResourceKind,
    ns: string,
    body: JsonObject,
    w: WriteOptions,
    dropStatus: boolean,
    managers?: Manager[],
  ): KubeObject {
    const obj = clone(body) as KubeObject;
    const m = meta(obj);
    if ((m.name ?? "") === "" && (m.generateName ?? "") !== "") {
      m.name = `${m.generateName ?? ""}${randomBytes(4).toString("hex").slice(0, 5)}`;
    }
    const name = m.name ?? "";
    if (name === "")
      throw invalid(k, "", [{ field: "metadata.name", message: "Required value: name or generateName is required" }]);
    if (k.namespaced) {
      if (m.namespace !== undefined && m.namespace !== "" && m.namespace !== ns) {
        throw badRequest("the namespace of the provided object does not match the namespace sent on the request");
      }
      m.namespace = ns;
    } else delete m.namespace;
    if (this.find(k, ns, name) !== undefined) throw alreadyExists(k, name);
    this.checkNamespace(k, ns);
    obj.apiVersion = apiVersionOf(k);
    obj.kind = k.kind;
    m.uid = randomUUID();
    m.creationTimestamp = nowString();
    if (tracksGeneration(k)) m.generation = 1;
    else delete m.generation;
    delete m.deletionTimestamp;
    delete m.deletionGracePeriodSeconds;
    delete m.resourceVersion;
    delete m.managedFields;
    if (dropStatus && k.statusSubresource === true) Reflect.deleteProperty(obj, "status");
    if (k.group === "" && k.plural === "namespaces") {
      obj["spec"] = { finalizers: ["kubernetes"] };
      obj["status"] = { phase: "Active" };
    }
    const mgrs = managers ?? recordUpdate([], {}, obj, ctx(k, "main", w.manager));
    if (w.dryRun === true) return this.out(k, this.withManaged(obj, mgrs));
    const stored = this.commit(k, undefined, obj, mgrs);
    if (k.plural === "customresourcedefinitions" && k.group === "apiextensions.k8s.io") this.crdChanged(stored);
    this.collect();
    return this.out(k, stored);
  }

  /** PUT on the object or its status subresource, with optimistic concurrency on resourceVersion. */
  update(k: ResourceKind, ns: string, name: string, body: JsonObject, w: WriteOptions): KubeObject {
    const s = this.find(k, ns, name);
    if (s === undefined) throw notFound(k, name);
    const m = meta(body);
    if (m.name !== undefined && m.name !== name) {
      throw badRequest(`the name of the object (${m.name}) does not match the name on the URL (${name})`);
    }
    if (
      m.resourceVersion !== undefined &&
      m.resourceVersion !== "" &&
      m.resourceVersion !== meta(s.obj).resourceVersion
    ) {
      throw rvConflict(k, name);
    }
    const scope = w.scope ?? "main";
    const next = this.merged(k, s.obj, body, scope);
    const mgrs = recordUpdate(s.managers, s.obj, next, ctx(k, scope, w.manager));
    return this.finishUpdate(k, s, next, mgrs, w.dryRun === true);
  }

  /** PATCH (merge, strategic-as-merge, JSON patch, or server-side apply) on the object or its status. */
  patch(k: ResourceKind, ns: string, name: string, type: PatchType, body: Json, w: WriteOptions): KubeObject {
    const scope = w.scope ?? "main";
    const s = this.find(k, ns, name);
    if (type === "apply") {
      if (!isObject(body)) throw badRequest("apply configuration must be an object");
      const cm = meta(body);
      if (body["kind"] !== k.kind || body["apiVersion"] !== apiVersionOf(k)) {
        throw badRequest(
          `the apply configuration's apiVersion/kind (${JSON.stringify(body["apiVersion"] ?? null)}/${JSON.stringify(body["kind"] ?? null)}) does not match ${apiVersionOf(k)}/${k.kind}`,
        );
      }
      if (cm.name !== undefined && cm.name !== name) {
        throw badRequest(`the name of the object (${cm.name}) does not match the name on the URL (${name})`);
      }
      if (s === undefined) {
        if (scope === "status") throw notFound(k, name);
        const skeleton: KubeObject = {
          apiVersion: apiVersionOf(k),
          kind: k.kind,
          metadata: k.namespaced ? { name, namespace: ns } : { name },
        };
        const { object, managers } = serverSideApply(skeleton, [], body, w.force === true, ctx(k, scope, w.manager));
        return this.createInternal(k, ns, object, w, true, managers);
      }
      if (cm.resourceVersion !== undefined && cm.resourceVersion !== meta(s.obj).resourceVersion)
        throw rvConflict(k, name);
      const { object, managers } = serverSideApply(s.obj, s.managers, body, w.force === true, ctx(k, scope, w.manager));
      const next = this.merged(k, s.obj, object, scope);
      return this.finishUpdate(k, s, next, managers, w.dryRun === true);
    }
    if (s === undefined) throw notFound(k, name);
    const patched =
      type === "json"
        ? jsonPatch(s.obj, body)
        : type === "merge"
          ? mergePatch(s.obj, body)
          : strategicMergePatch(s.obj, body);
    if (!isObject(patched)) throw badRequest("patch result is not an object");
    const pm = meta(patched);
    if (pm.resourceVersion !== meta(s.obj).resourceVersion) {
      if (pm.resourceVersion !== undefined && pm.resourceVersion !== "") throw rvConflict(k, name);
    }
    const next = this.merged(k, s.obj, patched, scope);
    const mgrs = recordUpdate(s.managers, s.obj, next, ctx(k, scope, w.manager));
    return this.finishUpdate(k, s, next, mgrs, w.dryRun === true);
  }

  // The next state of an object from a full body: server-owned metadata kept, status or spec taken per scope.
  private merged(k: ResourceKind, current: KubeObject, body: JsonObject, scope: Scope): KubeObject {
    let next: KubeObject;
    if (scope === "status") {
      next = clone(current);
      if (body["status"] === undefined) Reflect.deleteProperty(next, "status");
      else next["status"] = clone(body["status"]);
    } else {
      next = clone(body);
      if (k.statusSubresource === true) {
        if (current["status"] === undefined) Reflect.deleteProperty(next, "status");
        else next["status"] = clone(current["status"]);
      }
    }
    const cm = meta(current);
    const nm = meta(next);
    for (const f of SERVER_METADATA) {
      if (cm[f] === undefined) Reflect.deleteProperty(nm, f);
      else (nm as Record<string, unknown>)[f] = cm[f];
    }
    nm.name = cm.name ?? "";
    if (cm.namespace === undefined) delete nm.namespace;
    else nm.namespace = cm.namespace;
    next.apiVersion = apiVersionOf(k);
    next.kind = k.kind;
    return next;
  }

  private finishUpdate(
    k: ResourceKind,
    s: StoredObject,
    next: KubeObject,
    mgrs: Manager[],
    dryRun: boolean,
  ): KubeObject {
    const nm = meta(next);
    nm.resourceVersion = meta(s.obj).resourceVersion ?? "";
    const candidate = this.withManaged(next, mgrs);
    if (jsonEqual(candidate, s.obj)) return this.out(k, s.obj); // no-op writes do not bump resourceVersion
    if (tracksGeneration(k) && specChanged(k, s.obj, next)) nm.generation = (meta(s.obj).generation ?? 0) + 1;
    if (dryRun) return this.out(k, this.withManaged(next, mgrs));
    let result: KubeObject;
    if (nm.deletionTimestamp !== undefined && (nm.finalizers ?? []).length === 0 && !namespaceHeld(k, next)) {
      result = this.remove(k, s, next);
    } else {
      result = this.commit(k, s, next, mgrs);
    }
    if (k.plural === "customresourcedefinitions" && k.group === "apiextensions.k8s.io") this.crdChanged(result);
    this.collect();
    return this.out(k, result);
  }

  /** DELETE: finalizers (and foreground propagation) keep the object with a deletionTimestamp until they clear. */
  delete(k: ResourceKind, ns: string, name: string, opts: DeleteOptions): KubeObject {
    const s = this.find(k, ns, name);
    if (s === undefined) throw notFound(k, name);
    const m = meta(s.obj);
    const pre = opts.preconditions;
    if (pre?.uid !== undefined && pre.uid !== m.uid) {
      throw new ApiError(
        409,
        "Conflict",
        `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${m.uid ?? ""}`,
        { name, group: k.group, kind: k.plural },
      );
    }
    if (pre?.resourceVersion !== undefined && pre.resourceVersion !== m.resourceVersion) {
      throw new ApiError(
        409,
        "Conflict",
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${m.resourceVersion ?? ""}`,
        { name, group: k.group, kind: k.plural },
      );
    }
    if (opts.dryRun === true) return this.out(k, s.obj);
    const result = this.deleteInternal(k, s, opts.propagationPolicy ?? "Background");
    this.collect();
    return this.out(k, result);
  }

  private deleteInternal(k: ResourceKind, s: StoredObject, policy: "Background" | "Foreground" | "Orphan"): KubeObject {
    const next = clone(s.obj);
    const m = meta(next);
    if (policy === "Orphan") this.orphanDependents(m.uid ?? "");
    const finalizers = [...(m.finalizers ?? [])];
    if (policy === "Foreground" && !finalizers.includes("foregroundDeletion")) finalizers.push("foregroundDeletion");
    if (finalizers.length > 0) m.finalizers = finalizers;
    const isNamespace = k.group === "" && k.plural === "namespaces";
    if (finalizers.length === 0 && !isNamespace) return this.remove(k, s, next);
    if (m.deletionTimestamp === undefined) {
      m.deletionTimestamp = nowString();
      m.deletionGracePeriodSeconds = 0;
      if (tracksGeneration(k)) m.generation = (m.generation ?? 0) + 1;
      if (isNamespace) next["status"] = { phase: "Terminating" };
    }
    if (jsonEqual(next, s.obj)) return s.obj;
    return this.commit(k, s, next, s.managers);
  }

  private orphanDependents(uid: string): void {
    for (const [, bucket] of this.objects) {
      for (const s of [...bucket.values()]) {
        const refs = meta(s.obj).ownerReferences ?? [];
        if (!refs.some((r) => r.uid === uid)) continue;
        const next = clone(s.obj);
        const left = refs.filter((r) => r.uid !== uid);
        if (left.length === 0) delete meta(next).ownerReferences;
        else meta(next).ownerReferences = left;
        this.internalUpdate(s, next);
      }
    }
  }

  private internalUpdate(s: StoredObject, next: KubeObject): void {
    const mgrs = recordUpdate(s.managers, s.obj, next, ctx(s.kind, "main", GC_MANAGER));
    const nm = meta(next);
    if (nm.deletionTimestamp !== undefined && (nm.finalizers ?? []).length === 0 && !namespaceHeld(s.kind, next)) {
      this.remove(s.kind, s, next);
    } else this.commit(s.kind, s, next, mgrs);
  }

  // ------------------------------------------------------------------ commit, history, watch

  private withManaged(obj: KubeObject, mgrs: readonly Manager[]): KubeObject {
    const o = clone(obj);
    const m = meta(o);
    if (mgrs.length > 0) m.managedFields = renderManagedFields(mgrs);
    else delete m.managedFields;
    return o;
  }

  private commit(k: ResourceKind, prev: StoredObject | undefined, next: KubeObject, mgrs: Manager[]): KubeObject {
    this.rv++;
    const obj = this.withManaged(next, mgrs);
    meta(obj).resourceVersion = String(this.rv);
    const m = meta(obj);
    const key = objKey(m.namespace ?? "", m.name ?? "");
    this.bucket(k).set(key, { kind: k, obj, managers: mgrs });
    this.record(k, prev === undefined ? "ADDED" : "MODIFIED", obj, prev?.obj);
    return obj;
  }

  private remove(k: ResourceKind, s: StoredObject, last: KubeObject): KubeObject {
    this.rv++;
    const obj = this.withManaged(last, s.managers);
    meta(obj).resourceVersion = String(this.rv);
    const m = meta(obj);
    this.bucket(k).delete(objKey(m.namespace ?? "", m.name ?? ""));
    this.record(k, "DELETED", obj, s.obj);
    if (k.plural === "customresourcedefinitions" && k.group === "apiextensions.k8s.io") this.crdRemoved(obj);
    return obj;
  }

  private record(k: ResourceKind, type: HistoryEvent["type"], obj: KubeObject, prev: KubeObject | undefined): void {
    const ev: HistoryEvent = { rv: this.rv, type, key: kindKey(k), obj };
    if (prev !== undefined) {
      ev.prev = prev;
      // A superseded version's text is needed again only by a watch replaying history (made anew then):
      // dropped, so the texts kept are about one per current object, not one per event in the history.
      this.wireCache.delete(prev);
    }
    this.history.push(ev);
    if (this.history.length - this.historyStart > this.options.historyLimit) {
      this.compactedThrough = this.history[this.historyStart]?.rv ?? this.compactedThrough;
      this.historyStart++;
      if (this.historyStart > this.options.historyLimit) {
        this.history = this.history.slice(this.historyStart);
        this.historyStart = 0;
      }
    }
    for (const w of this.watchers.get(ev.key) ?? []) this.dispatch(w, ev);
  }

  private dispatch(w: WatchSink, ev: HistoryEvent): void {
    const matches = (o: KubeObject): boolean =>
      (w.namespace === undefined || meta(o).namespace === w.namespace) && w.label(o) && w.field(o);
    const now = matches(ev.obj);
    const was = ev.prev !== undefined && matches(ev.prev);
    let type: EventType | undefined;
    if (ev.type === "DELETED") type = now || was ? "DELETED" : undefined;
    else if (ev.type === "ADDED") type = now ? "ADDED" : undefined;
    else type = now && was ? "MODIFIED" : now ? "ADDED" : was ? "DELETED" : undefined;
    if (type !== undefined) w.send(type, this.wire(w.kind, ev.obj));
  }

  /**
   * Starts a watch: from `resourceVersion` (replaying retained events after it), or with synthetic
   * ADDED events for the current state when it is unset or "0". Throws 410 Expired when the history
   * after that version was compacted away. Returns the function that ends the watch.
   */
  watch(sink: WatchSink, resourceVersion: string | undefined): () => void {
    if (resourceVersion === undefined || resourceVersion === "" || resourceVersion === "0") {
      const { page } = this.select(sink.kind, sink.namespace, { label: sink.label, field: sink.field });
      for (const s of page) sink.send("ADDED", this.wire(sink.kind, s.obj));
    } else {
      const from = Number(resourceVersion);
      if (!Number.isInteger(from) || from < 0) throw badRequest(`invalid resource version: ${resourceVersion}`);
      if (from < this.compactedThrough) {
        throw expired(`too old resource version: ${resourceVersion} (${this.compactedThrough + 1})`);
      }
      const key = kindKey(sink.kind);
      for (let i = this.firstAfter(from); i < this.history.length; i++) {
        const ev = this.history[i];
        if (ev !== undefined && ev.key === key) this.dispatch(sink, ev);
      }
    }
    const key = kindKey(sink.kind);
    let set = this.watchers.get(key);
    if (set === undefined) {
      set = new Set();
      this.watchers.set(key, set);
    }
    set.add(sink);
    return () => {
      this.watchers.get(key)?.delete(sink);
    };
  }

  // Index of the first retained event after resourceVersion `rv` (binary search: events are in rv order).
  private firstAfter(rv: number): number {
    let lo = this.historyStart;
    let hi = this.history.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.history[mid]?.rv ?? 0) <= rv) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Sends a BOOKMARK carrying the current resourceVersion to every watch that asked for bookmarks. */
  bookmark(): void {
    for (const set of this.watchers.values()) {
      for (const w of set) {
        if (!w.bookmarks) continue;
        const mark = (): JsonObject => ({
          apiVersion: apiVersionOf(w.kind),
          kind: w.kind.kind,
          metadata: { resourceVersion: String(this.rv) },
        });
        w.send("BOOKMARK", { json: () => JSON.stringify(mark()), copy: mark });
      }
    }
  }

  /** Drops the whole event history: watches from any older resourceVersion now get 410 Expired. */
  compact(): void {
    this.history = [];
    this.historyStart = 0;
    this.compactedThrough = this.rv;
  }

  /** Number of open watches (all kinds). */
  watchCount(): number {
    let n = 0;
    for (const set of this.watchers.values()) n += set.size;
    return n;
  }

  // ------------------------------------------------------------------ garbage collector

  // Runs the garbage collector and namespace controller to a fixed point.
  private collect(): void {
    if (!this.options.garbageCollector) return;
    for (let changed = true, rounds = 0; changed && rounds < 1000; rounds++) {
      changed = false;
      const byUid = new Map<string, StoredObject>();
      for (const [, b] of this.objects) for (const s of b.values()) byUid.set(meta(s.obj).uid ?? "", s);
      const gone = (uid: string): boolean => {
        const o = byUid.get(uid);
        if (o === undefined) return true;
        const om = meta(o.obj);
        return om.deletionTimestamp !== undefined && (om.finalizers ?? []).includes("foregroundDeletion");
      };
      for (const s of byUid.values()) {
        const m = meta(s.obj);
        const refs = m.ownerReferences ?? [];
        if (refs.length > 0 && m.deletionTimestamp === undefined && refs.every((r) => gone(r.uid))) {
          this.deleteInternal(s.kind, s, "Background");
          changed = true;
        }
      }
      for (const s of byUid.values()) {
        const m = meta(s.obj);
        if (m.deletionTimestamp === undefined || !this.current(s)) continue;
        if ((m.finalizers ?? []).includes("foregroundDeletion")) {
          const uid = m.uid ?? "";
          const hasDependents = [...this.objects.values()].some((b) =>
            [...b.values()].some((d) => (meta(d.obj).ownerReferences ?? []).some((r) => r.uid === uid)),
          );
          if (!hasDependents) {
            const next = clone(s.obj);
            const f = (m.finalizers ?? []).filter((x) => x !== "foregroundDeletion");
            if (f.length === 0) delete meta(next).finalizers;
            else meta(next).finalizers = f;
            this.internalUpdate(s, next);
            changed = true;
          }
        }
        if (s.kind.group === "" && s.kind.plural === "namespaces") changed = this.finalizeNamespace(s) || changed;
      }
    }
  }

  private current(s: StoredObject): boolean {
    const m = meta(s.obj);
    return this.bucket(s.kind).get(objKey(m.namespace ?? "", m.name ?? "")) === s;
  }

  private finalizeNamespace(s: StoredObject): boolean {
    const ns = meta(s.obj).name ?? "";
    let changed = false;
    let remaining = 0;
    for (const [, b] of this.objects) {
      for (const d of [...b.values()]) {
        if (!d.kind.namespaced || meta(d.obj).namespace !== ns) continue;
        remaining++;
        if (meta(d.obj).deletionTimestamp === undefined) {
          this.deleteInternal(d.kind, d, "Background");
          changed = true;
        }
      }
    }
    if (remaining > 0 && changed) return true;
    const still = [...this.objects.values()].some((b) =>
      [...b.values()].some((d) => d.kind.namespaced && meta(d.obj).namespace === ns),
    );
    if (still) return changed;
    const spec = s.obj["spec"];
    if (isObject(spec) && Array.isArray(spec["finalizers"]) && spec["finalizers"].length > 0) {
      const next = clone(s.obj);
      next["spec"] = {};
      this.internalUpdate(s, next);
      return true;
    }
    return changed;
  }

  // ------------------------------------------------------------------ CRDs

  private crdChanged(crd: KubeObject): void {
    if (!this.options.crdsServeKinds) return;
    const name = nameOf(crd);
    const established = meta(crd).deletionTimestamp === undefined ? kindsFromCrd(crd) : [];
    for (const k of this.crdKinds.get(name) ?? []) this.removeKind(k.group, k.version, k.plural);
    for (const k of established) this.addKind(k);
    this.crdKinds.set(name, established);
  }

  private crdRemoved(crd: KubeObject): void {
    if (!this.options.crdsServeKinds) return;
    const name = nameOf(crd);
    for (const k of this.crdKinds.get(name) ?? []) {
      this.removeKind(k.group, k.version, k.plural);
      this.objects.delete(kindKey(k));
    }
    this.crdKinds.delete(name);
  }

  // ------------------------------------------------------------------ test seeding

  /**
   * Creates or replaces an object as a controller would have left it, status included, bypassing
   * HTTP, namespace checks and request counting. Returns the stored object.
   */
  seed(body: JsonObject): KubeObject {
    const apiVersion = typeof body["apiVersion"] === "string" ? body["apiVersion"] : "";
    const kindName = typeof body["kind"] === "string" ? body["kind"] : "";
    const k = this.kindByGvk(apiVersion, kindName);
    if (k === undefined) throw new Error(`fake apiserver: ${apiVersion} ${kindName} is not served`);
    const m = (isObject(body["metadata"]) ? body["metadata"] : {}) as ObjectMetadata;
    const ns = k.namespaced ? (m.namespace ?? "default") : "";
    const existing = this.find(k, ns, m.name ?? "");
    const w: WriteOptions = { manager: "seed" };
    if (existing === undefined) {
      const saved = this.options.requireNamespaces;
      (this.options as { requireNamespaces: boolean }).requireNamespaces = false;
      try {
        return this.createInternal(k, ns, body, w, false);
      } finally {
        (this.options as { requireNamespaces: boolean }).requireNamespaces = saved;
      }
    }
    const copy = clone(body);
    delete (copy["metadata"] as ObjectMetadata | undefined)?.resourceVersion;
    const next = this.merged(k, existing.obj, copy, "main");
    if (copy["status"] === undefined) Reflect.deleteProperty(next, "status");
    else next["status"] = clone(copy["status"]);
    return this.finishUpdate(
      k,
      existing,
      next,
      recordUpdate(existing.managers, existing.obj, next, ctx(k, "main", "seed")),
      false,
    );
  }
}

function ctx(
  kind: ResourceKind,
  scope: Scope,
  manager: string,
): { kind: ResourceKind; scope: Scope; manager: string; apiVersion: string; now: string } {
  return { kind, scope, manager, apiVersion: apiVersionOf(kind), now: nowString() };
}

// metadata.generation moves on spec changes only: everything but metadata, and status when it is a subresource.
function specChanged(k: ResourceKind, a: KubeObject, b: KubeObject): boolean {
  const strip = (o: KubeObject): JsonObject => {
    const c: JsonObject = { ...o };
    Reflect.deleteProperty(c, "metadata");
    Reflect.deleteProperty(c, "apiVersion");
    Reflect.deleteProperty(c, "kind");
    if (k.statusSubresource === true) Reflect.deleteProperty(c, "status");
    return c;
  };
  return !jsonEqual(strip(a), strip(b));
}

// A terminating Namespace stays until the namespace controller clears spec.finalizers.
function namespaceHeld(k: ResourceKind, obj: KubeObject): boolean {
  if (!(k.group === "" && k.plural === "namespaces")) return false;
  const spec = obj["spec"];
  return isObject(spec) && Array.isArray(spec["finalizers"]) && spec["finalizers"].length > 0;
}

function decodeContinue(token: string): { rv: number; after: string } {
  try {
    const v = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as unknown;
    if (isObject(v) && typeof v["rv"] === "number" && typeof v["after"] === "string")
      return { rv: v["rv"], after: v["after"] };
  } catch {
    // fall through
  }
  throw badRequest("continue key is not valid: invalid token");
}
