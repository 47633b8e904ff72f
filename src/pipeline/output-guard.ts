// --out and --manifests → whether oooi may write into --out, before it writes anything.
// A user's manifests must survive any --out: the output folder may not be, contain, or lie inside
// the manifests folder (outputs inside it would also be read back as manifests). A non-empty folder
// that no earlier run indexed is someone else's unless the user says --force.
import { readdir, realpath, stat } from "node:fs/promises";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { INDEX_FILE, readIndex } from "./file-sink.js";

export interface OutputGuardOptions {
  /** Refuse a non-empty folder that holds no index of an earlier run (render without --force). */
  readonly requireOwned: boolean;
}

export type OutputGuard = { readonly ok: true } | { readonly ok: false; readonly message: string };

/** The real path of p, resolving symlinks of the longest prefix that exists (p itself may not). */
async function realpathOfPrefix(p: string): Promise<string> {
  const abs = resolve(p);
  try {
    return await realpath(abs);
  } catch {
    const parent = dirname(abs);
    return parent === abs ? abs : join(await realpathOfPrefix(parent), basename(abs));
  }
}

const within = (inner: string, outer: string): boolean => {
  const rel = relative(outer, inner);
  return rel !== "" && !rel.startsWith(`..${sep}`) && rel !== "..";
};

export async function checkOutputDir(
  out: string,
  manifests: string | undefined,
  opts: OutputGuardOptions,
): Promise<OutputGuard> {
  const realOut = await realpathOfPrefix(out);
  // Manifests read from stdin (`--manifests -`) live nowhere --out could touch.
  if (manifests === undefined) return checkOutContent(out, realOut, opts);
  const realManifests = await realpathOfPrefix(manifests);
  if (realOut === realManifests)
    return { ok: false, message: `--out ${out} is the manifests folder; choose another folder` };
  if (within(realManifests, realOut)) {
    return {
      ok: false,
      message: `--out ${out} contains the manifests folder ${manifests}; choose a folder outside it`,
    };
  }
  if (within(realOut, realManifests)) {
    return {
      ok: false,
      message: `--out ${out} is inside the manifests folder ${manifests} (outputs would be read back as manifests); choose a folder outside it`,
    };
  }
  return checkOutContent(out, realOut, opts);
}

/** --out must be a folder: new, empty, or one an earlier render wrote (unless requireOwned is off). */
async function checkOutContent(out: string, realOut: string, opts: OutputGuardOptions): Promise<OutputGuard> {
  let entries: string[];
  try {
    if (!(await stat(realOut)).isDirectory()) return { ok: false, message: `--out ${out} exists and is not a folder` };
    entries = await readdir(realOut);
  } catch {
    return { ok: true }; // does not exist yet: created on write
  }
  if (!opts.requireOwned || entries.length === 0 || (await readIndex(realOut)) !== undefined) return { ok: true };
  return {
    ok: false,
    message:
      `--out ${out} is not empty and holds no earlier render (no ${INDEX_FILE}); choose a new or empty folder, ` +
      "or pass --force to write there (oooi then replaces only the files it writes and never removes the others)",
  };
}
