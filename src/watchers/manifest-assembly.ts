// Parsed files → the ClusterState they describe, kept from one load to the next: a change of some
// files patches the state (each bucket a sorted list, patched, the watched kinds' in chunks; an
// unchanged bucket keeps its list, so the model sees it is unchanged) and says which objects
// changed, at a cost that grows with the changed objects, where assembleManifests re-sorts every
// bucket. Equal to assembleManifests of the
// same files while every file is readable (test/watchers/manifest-assembly.property.test.ts).
//
// One bad file never holds up the others: a file that cannot be read or parsed keeps contributing
// what its last good parse defined (nothing, if it never had one), and an identity defined twice
// (or whose status is given twice) keeps its last assembled version; each is a problem of the load,
// named as assembleManifests names it. A file that goes takes its objects with it.
import { patchSortedList } from "../util/merge-sorted.js";
import { ChunkedList, type KeyedChange } from "../util/chunked-list.js";
import type { ObjectChange, ObservedKind } from "../model/incremental/infras-read.js";
import type { ClusterState, InvalidObject, ObjectRef } from "../model/types.js";
import { ManifestSources, type ObjectSource } from "./manifest-sources.js";
import {
  byNamespaceName,
  byRef,
  compare,
  decoded,
  identityProblem,
  sourceOf,
  type Bucket,
  type IgnoredObject,
  type ManifestError,
  type ManifestLoad,
  type ParsedFile,
  type ParsedObject,
} from "./manifests.js";

interface Named {
  readonly metadata: { readonly namespace: string; readonly name: string };
}

/** What one identity puts into the state. */
interface Contribution {
  readonly bucket: Bucket;
  readonly ref: ObjectRef;
  /** Its bucket's entry; undefined when the schema refused it (it is in `invalid` then). */
  readonly value: Named | undefined;
  readonly invalid: InvalidObject | undefined;
  readonly unknown: InvalidObject | undefined;
  /** Our kinds: where it (and its status-only document) was read from. */
  readonly source: { readonly object: ObjectSource; readonly status: ObjectSource | undefined } | undefined;
}

/** Every object of one identity ("<group>/<kind> <namespace>/<name>") across the files. */
interface Holders {
  readonly objects: ParsedObject[];
  readonly statuses: ParsedObject[];
  contribution: Contribution | undefined;
}

const KIND_OF_BUCKET: Readonly<Record<Bucket, ObservedKind>> = {
  infras: "Infra",
  attachments: "InfraClusterAttachment",
  hostedClusters: "HostedCluster",
  nodePools: "NodePool",
  machines: "Machine",
  vmis: "VirtualMachineInstance",
  services: "Service",
  namespaces: "Namespace",
};

type OurBucket = "infras" | "attachments";
type WatchedBucket = Exclude<Bucket, OurBucket>;
const WATCHED_BUCKETS = (Object.keys(KIND_OF_BUCKET) as Bucket[]).filter(
  (b): b is WatchedBucket => b !== "infras" && b !== "attachments",
);

/**
 * A watched kind's key in its bucket, in the order of byNamespaceName (NUL sorts before any
 * character of a namespace): one kind per bucket, so no two identities share it.
 */
const nameKey = (o: Named): string => `${o.metadata.namespace}\u0000${o.metadata.name}`;

/** A readable load with the keyed changes since the previous readable one (the first: every object added). */
export interface AssembledLoad {
  readonly load: ManifestLoad;
  readonly changes: readonly ObjectChange[];
}

export class ManifestAssembly {
  /** Each file's latest parse, readable or not. */
  readonly #files = new Map<string, ParsedFile>();
  /** Each file's last good parse: the one whose objects are in the state. */
  readonly #accepted = new Map<string, ParsedFile>();
  readonly #holders = new Map<string, Holders>();
  /** Identities that cannot be assembled: a duplicate, a status twice, a status without its object. */
  readonly #bad = new Set<string>();
  /** Files whose latest parse failed (a walk of 18,000 files per change finds the few otherwise). */
  readonly #unreadable = new Set<string>();
  /** Files holding objects the model does not read (their list is rebuilt when one of them changes). */
  readonly #ignoring = new Set<string>();
  readonly #ours: Record<OurBucket, readonly Named[]> = { infras: [], attachments: [] };
  /** Chunked: a worker's Machine edited copies its chunk, not the list of every Machine. */
  readonly #watched = Object.fromEntries(WATCHED_BUCKETS.map((b) => [b, ChunkedList.of<Named>([], nameKey)])) as Record<
    WatchedBucket,
    ChunkedList<Named>
  >;
  #invalid: readonly InvalidObject[] = [];
  #unknown: readonly InvalidObject[] = [];
  #ignored: IgnoredObject[] = [];
  #paths: string[] = [];
  #sources = new ManifestSources();
  /** Identity → its kind and the value the last readable load held (the `before` of its next change). */
  readonly #pending = new Map<string, { kind: ObservedKind; before: Named | undefined }>();

  /** The current parse of a file, undefined when it is not part of the folder. */
  file(path: string): ParsedFile | undefined {
    return this.#files.get(path);
  }

  paths(): IterableIterator<string> {
    return this.#files.keys();
  }

  /** Applies new parses (undefined: the file is gone) and assembles the state. */
  update(changed: ReadonlyMap<string, ParsedFile | undefined>): AssembledLoad {
    const touched = new Set<string>();
    let ignoredChanged = false;
    let pathsChanged = false;
    for (const [path, file] of changed) {
      const old = this.#files.get(path);
      if (old === file) continue;
      if (old === undefined || file === undefined) pathsChanged = true;
      if (file === undefined) this.#files.delete(path);
      else this.#files.set(path, file);
      if (file?.error === undefined) this.#unreadable.delete(path);
      else this.#unreadable.add(path);
      // Unreadable now: its last good parse stays in the state.
      if (file?.error !== undefined) continue;
      const accepted = this.#accepted.get(path);
      if (accepted === file) continue;
      if (accepted !== undefined) for (const o of accepted.objects) this.#detach(o, touched);
      ignoredChanged ||= this.#ignoring.has(path) || (file !== undefined && holdsIgnored(file));
      this.#ignoring.delete(path);
      if (file === undefined) {
        this.#accepted.delete(path);
        continue;
      }
      this.#accepted.set(path, file);
      for (const o of file.objects) this.#attach(o, touched);
      if (holdsIgnored(file)) this.#ignoring.add(path);
    }
    this.#patch(touched);
    if (pathsChanged) this.#paths = [...this.#files.keys()].sort(compare);
    if (ignoredChanged) this.#ignored = this.#ignoredObjects();
    const [b, w] = [this.#ours, this.#watched];
    const state: ClusterState = {
      infras: b.infras as ClusterState["infras"],
      attachments: b.attachments as ClusterState["attachments"],
      hostedClusters: w.hostedClusters as unknown as ClusterState["hostedClusters"],
      nodePools: w.nodePools as unknown as ClusterState["nodePools"],
      machines: w.machines as unknown as ClusterState["machines"],
      vmis: w.vmis as unknown as ClusterState["vmis"],
      services: w.services as unknown as ClusterState["services"],
      namespaces: w.namespaces as unknown as ClusterState["namespaces"],
      invalid: this.#invalid,
      unknownFields: this.#unknown,
    };
    const changes: ObjectChange[] = [];
    for (const [id, { kind, before }] of this.#pending) {
      const after = this.#holders.get(id)?.contribution?.value;
      if (after !== before) changes.push({ kind, before, after } as ObjectChange);
    }
    this.#pending.clear();
    const load = {
      ok: true as const,
      state,
      files: this.#paths,
      ignored: this.#ignored,
      sources: this.#sources,
      problems: this.#problems(),
    };
    return { load, changes };
  }

  /** The unreadable files' problems and the bad identities', by file and line. */
  #problems(): ManifestError[] {
    const out: ManifestError[] = [];
    for (const path of this.#unreadable) {
      const error = this.#files.get(path)?.error;
      if (error !== undefined) out.push(error);
    }
    for (const id of this.#bad) {
      const h = this.#holders.get(id);
      const problem = h === undefined ? undefined : identityProblem(h.objects, h.statuses);
      if (problem !== undefined) out.push(problem);
    }
    return out.sort((a, b) => compare(a.file, b.file) || (a.line ?? 0) - (b.line ?? 0));
  }

  #attach(o: ParsedObject, touched: Set<string>): void {
    if (o.name === "") return; // only objects the model does not read lack a name; they are never duplicates
    const h = this.#holders.get(o.identity) ?? { objects: [], statuses: [], contribution: undefined };
    this.#holders.set(o.identity, h);
    (o.statusOnly === true ? h.statuses : h.objects).push(o);
    touched.add(o.identity);
  }

  #detach(o: ParsedObject, touched: Set<string>): void {
    const h = this.#holders.get(o.identity);
    if (h === undefined) return;
    const list = o.statusOnly === true ? h.statuses : h.objects;
    const i = list.indexOf(o);
    if (i >= 0) list.splice(i, 1);
    touched.add(o.identity);
  }

  /** Recomputes what each touched identity contributes and patches the lists it moved in. */
  #patch(touched: ReadonlySet<string>): void {
    const edits = new Map<Bucket, { removed: Set<Named>; added: Named[] }>();
    const edit = (bucket: Bucket) => {
      const e = edits.get(bucket) ?? { removed: new Set<Named>(), added: [] };
      edits.set(bucket, e);
      return e;
    };
    const invalid = { removed: new Set<InvalidObject>(), added: [] as InvalidObject[] };
    const unknown = { removed: new Set<InvalidObject>(), added: [] as InvalidObject[] };
    let sources: ManifestSources | undefined;
    for (const id of touched) {
      const h = this.#holders.get(id);
      if (h === undefined) continue;
      const bad = isBad(h);
      if (bad) this.#bad.add(id);
      else this.#bad.delete(id);
      const prev = h.contribution;
      // Defined twice, or its status given twice: the version assembled last stays until it is
      // resolved. A status without its object has nothing to stay.
      const next = !bad ? contributionOf(h) : h.objects.length === 0 ? undefined : prev;
      if (h.objects.length + h.statuses.length === 0) this.#holders.delete(id);
      if (next === undefined && prev === undefined) continue;
      h.contribution = next;
      const bucket = (next ?? prev)?.bucket as Bucket;
      if (!this.#pending.has(id)) this.#pending.set(id, { kind: KIND_OF_BUCKET[bucket], before: prev?.value });
      if (prev?.value !== next?.value) {
        if (prev?.value !== undefined) edit(bucket).removed.add(prev.value);
        if (next?.value !== undefined) edit(bucket).added.push(next.value);
      }
      if (prev?.invalid !== undefined) invalid.removed.add(prev.invalid);
      if (next?.invalid !== undefined) invalid.added.push(next.invalid);
      if (prev?.unknown !== undefined) unknown.removed.add(prev.unknown);
      if (next?.unknown !== undefined) unknown.added.push(next.unknown);
      if (prev?.source !== undefined || next?.source !== undefined) {
        sources ??= new ManifestSources(this.#sources);
        if (prev !== undefined) sources.delete(prev.ref);
        if (next?.source !== undefined) sources.add(next.ref, next.source.object, next.source.status);
      }
    }
    for (const [bucket, e] of edits) {
      if (bucket === "infras" || bucket === "attachments") {
        this.#ours[bucket] = patchSortedList(
          this.#ours[bucket],
          e.removed,
          e.added.sort(byNamespaceName),
          byNamespaceName,
        );
        continue;
      }
      // Removals first: an edit removes its old value and adds the new one under the same key.
      const keyed: KeyedChange<Named>[] = [];
      for (const x of e.removed) keyed.push([nameKey(x), undefined]);
      for (const x of e.added) keyed.push([nameKey(x), x]);
      this.#watched[bucket] = this.#watched[bucket].patch(keyed);
    }
    this.#invalid = patchSortedList(this.#invalid, invalid.removed, invalid.added.sort(byRef), byRef);
    this.#unknown = patchSortedList(this.#unknown, unknown.removed, unknown.added.sort(byRef), byRef);
    if (sources !== undefined) this.#sources = sources;
  }

  /** As assembleManifests lists them: in path order, then sorted by kind, namespace and name (stable). */
  #ignoredObjects(): IgnoredObject[] {
    const out: IgnoredObject[] = [];
    for (const path of [...this.#ignoring].sort(compare))
      for (const o of this.#accepted.get(path)?.objects ?? [])
        if (o.bucket === undefined)
          out.push({ apiVersion: o.apiVersion, kind: o.kind, namespace: o.namespace, name: o.name, file: o.file });
    return out.sort((a, b) => compare(a.kind, b.kind) || compare(a.namespace, b.namespace) || compare(a.name, b.name));
  }
}

function holdsIgnored(file: ParsedFile): boolean {
  return file.objects.some((o) => o.bucket === undefined);
}

/** The conditions under which assembleManifests fails on this identity. */
function isBad(h: Holders): boolean {
  if (h.objects.length > 1 || h.statuses.length > 1) return true;
  if (h.statuses.length === 0) return false;
  const o = h.objects[0];
  return o === undefined || (o.raw !== undefined && "status" in o.raw);
}

function contributionOf(h: Holders): Contribution | undefined {
  const [o] = h.objects;
  if (o?.bucket === undefined) return undefined;
  const ref = { kind: o.kind, namespace: o.namespace, name: o.name };
  if (o.bucket !== "infras" && o.bucket !== "attachments")
    return {
      bucket: o.bucket,
      ref,
      value: o.value as Named,
      invalid: undefined,
      unknown: undefined,
      source: undefined,
    };
  const [status] = h.statuses;
  // Joined by a status-only document: decoded again with it, as assembleManifests does.
  const d =
    status === undefined || o.raw === undefined ? o : decoded({ ...o.raw, status: status.raw?.["status"] }, o.kind);
  return {
    bucket: o.bucket,
    ref,
    value: d.value as Named | undefined,
    invalid: d.value === undefined ? { ref, errors: d.errors } : undefined,
    unknown: d.unknown.length > 0 ? { ref, errors: d.unknown } : undefined,
    source: { object: sourceOf(o), status: status === undefined ? undefined : sourceOf(status) },
  };
}
