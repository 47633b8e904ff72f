// Rendered outputs (relative path → content) → an output folder that readers only ever see whole.
// Each change is written as a new generation folder and switched in with one rename of a symlink,
// the way Kubernetes' atomic writer updates ConfigMap volumes:
//
//   OUT/..2025_01_02_03_04_05.1a2b3c4d/   a generation: every file oooi renders, and its index
//   OUT/..data -> ..2025_01_02_03_04_05.1a2b3c4d   switched by renaming ..data_tmp over it
//   OUT/clusters -> ..data/clusters        one symlink per top-level name oooi writes, so the paths
//   OUT/status.json -> ..data/status.json  users point at (OUT/<ns>/<infra>-dns/Corefile) stay put
//   OUT/.oooi-index.json -> ..data/.oooi-index.json
//
// A reader opening OUT/<ns>/<infra>-dns/Corefile and then the zone files it names gets them from
// the generation ..data named at each open; CoreDNS (reload, file plugins) and Kea (config-reload)
// re-open paths, so they see the old set or the new one, never a Corefile without its zones. A
// reader that must read several files of one set resolves OUT/..data once (realpath) and reads
// beneath it. A write that fails (a full disk) or a process killed mid-write leaves ..data on the
// last complete generation; the partial one is removed by the next run. Unchanged files are hard
// links to the previous generation's (same inode and mtime, so nothing reloads for them).
// A user's files beside oooi's at OUT's top level are never touched; one a user put inside a
// generation (through a symlinked folder), a symlink included, is carried into the next generation.
import { randomBytes } from "node:crypto";
import {
  copyFile,
  link,
  lstat,
  mkdir,
  readFile,
  readdir,
  readlink,
  rename,
  rm,
  rmdir,
  symlink,
  writeFile,
} from "node:fs/promises";
import { dirname, isAbsolute, join, normalize, sep } from "node:path";
import { backoffDelay, realTimers, type BackoffOptions, type Timers } from "../util/backoff.js";

/** The index file in the output folder: the relative paths of the files oooi wrote there. */
export const INDEX_FILE = ".oooi-index.json";
/** The symlink naming the current generation. */
export const DATA_LINK = "..data";
const DATA_TMP = "..data_tmp";
const GENERATION = /^\.\.\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d\.[0-9a-f]+$/;

export interface FileSinkResult {
  readonly written: readonly string[];
  readonly removed: readonly string[];
}

interface IndexFile {
  readonly generator: "oooi";
  readonly files: readonly string[];
}

/** How the sink writes one file; injectable so a test can fill the disk. */
export type WriteFileFn = (path: string, text: string) => Promise<void>;

export interface FileSinkOptions {
  readonly writeFile?: WriteFileFn;
  readonly now?: () => number;
}

/** A file of the set could not be written: names it (relative to the folder) and the errno code. */
export class OutputWriteError extends Error {
  readonly file: string;
  readonly code: string | undefined;
  constructor(dir: string, file: string, cause: unknown) {
    const code = (cause as NodeJS.ErrnoException).code;
    const reason = code === "ENOSPC" ? "no space left on device" : (cause as Error).message;
    super(
      `cannot write ${file} in ${dir}: ${reason}${code === undefined || reason.includes(code) ? "" : ` (${code})`}`,
    );
    this.name = "OutputWriteError";
    this.file = file;
    this.code = code;
  }
}

/** Whether `rel` names a file strictly inside the folder and outside oooi's own ..-names. */
function isInside(rel: string): boolean {
  const n = normalize(rel);
  // One prefix test: ".." and "../…" (outside) and "..data", "..<generation>" (oooi's own) alike.
  return rel !== "" && !isAbsolute(n) && !n.startsWith("..") && n !== INDEX_FILE;
}

/**
 * The paths listed in dir's index; undefined when there is none (or it is not ours). Read in the
 * generation ..data names first: a run stopped after switching it but before placing the top-level
 * links left no OUT/.oooi-index.json, yet that set is its own. Then the earlier in-place layout's.
 */
export async function readIndex(dir: string): Promise<string[] | undefined> {
  let text: string;
  try {
    text = await readFile(join(dir, DATA_LINK, INDEX_FILE), "utf8").catch(() =>
      readFile(join(dir, INDEX_FILE), "utf8"),
    );
  } catch {
    return undefined;
  }
  try {
    const parsed = JSON.parse(text) as Partial<IndexFile>;
    if (parsed.generator !== "oooi" || !Array.isArray(parsed.files)) return undefined;
    return parsed.files.filter((f): f is string => typeof f === "string" && isInside(f));
  } catch {
    return undefined;
  }
}

/** The generation OUT/..data names, when it is one of ours. */
async function currentGeneration(dir: string): Promise<string | undefined> {
  try {
    const target = await readlink(join(dir, DATA_LINK));
    return GENERATION.test(target) ? target : undefined;
  } catch {
    return undefined;
  }
}

const topOf = (rel: string): string => normalize(rel).split(sep)[0] ?? rel;
/** Temporaries of the earlier, in-place layout: ours by name, never carried into a generation. */
const isTemporary = (name: string): boolean => name.endsWith(".oooi-tmp");

const pad = (n: number): string => String(n).padStart(2, "0");
function generationName(ms: number): string {
  const d = new Date(ms);
  const stamp = `${String(d.getUTCFullYear())}_${pad(d.getUTCMonth() + 1)}_${pad(d.getUTCDate())}_${pad(d.getUTCHours())}_${pad(d.getUTCMinutes())}_${pad(d.getUTCSeconds())}`;
  return `..${stamp}.${randomBytes(4).toString("hex")}`;
}

async function lstatOrUndefined(path: string): Promise<Awaited<ReturnType<typeof lstat>> | undefined> {
  try {
    return await lstat(path);
  } catch {
    return undefined;
  }
}

/** Every regular file under `root` (relative paths); nothing when it does not exist. */
async function filesUnder(root: string, prefix = ""): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(join(root, prefix), { withFileTypes: true });
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const e of entries) {
    const rel = prefix === "" ? e.name : join(prefix, e.name);
    if (e.isDirectory()) out.push(...(await filesUnder(root, rel)));
    // A user's symlink is theirs as much as a file (oooi writes none inside a generation).
    else if (e.isFile() || e.isSymbolicLink()) out.push(rel);
  }
  return out;
}

export class FileSink {
  readonly #dir: string;
  readonly #write: WriteFileFn;
  readonly #now: () => number;
  /** What oooi holds in the folder: path → content, or undefined when the content is not known. */
  #current: Map<string, string | undefined>;

  private constructor(dir: string, current: Map<string, string | undefined>, options: FileSinkOptions) {
    this.#dir = dir;
    this.#current = current;
    this.#write = options.writeFile ?? ((path, text) => writeFile(path, text));
    this.#now = options.now ?? Date.now;
  }

  /**
   * A sink for dir that continues from the files its index lists (an earlier render or serve, in
   * this layout or the earlier in-place one); a generation a stopped run left half-written goes.
   */
  static async open(dir: string, options: FileSinkOptions = {}): Promise<FileSink> {
    const current = new Map<string, string | undefined>();
    const generation = await currentGeneration(dir);
    const base = generation === undefined ? dir : join(dir, generation);
    for (const rel of (await readIndex(dir)) ?? []) {
      // Reading back what is there lets an unchanged file stay a link to the same inode.
      current.set(rel, await readFile(join(base, rel), "utf8").catch(() => undefined));
    }
    const sink = new FileSink(dir, current, options);
    await sink.#removeStaleGenerations(await currentGeneration(dir));
    await rm(join(dir, DATA_TMP), { force: true });
    // A folder or link a stopped switch left aside.
    for (const name of await readdir(dir).catch(() => []))
      if (name.startsWith("..oooi-")) await rm(join(dir, name), { recursive: true, force: true });
    return sink;
  }

  /** Makes the folder hold exactly `files` among the files oooi wrote there, as one switch. */
  async sync(files: ReadonlyMap<string, string>): Promise<FileSinkResult> {
    for (const rel of files.keys())
      if (!isInside(rel)) throw new Error(`refusing to write ${rel}: not a path inside the output folder`);
    const written = [...files].filter(([rel, text]) => this.#current.get(rel) !== text).map(([rel]) => rel);
    const removed = [...this.#current.keys()].filter((rel) => !files.has(rel));
    const previous = await currentGeneration(this.#dir);
    if (written.length === 0 && removed.length === 0 && previous !== undefined && (await this.#linksInPlace(files)))
      return { written, removed };

    await mkdir(this.#dir, { recursive: true });
    const generation = generationName(this.#now());
    const root = join(this.#dir, generation);
    let carried: string[];
    try {
      carried = await this.#fill(root, files, previous);
    } catch (e) {
      // Nothing of a set that could not be written whole stays behind (it would also hold the space).
      await rm(root, { recursive: true, force: true });
      throw e;
    }
    // The switch: readers see the previous generation until this rename, the new one after it.
    await rm(join(this.#dir, DATA_TMP), { force: true });
    await symlink(generation, join(this.#dir, DATA_TMP));
    await rename(join(this.#dir, DATA_TMP), join(this.#dir, DATA_LINK));
    await this.#placeLinks(new Set([...[...files.keys(), ...carried].map(topOf), INDEX_FILE]), removed);
    this.#current = new Map(files);
    await this.#removeStaleGenerations(generation);
    return { written, removed };
  }

  /** Writes the generation: changed files, links to unchanged ones, a user's carried files, the index. */
  async #fill(root: string, files: ReadonlyMap<string, string>, previous: string | undefined): Promise<string[]> {
    const made = new Set<string>();
    const folder = async (path: string): Promise<void> => {
      const d = dirname(path);
      if (made.has(d)) return;
      await mkdir(d, { recursive: true });
      made.add(d);
    };
    const put = async (rel: string, text: string): Promise<void> => {
      const path = join(root, rel);
      try {
        await folder(path);
        await this.#write(path, text);
      } catch (e) {
        throw new OutputWriteError(this.#dir, rel, e);
      }
    };
    const from = previous === undefined ? undefined : join(this.#dir, previous);
    for (const [rel, text] of files) {
      if (from !== undefined && this.#current.get(rel) === text) {
        const linked = await folder(join(root, rel)).then(
          () => linkOrCopy(join(from, rel), join(root, rel)),
          () => false,
        );
        if (linked) continue;
      }
      await put(rel, text);
    }
    const carried: string[] = [];
    for (const rel of await this.#userFiles(previous)) {
      if (files.has(rel)) continue;
      const source = previous === undefined ? join(this.#dir, rel) : join(this.#dir, previous, rel);
      try {
        await folder(join(root, rel));
      } catch (e) {
        throw new OutputWriteError(this.#dir, rel, e);
      }
      if (await linkOrCopy(source, join(root, rel))) carried.push(rel);
    }
    const index: IndexFile = { generator: "oooi", files: [...files.keys()].sort() };
    await put(INDEX_FILE, `${JSON.stringify(index, null, 2)}\n`);
    return carried;
  }

  /**
   * Files in oooi's folders that oooi did not write (a user's, through a symlinked folder, or in a
   * folder of the earlier in-place layout): they move on with each generation.
   */
  async #userFiles(previous: string | undefined): Promise<string[]> {
    const ours = (rel: string): boolean => this.#current.has(rel) || rel === INDEX_FILE || isTemporary(rel);
    if (previous !== undefined) return (await filesUnder(join(this.#dir, previous))).filter((rel) => !ours(rel));
    const found: string[] = [];
    for (const top of new Set([...this.#current.keys()].map(topOf))) {
      const s = await lstatOrUndefined(join(this.#dir, top));
      if (s?.isDirectory() !== true) continue;
      for (const rel of await filesUnder(this.#dir, top)) if (!ours(rel)) found.push(rel);
    }
    return found;
  }

  /** OUT/<top> → ..data/<top> for every top-level name; names no longer rendered go. */
  async #placeLinks(tops: ReadonlySet<string>, removed: readonly string[]): Promise<void> {
    for (const top of tops) {
      const path = join(this.#dir, top);
      const target = join(DATA_LINK, top);
      const s = await lstatOrUndefined(path);
      if (s?.isSymbolicLink() === true && (await readlink(path)) === target) continue;
      if (s?.isDirectory() === true) {
        // The earlier in-place layout's folder (its user files were carried into the generation).
        const aside = join(this.#dir, `..oooi-old-${top}`);
        await rm(aside, { recursive: true, force: true });
        await rename(path, aside);
        await symlink(target, path);
        await rm(aside, { recursive: true, force: true });
        continue;
      }
      // A file (earlier layout) or a stale link is replaced in one rename.
      const tmp = join(this.#dir, `..oooi-link-${top}`);
      await rm(tmp, { force: true });
      await symlink(target, tmp);
      await rename(tmp, path);
    }
    for (const top of new Set(removed.map(topOf))) {
      if (tops.has(top)) continue;
      const path = join(this.#dir, top);
      const s = await lstatOrUndefined(path);
      if (s?.isSymbolicLink() === true && (await readlink(path)) === join(DATA_LINK, top)) await rm(path);
      else if (s?.isDirectory() === true) {
        // The earlier in-place layout's folder: the files oooi wrote there (and a stopped write's
        // temporary of each) go; a user's file was carried, so its folder became a link above.
        for (const rel of removed)
          if (topOf(rel) === top)
            for (const p of [rel, `${rel}.oooi-tmp`]) await rm(join(this.#dir, p), { force: true });
        await removeEmptyFolders(path);
      } else if (s?.isFile() === true) await rm(path);
    }
  }

  async #linksInPlace(files: ReadonlyMap<string, string>): Promise<boolean> {
    for (const top of new Set([...[...files.keys()].map(topOf), INDEX_FILE])) {
      const path = join(this.#dir, top);
      const s = await lstatOrUndefined(path);
      if (s?.isSymbolicLink() !== true || (await readlink(path)) !== join(DATA_LINK, top)) return false;
    }
    return true;
  }

  async #removeStaleGenerations(keep: string | undefined): Promise<void> {
    let names: string[];
    try {
      names = await readdir(this.#dir);
    } catch {
      return;
    }
    for (const name of names)
      if (GENERATION.test(name) && name !== keep) await rm(join(this.#dir, name), { recursive: true, force: true });
  }
}

/** A hard link (same inode: no reload for an unchanged file), else a copy; false when neither works. */
async function linkOrCopy(from: string, to: string): Promise<boolean> {
  try {
    await link(from, to);
    return true;
  } catch {
    try {
      // A symlink goes on as a symlink: copyFile would copy what it points at.
      if ((await lstat(from)).isSymbolicLink()) await symlink(await readlink(from), to);
      else await copyFile(from, to);
      return true;
    } catch {
      return false;
    }
  }
}

/** Removes the empty folders under and at `path`; a folder holding a file stays. */
async function removeEmptyFolders(path: string): Promise<void> {
  const entries = await readdir(path, { withFileTypes: true }).catch(() => []);
  for (const e of entries) if (e.isDirectory()) await removeEmptyFolders(join(path, e.name));
  // rmdir, not rm: rm refuses every folder without `recursive` (ERR_FS_EISDIR), rmdir a non-empty one.
  await rmdir(path).catch(() => undefined);
}

export interface RetryingSinkEvents {
  readonly synced: (result: FileSinkResult) => void;
  /** A sync failed; the newest set is tried again after `retryInMs`. */
  readonly failed: (error: Error, attempt: number, retryInMs: number) => void;
}

/**
 * serve's writer: syncs the newest set it was given, one sync at a time, and after a failure (a
 * full disk) tries again with backoff until it succeeds; a newer set given meanwhile replaces the
 * one waiting. The folder keeps its last complete generation throughout.
 */
export class RetryingFileSink {
  readonly #sink: Promise<FileSink>;
  readonly #events: RetryingSinkEvents;
  readonly #timers: Timers;
  readonly #backoff: BackoffOptions;
  #wanted: ReadonlyMap<string, string> | undefined;
  #running = false;
  #attempt = 0;
  #timer: unknown;
  #closed = false;

  constructor(
    sink: Promise<FileSink>,
    events: RetryingSinkEvents,
    options: { readonly timers?: Timers; readonly backoff?: BackoffOptions } = {},
  ) {
    this.#sink = sink;
    this.#events = events;
    this.#timers = options.timers ?? realTimers;
    this.#backoff = options.backoff ?? { initialMs: 500, maxMs: 30_000 };
  }

  submit(files: ReadonlyMap<string, string>): void {
    this.#wanted = files;
    if (!this.#running && this.#timer === undefined) void this.#run();
  }

  close(): void {
    this.#closed = true;
    if (this.#timer !== undefined) this.#timers.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  async #run(): Promise<void> {
    this.#running = true;
    try {
      while (this.#wanted !== undefined && !this.#closed) {
        const files = this.#wanted;
        this.#wanted = undefined;
        try {
          const result = await (await this.#sink).sync(files);
          this.#attempt = 0;
          this.#events.synced(result);
        } catch (e) {
          // Unless a newer set arrived meanwhile, this one is tried again.
          this.#wanted ??= files;
          this.#attempt += 1;
          const delay = backoffDelay(this.#attempt, this.#backoff);
          this.#events.failed(e as Error, this.#attempt, delay);
          this.#timer = this.#timers.setTimeout(() => {
            this.#timer = undefined;
            void this.#run();
          }, delay);
          return;
        }
      }
    } finally {
      this.#running = false;
    }
  }
}
