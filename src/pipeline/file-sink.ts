// Writes rendered outputs into a directory, touching only what changed: readers (CoreDNS's
// reload, Kea, a person running `watch cat`) see each file replaced whole, never half-written.
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";

export interface FileSinkResult {
  readonly written: readonly string[];
  readonly removed: readonly string[];
}

export class FileSink {
  readonly #dir: string;
  #current = new Map<string, string>();

  constructor(dir: string) {
    this.#dir = dir;
  }

  /** Makes the directory hold exactly `files` (relative path → content) among the files it manages. */
  async sync(files: ReadonlyMap<string, string>): Promise<FileSinkResult> {
    const written: string[] = [];
    const removed: string[] = [];
    for (const [rel, text] of files) {
      if (this.#current.get(rel) === text) continue;
      const path = join(this.#dir, rel);
      await mkdir(dirname(path), { recursive: true });
      const tmp = `${path}.oooi-tmp`;
      await writeFile(tmp, text);
      await rename(tmp, path);
      written.push(rel);
    }
    for (const rel of this.#current.keys()) {
      if (files.has(rel)) continue;
      await rm(join(this.#dir, rel), { force: true });
      removed.push(rel);
    }
    this.#current = new Map(files);
    return { written, removed };
  }
}
