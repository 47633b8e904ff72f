// The manifest folder read again and again: each file is parsed once per content (per-file cache
// keyed by path, stat and content hash), and a load says which objects changed since the previous
// one as keyed changes (src/model/feeds.ts), so the model rebuilds only the Infras they feed.
import { createHash } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import type { ObjectChange, ObservedKind } from "../model/feeds.js";
import {
  assembleManifests,
  errnoMessage,
  listManifestFiles,
  parseManifestFile,
  type Bucket,
  type ManifestLoad,
  type ParsedFile,
} from "./manifests.js";

/** A readable load and the parsed files it was assembled from (compare two with manifestChanges). */
export interface ManifestRead {
  readonly load: ManifestLoad;
  /** Path → its parse; an unchanged file keeps the same object (and so do its objects). */
  readonly parsed: ReadonlyMap<string, ParsedFile>;
}

interface Cached {
  /** mtime, size and inode: a file whose stat did not move is not read again. */
  readonly stat: string;
  readonly hash: string;
  readonly parsed: ParsedFile;
}

export class ManifestReader {
  readonly #dir: string;
  readonly #cache = new Map<string, Cached>();

  constructor(dir: string) {
    this.#dir = dir;
  }

  /** Lists the folder and parses the files whose stat and content changed since they were cached. */
  async read(): Promise<ManifestRead> {
    const none = new Map<string, ParsedFile>();
    let paths: string[];
    try {
      if (!(await stat(this.#dir)).isDirectory())
        return { load: { ok: false, error: { file: this.#dir, message: "not a directory" } }, parsed: none };
      paths = await listManifestFiles(this.#dir);
    } catch (e) {
      const message = `cannot read manifest directory: ${errnoMessage(e)}`;
      return { load: { ok: false, error: { file: this.#dir, message } }, parsed: none };
    }
    const parsed = new Map<string, ParsedFile>();
    const reads = await Promise.all(paths.map((path) => this.#file(path)));
    // Unreadable files are reported before any parse error, in path order.
    for (const [i, r] of reads.entries()) {
      const path = paths[i] ?? "";
      if (typeof r === "string") {
        return { load: { ok: false, error: { file: path, message: `cannot read file: ${r}` } }, parsed: none };
      }
      parsed.set(path, r);
    }
    for (const path of this.#cache.keys()) if (!parsed.has(path)) this.#cache.delete(path);
    return { load: assembleManifests([...parsed.values()]), parsed };
  }

  /** The file's parse (cached when its stat or content did not change), or why it cannot be read. */
  async #file(path: string): Promise<ParsedFile | string> {
    const cached = this.#cache.get(path);
    const abs = join(this.#dir, path);
    try {
      const s = await stat(abs);
      const key = `${String(s.mtimeMs)}:${String(s.size)}:${String(s.ino)}`;
      if (cached?.stat === key) return cached.parsed;
      const text = await readFile(abs, "utf8");
      const hash = createHash("sha256").update(text).digest("base64");
      const parsed = cached?.hash === hash ? cached.parsed : parseManifestFile({ path, text });
      this.#cache.set(path, { stat: key, hash, parsed });
      return parsed;
    } catch (e) {
      this.#cache.delete(path);
      return errnoMessage(e);
    }
  }
}

/** The kind of the keyed change an object of this bucket makes. */
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

/**
 * The keyed changes from one read to the next: only files whose parse changed are compared
 * (an object that moved between files is one change, or none). Objects the schema refused are
 * absent (ClusterState.invalid carries them), as they are from the state.
 */
export function manifestChanges(
  before: ReadonlyMap<string, ParsedFile>,
  after: ReadonlyMap<string, ParsedFile>,
): ObjectChange[] {
  const pairs = new Map<string, { kind: ObjectChange["kind"]; before: unknown; after: unknown }>();
  const visit = (file: ParsedFile, side: "before" | "after"): void => {
    for (const o of file.objects) {
      if (o.bucket === undefined || o.value === undefined) continue;
      const kind = KIND_OF_BUCKET[o.bucket];
      const key = `${kind} ${o.namespace}/${o.name}`;
      const pair = pairs.get(key) ?? { kind, before: undefined, after: undefined };
      pair[side] = o.value;
      pairs.set(key, pair);
    }
  };
  for (const [path, file] of before) if (after.get(path) !== file) visit(file, "before");
  for (const [path, file] of after) if (before.get(path) !== file) visit(file, "after");
  const out: ObjectChange[] = [];
  for (const pair of pairs.values()) if (pair.before !== pair.after) out.push(pair as ObjectChange);
  return out;
}
