// Rendered outputs (relative path → content) → files in an output folder, touching only what changed
// and only what oooi wrote: readers (CoreDNS's reload, Kea, a person running `watch cat`) see each
// file replaced whole, never half-written, and a user's own files in the folder are never removed.
// What oooi wrote is listed in the folder's index, so a later run (render, or serve after a restart)
// cleans up exactly the previous run's files.
import { mkdir, readFile, rename, rm, rmdir, writeFile } from "node:fs/promises";
import { dirname, isAbsolute, join, normalize, sep } from "node:path";

/** The index file in the output folder: the relative paths of the files oooi wrote there. */
export const INDEX_FILE = ".oooi-index.json";

export interface FileSinkResult {
  readonly written: readonly string[];
  readonly removed: readonly string[];
}

interface IndexFile {
  readonly generator: "oooi";
  readonly files: readonly string[];
}

/** Whether `rel` names a file strictly inside the folder (a hand-edited index must not reach outside it). */
function isInside(rel: string): boolean {
  const n = normalize(rel);
  return rel !== "" && !isAbsolute(n) && n !== ".." && !n.startsWith(`..${sep}`) && n !== INDEX_FILE;
}

/** The paths listed in dir's index; undefined when there is none (or it is not ours). */
export async function readIndex(dir: string): Promise<string[] | undefined> {
  let text: string;
  try {
    text = await readFile(join(dir, INDEX_FILE), "utf8");
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

/** The temporary a write goes through: ours by name, so removing a file removes a leftover one too. */
const tmpOf = (path: string): string => `${path}.oooi-tmp`;

async function writeAtomically(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = tmpOf(path);
  await writeFile(tmp, text);
  await rename(tmp, path);
}

export class FileSink {
  readonly #dir: string;
  /** What oooi holds in the folder: path → content, or undefined when the content is not known. */
  #current: Map<string, string | undefined>;

  private constructor(dir: string, current: Map<string, string | undefined>) {
    this.#dir = dir;
    this.#current = current;
  }

  /** A sink for dir that continues from the files its index lists (an earlier render or serve). */
  static async open(dir: string): Promise<FileSink> {
    const current = new Map<string, string | undefined>();
    for (const rel of (await readIndex(dir)) ?? []) {
      // Reading back what is there lets an unchanged file keep its mtime (CoreDNS reloads on change).
      current.set(rel, await readFile(join(dir, rel), "utf8").catch(() => undefined));
    }
    return new FileSink(dir, current);
  }

  /** Makes the folder hold exactly `files` among the files oooi wrote there, and indexes them. */
  async sync(files: ReadonlyMap<string, string>): Promise<FileSinkResult> {
    const written: string[] = [];
    const removed: string[] = [];
    const added = [...files.keys()].filter((rel) => !this.#current.has(rel));
    // Indexed before written: a crash half-way leaves no file that a later run would not clean.
    if (added.length > 0) await this.#writeIndex([...this.#current.keys(), ...added]);
    for (const [rel, text] of files) {
      if (!isInside(rel)) throw new Error(`refusing to write ${rel}: not a path inside the output folder`);
      if (this.#current.get(rel) === text) continue;
      await writeAtomically(join(this.#dir, rel), text);
      written.push(rel);
    }
    for (const rel of this.#current.keys()) {
      if (files.has(rel)) continue;
      await rm(join(this.#dir, rel), { force: true });
      // A run stopped in the middle of a write leaves its temporary behind, which would keep the
      // child's folder from ever being removed.
      await rm(tmpOf(join(this.#dir, rel)), { force: true });
      await this.#removeEmptyParents(rel);
      removed.push(rel);
    }
    this.#current = new Map(files);
    // Without removals the index written above already lists exactly `files`.
    if (removed.length > 0) await this.#writeIndex([...files.keys()]);
    return { written, removed };
  }

  async #writeIndex(files: readonly string[]): Promise<void> {
    const index: IndexFile = { generator: "oooi", files: [...new Set(files)].sort() };
    await writeAtomically(join(this.#dir, INDEX_FILE), `${JSON.stringify(index, null, 2)}\n`);
  }

  /** The child folders of a deleted Infra go with their last file; rmdir never removes a non-empty one. */
  async #removeEmptyParents(rel: string): Promise<void> {
    for (let d = dirname(rel); d !== "." && d !== "" && d !== sep; d = dirname(d)) {
      try {
        await rmdir(join(this.#dir, d));
      } catch {
        return; // not empty (a user's file, another child) or already gone
      }
    }
  }
}
