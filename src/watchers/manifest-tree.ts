// Which files of a manifest folder are manifests, and the folder walked and stat'ed. Apart from the
// parsing (./manifests.ts) so that the scan worker (./manifest-scan-worker.ts) loads nothing else.
import { readdir, realpath, stat } from "node:fs/promises";
import { join } from "node:path";

const MANIFEST_EXTENSION = /\.(ya?ml|json)$/i;

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Whether listManifestFiles lists a file of this name (relative path): a manifest extension, no hidden part. */
export function isManifestPath(rel: string): boolean {
  return MANIFEST_EXTENSION.test(rel) && !rel.split("/").some((part) => part.startsWith(".") || part === "");
}

/**
 * Manifest files under dir, relative with "/" separators, sorted. Hidden entries are skipped:
 * a ConfigMap volume mounts every key twice (KEY and ..data/KEY), and editors leave dotfiles.
 */
export async function listManifestFiles(dir: string): Promise<string[]> {
  return (await listManifestTree(dir)).files;
}

/** listManifestFiles, and the folders walked ("" for dir itself; a symlink loop's repeat is not one). */
export async function listManifestTree(dir: string): Promise<{ files: string[]; dirs: Set<string> }> {
  const out: string[] = [];
  const dirs = new Set<string>();
  const visited = new Set<string>();
  const walk = async (abs: string, rel: string): Promise<void> => {
    const real = await realpath(abs);
    if (visited.has(real)) return; // symlink loop
    visited.add(real);
    dirs.add(rel);
    for (const entry of await readdir(abs, { withFileTypes: true })) {
      if (entry.name.startsWith(".")) continue;
      const childAbs = join(abs, entry.name);
      const childRel = rel === "" ? entry.name : `${rel}/${entry.name}`;
      let isDir = entry.isDirectory();
      if (entry.isSymbolicLink()) {
        try {
          isDir = (await stat(childAbs)).isDirectory();
        } catch {
          // A dangling link with a manifest name is reported when read; other names are not ours.
          isDir = false;
        }
      }
      if (isDir) await walk(childAbs, childRel);
      else if (MANIFEST_EXTENSION.test(entry.name)) out.push(childRel);
    }
  };
  await walk(dir, "");
  return { files: out.sort(compare), dirs };
}

/** mtime, size and inode: a file whose key did not move is not read again by a whole-folder read or a scan. */
export const statKey = (s: { mtimeMs: number; size: number; ino: number }): string =>
  `${String(s.mtimeMs)}:${String(s.size)}:${String(s.ino)}`;

/** The folder's manifest files with their stat keys (undefined: gone or unreadable since listed), and its folders. */
export interface TreeStats {
  readonly files: readonly string[];
  readonly keys: readonly (string | undefined)[];
  readonly dirs: readonly string[];
}

/** Concurrent stats of a scan: few, so that a reported change's own I/O never waits behind the scan's. */
const SCAN_CONCURRENCY = 2;

/** Lists the folder and stats every manifest file in it; rejects when the folder cannot be listed. */
export async function statTree(dir: string): Promise<TreeStats> {
  const tree = await listManifestTree(dir);
  const keys = await mapLimit(tree.files, SCAN_CONCURRENCY, async (path) =>
    stat(join(dir, path)).then(statKey, () => undefined),
  );
  return { files: tree.files, keys, dirs: [...tree.dirs] };
}

/** `f` over `items` with at most `limit` calls running at once; results in the items' order. */
async function mapLimit<T, R>(items: readonly T[], limit: number, f: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < items.length; i = next++) out[i] = await f(items[i] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
