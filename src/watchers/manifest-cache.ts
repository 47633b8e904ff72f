// The manifest folder read again and again: each file is parsed once per content (per-file cache
// keyed by path, stat and content hash), the state is patched from the files that changed
// (./manifest-assembly.ts), and a read says which objects changed since the previous readable one
// as keyed changes (src/model/incremental/infras-read.ts), so the model rebuilds only the Infras they feed.
//
// A change the watcher reports is read alone (readPaths); the whole folder is read at start, when
// a reported path is one a lone read cannot judge (a folder, a hidden entry such as a ConfigMap
// volume's ..data swap), and — as the net for events the watcher dropped — scanned in the background
// (scan), which reads only what differs.
import { createHash } from "node:crypto";
import { lstat, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { ObjectChange } from "../model/incremental/infras-read.js";
import { ManifestAssembly } from "./manifest-assembly.js";
import { errnoMessage, formatManifestError, type ManifestLoad, type ParsedFile } from "./manifests.js";
import { statTreeOffThread } from "./manifest-scan.js";
import { isManifestPath, listManifestTree, statKey } from "./manifest-tree.js";
import { DEFAULT_MAX_MANIFEST_BYTES, readManifestText } from "./manifest-file-read.js";
import { BULK_READ_FILES, parseManifestFileOffThread } from "./manifest-parse-pool.js";
import { SerialCalls } from "../util/serial-calls.js";

/** One read of the folder. */
export interface ManifestRead {
  readonly load: ManifestLoad;
  /** Keyed changes since the previous readable read (none when this one is unreadable). */
  readonly changes: readonly ObjectChange[];
  /** Nothing differs from the previous read: no file's content, no path, the same error if any. */
  readonly unchanged: boolean;
}

/** What a background scan found: read these paths, or the whole folder. */
export type ScanResult = { readonly full: true } | { readonly full: false; readonly paths: readonly string[] };

interface Cached {
  /** statKey: a file whose stat did not move is not read again by a whole-folder read. */
  readonly stat: string;
  readonly hash: string;
  readonly parsed: ParsedFile;
}

const parentOf = (rel: string): string => {
  const d = dirname(rel);
  return d === "." ? "" : d;
};

export class ManifestReader {
  readonly #dir: string;
  readonly #cache = new Map<string, Cached>();
  readonly #assembly = new ManifestAssembly();
  /** Folders the last whole-folder read walked: a file reported in one of them can be read alone. */
  #dirs = new Set<string>();
  /** The last read's outcome ("" = readable, else its error), and whether it failed reading (not parsing). */
  #last: string | undefined;
  #readFailed = true;
  /** Reads run one at a time: each continues from the state the previous one left. */
  readonly #reads = new SerialCalls();

  readonly #maxFileBytes: number;

  constructor(dir: string, opts: { readonly maxFileBytes?: number } = {}) {
    this.#dir = dir;
    this.#maxFileBytes = opts.maxFileBytes ?? DEFAULT_MAX_MANIFEST_BYTES;
  }

  /** Lists the folder and parses the files whose stat and content changed since they were cached. */
  read(): Promise<ManifestRead> {
    return this.#reads.run(() => this.#readAll());
  }

  /**
   * Reads only these paths (relative to the folder, as the watcher reports them), each by content
   * (a stat may not move between two quick writes); the whole folder when one cannot be judged alone.
   */
  readPaths(paths: Iterable<string>): Promise<ManifestRead> {
    const list = [...new Set(paths)];
    return this.#reads.run(() => this.#readSome(list));
  }

  /**
   * Stats every file without changing anything and says what to read: files whose stat differs
   * from the cache, that appeared or that went; the whole folder when a folder appeared or went.
   */
  async scan(): Promise<ScanResult> {
    if (this.#readFailed) return { full: true };
    let tree: Awaited<ReturnType<typeof statTreeOffThread>>;
    try {
      tree = await statTreeOffThread(this.#dir);
    } catch {
      return { full: true };
    }
    if (tree.dirs.length !== this.#dirs.size || tree.dirs.some((d) => !this.#dirs.has(d))) return { full: true };
    const listed = new Set(tree.files);
    const paths = [...this.#assembly.paths()].filter((p) => !listed.has(p));
    for (const [i, path] of tree.files.entries()) {
      const key = tree.keys[i];
      if (key === undefined || this.#cache.get(path)?.stat !== key) paths.push(path);
    }
    return { full: false, paths };
  }

  async #readAll(): Promise<ManifestRead> {
    let tree: Awaited<ReturnType<typeof listManifestTree>>;
    try {
      if (!(await stat(this.#dir)).isDirectory()) return this.#failed({ file: this.#dir, message: "not a directory" });
      tree = await listManifestTree(this.#dir);
    } catch (e) {
      return this.#failed({ file: this.#dir, message: `cannot read manifest directory: ${errnoMessage(e)}` });
    }
    const bulk = tree.files.length >= BULK_READ_FILES;
    const reads = await Promise.all(tree.files.map((path) => this.#file(path, false, bulk)));
    const changed = new Map<string, ParsedFile | undefined>();
    const listed = new Set(tree.files);
    for (const path of this.#assembly.paths()) if (!listed.has(path)) changed.set(path, undefined);
    for (const [i, r] of reads.entries()) {
      const path = tree.files[i] ?? "";
      // An unreadable file is a problem of its own: what it defined at its last good read stays.
      const parsed = typeof r === "string" ? this.#unreadable(path, r) : r;
      if (this.#assembly.file(path) !== parsed) changed.set(path, parsed);
    }
    for (const path of this.#cache.keys()) if (!listed.has(path)) this.#cache.delete(path);
    this.#dirs = tree.dirs;
    return this.#assembled(changed);
  }

  async #readSome(paths: readonly string[]): Promise<ManifestRead> {
    if (this.#readFailed) return this.#readAll();
    const changed = new Map<string, ParsedFile | undefined>();
    for (const path of paths) {
      const r = await this.#alone(path);
      if (r === "whole") return this.#readAll();
      if (r !== "ignore" && this.#assembly.file(path) !== r) changed.set(path, r);
    }
    return this.#assembled(changed);
  }

  /** One reported path read alone: its parse, undefined when it is gone, "ignore" (not a manifest), or "whole". */
  async #alone(path: string): Promise<ParsedFile | undefined | "ignore" | "whole"> {
    const abs = join(this.#dir, path);
    if (!isManifestPath(path)) {
      // A folder (new, gone or renamed) or a hidden entry (a ConfigMap volume's ..data) may stand for many files.
      if (path.split("/").some((part) => part.startsWith(".")) || this.#dirs.has(path)) return "whole";
      const s = await stat(abs).catch(() => undefined);
      return s?.isDirectory() === true ? "whole" : "ignore";
    }
    if (!this.#dirs.has(parentOf(path))) return "whole";
    // A new folder with a manifest's name: the walk reads what it holds.
    if ((await stat(abs).catch(() => undefined))?.isDirectory() === true) return "whole";
    const r = await this.#file(path, true);
    if (typeof r !== "string") return r;
    // Gone, unless a dangling symbolic link is left (unreadable, as the whole read has it).
    if (
      r.startsWith("ENOENT") &&
      (await lstat(abs).then(
        () => false,
        () => true,
      ))
    ) {
      this.#cache.delete(path);
      return undefined;
    }
    return this.#unreadable(path, r);
  }

  /** The parse of a file that cannot be read: no objects, its problem; the same object while the problem is the same. */
  #unreadable(path: string, reason: string): ParsedFile {
    const message = `cannot read file: ${reason}`;
    const current = this.#assembly.file(path);
    if (current?.error?.message === message && current.objects.length === 0) return current;
    return { path, objects: [], error: { file: path, message } };
  }

  /** The file's parse (cached when its content, or without `byContent` its stat, did not change), or why it cannot be read. */
  async #file(path: string, byContent: boolean, bulk = false): Promise<ParsedFile | string> {
    const cached = this.#cache.get(path);
    const abs = join(this.#dir, path);
    let key: string;
    try {
      key = statKey(await stat(abs));
    } catch (e) {
      this.#cache.delete(path);
      return errnoMessage(e);
    }
    if (!byContent && cached?.stat === key) return cached.parsed;
    const read = await readManifestText(abs, this.#maxFileBytes);
    if (!read.ok) {
      // Nothing of an unreadable file is kept: a removed or refused large file leaves no text behind.
      this.#cache.delete(path);
      return read.message;
    }
    const hash = createHash("sha256").update(read.text).digest("base64");
    // A changed file: only its edited documents are parsed again.
    const parsed =
      cached?.hash === hash
        ? cached.parsed
        : await parseManifestFileOffThread({ path, text: read.text }, cached?.parsed, bulk);
    this.#cache.set(path, { stat: key, hash, parsed });
    return parsed;
  }

  #failed(error: { file: string; message: string }): ManifestRead {
    this.#readFailed = true;
    return this.#result({ ok: false, error }, [], false);
  }

  #assembled(changed: ReadonlyMap<string, ParsedFile | undefined>): ManifestRead {
    this.#readFailed = false;
    const { load, changes } = this.#assembly.update(changed);
    return this.#result(load, changes, changed.size > 0);
  }

  #result(load: ManifestLoad, changes: readonly ObjectChange[], filesChanged: boolean): ManifestRead {
    const outcome = load.ok ? "" : formatManifestError(load.error);
    const unchanged = !filesChanged && outcome === this.#last;
    this.#last = outcome;
    return { load, changes, unchanged };
  }
}
