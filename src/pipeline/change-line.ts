// One batch of the render loop (its keyed changes, the Infras it rebuilt) + each node group's
// snapshot before and after its publish → the change feed's log line: what changed, what was
// rebuilt, which groups got which new versions. Pure; undefined when nothing served changed.
import type { ObjectChange } from "../model/incremental/infras-read.js";
import type { ObjectRef } from "../model/types.js";
import { CLUSTER_TYPE_URL, ENDPOINT_TYPE_URL, LISTENER_TYPE_URL, ROUTE_TYPE_URL } from "../xds/resource/type-urls.js";

/** What the line needs of a snapshot: each type's version (a Snapshot of the xDS cache fits). */
export interface VersionedGroup {
  readonly types: ReadonlyMap<string, { readonly version: string }>;
}

/** Node group → its snapshot (absent: none). */
export type GroupSnapshots = ReadonlyMap<string, VersionedGroup>;

/** One type of a group whose version moved; `from`/`to` undefined: the type (or group) was absent. */
export interface TypeVersionChange {
  readonly typeUrl: string;
  readonly from: string | undefined;
  readonly to: string | undefined;
}

export interface GroupVersionChange {
  readonly group: string;
  readonly types: readonly TypeVersionChange[];
}

/** Where a changed object was read from (serve: a manifest file, relative to --manifests). */
export interface ChangeSource {
  readonly file: string;
  readonly line: number;
}

export interface ChangeLineInput {
  /** Numbers the changes, so the ACK line that follows names its change. */
  readonly seq: number;
  /** The batch's keyed changes; undefined = not known (a rendering from scratch). */
  readonly changes: readonly ObjectChange[] | undefined;
  /** The Infras ("<namespace>/<name>") the batch built again. */
  readonly rebuilt: ReadonlySet<string>;
  readonly before: GroupSnapshots;
  readonly after: GroupSnapshots;
  readonly locate?: (ref: ObjectRef) => ChangeSource | undefined;
}

export interface ChangedObject extends ObjectRef {
  readonly op: "added" | "changed" | "removed";
  readonly file?: string;
  readonly line?: number;
}

export interface ChangeLine {
  /** pino context: machine-readable copies of what the message says. */
  readonly fields: {
    readonly change: number;
    readonly objects: readonly ChangedObject[];
    readonly moreObjects: number;
    readonly infras: readonly string[];
    /** Group → short type name → "from→to". */
    readonly versions: Readonly<Record<string, Readonly<Record<string, string>>>>;
  };
  readonly msg: string;
  readonly groups: readonly GroupVersionChange[];
}

/** Objects named in a line; the rest are counted ("and 7 more"). */
export const MAX_OBJECTS = 5;
/** Characters of a version (a content hash) shown: enough to tell two apart in a log. */
const VERSION_CHARS = 8;

/** The groups whose type versions differ between two publishes, sorted by group. */
export function versionChanges(before: GroupSnapshots, after: GroupSnapshots): GroupVersionChange[] {
  const out: GroupVersionChange[] = [];
  for (const group of new Set([...before.keys(), ...after.keys()])) {
    const was = before.get(group);
    const now = after.get(group);
    if (was === now) continue; // a snapshot the publish did not touch keeps its object
    const types: TypeVersionChange[] = [];
    for (const typeUrl of new Set([...(was?.types.keys() ?? []), ...(now?.types.keys() ?? [])])) {
      const from = was?.types.get(typeUrl)?.version;
      const to = now?.types.get(typeUrl)?.version;
      if (from !== to) types.push({ typeUrl, from, to });
    }
    if (types.length > 0)
      out.push({ group, types: types.sort((a, b) => compare(shortType(a.typeUrl), shortType(b.typeUrl))) });
  }
  return out.sort((a, b) => compare(a.group, b.group));
}

/** The change feed's line for one batch, or undefined when no group's versions moved. */
export function changeLine(input: ChangeLineInput): ChangeLine | undefined {
  const groups = versionChanges(input.before, input.after);
  if (groups.length === 0) return undefined;
  const all = changedObjects(input.changes ?? []);
  // Only the objects the line names are located: a first rendering changes every object.
  const objects = all.slice(0, MAX_OBJECTS).map((o) => located(o, input.locate));
  const moreObjects = all.length - objects.length;
  const infras = [...input.rebuilt].sort(compare);
  const versions: Record<string, Record<string, string>> = {};
  for (const g of groups)
    versions[g.group] = Object.fromEntries(g.types.map((t) => [shortType(t.typeUrl), versionMove(t)]));
  const what =
    input.changes === undefined
      ? "full rendering"
      : all.length === 0
        ? "no object changed"
        : objects.map(describeObject).join(", ") + (moreObjects > 0 ? ` and ${String(moreObjects)} more` : "");
  const rebuilt = infras.length === 0 ? "no Infra rebuilt" : `rebuilt Infra ${infras.join(", ")}`;
  const pushed = groups
    .map((g) => `${g.group}: ${g.types.map((t) => `${shortType(t.typeUrl)} ${versionMove(t)}`).join(", ")}`)
    .join("; ");
  return {
    fields: { change: input.seq, objects, moreObjects, infras, versions },
    msg: `change ${String(input.seq)}: ${what} → ${rebuilt} → ${pushed}`,
    groups,
  };
}

/** The batch's objects, sorted by kind, namespace and name. */
function changedObjects(changes: readonly ObjectChange[]): ChangedObject[] {
  const out: ChangedObject[] = [];
  for (const c of changes) {
    const o = c.after ?? c.before;
    if (o === undefined) continue;
    const ref = { kind: c.kind, namespace: o.metadata.namespace, name: o.metadata.name };
    const op = c.before === undefined ? "added" : c.after === undefined ? "removed" : "changed";
    out.push({ ...ref, op });
  }
  return out.sort((a, b) => compare(a.kind, b.kind) || compare(a.namespace, b.namespace) || compare(a.name, b.name));
}

function located(o: ChangedObject, locate: ChangeLineInput["locate"]): ChangedObject {
  const { kind, namespace, name } = o;
  const at = locate?.({ kind, namespace, name });
  return at === undefined ? o : { ...o, file: at.file, line: at.line };
}

function describeObject(o: ChangedObject): string {
  const name = o.namespace === "" ? o.name : `${o.namespace}/${o.name}`;
  const at = o.file === undefined ? "" : ` (${o.file}:${String(o.line)})`;
  return `${o.kind} ${name} ${o.op}${at}`;
}

function versionMove(t: TypeVersionChange): string {
  const short = (v: string | undefined) => (v === undefined ? "none" : v.slice(0, VERSION_CHARS));
  return `${short(t.from)}→${short(t.to)}`;
}

const SHORT_TYPES: ReadonlyMap<string, string> = new Map([
  [LISTENER_TYPE_URL, "LDS"],
  [CLUSTER_TYPE_URL, "CDS"],
  [ENDPOINT_TYPE_URL, "EDS"],
  [ROUTE_TYPE_URL, "RDS"],
]);

/** "LDS", "CDS", "EDS", "RDS"; another type by its message name ("KeaConfig"). */
export function shortType(typeUrl: string): string {
  return SHORT_TYPES.get(typeUrl) ?? typeUrl.slice(typeUrl.lastIndexOf(".") + 1);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
