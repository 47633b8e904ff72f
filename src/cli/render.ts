// `oooi render`: one shot, manifests in, the contract's files out.
import { mkdir, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { renderAll } from "../pipeline/outputs.js";
import { formatManifestError, loadManifestDir, summarizeIgnored } from "../watchers/manifests.js";

export interface RenderCommandOptions {
  readonly manifests: string;
  readonly out: string;
  readonly keaHooksDir?: string;
}

/** Exit codes of the contract: 0 rendered (problems or not), 2 unreadable input, 1 cannot write. */
export async function renderCommand(opts: RenderCommandOptions, log: (line: string) => void): Promise<number> {
  const load = await loadManifestDir(opts.manifests);
  if (!load.ok) {
    log(`oooi render: cannot read manifests: ${formatManifestError(load.error)}`);
    return 2;
  }
  const ignored = summarizeIgnored(load.ignored);
  if (ignored !== "") log(`ignored ${ignored} (not inputs of the model)`);

  const out = renderAll(load.state, opts.keaHooksDir === undefined ? {} : { kea: { hooksDirectory: opts.keaHooksDir } });
  try {
    // The output directory is ours: stale children of a deleted Infra must not linger.
    await rm(opts.out, { recursive: true, force: true });
    for (const [rel, text] of out.files) {
      const path = join(opts.out, rel);
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, text);
    }
  } catch (e) {
    log(`oooi render: cannot write ${opts.out}: ${(e as Error).message}`);
    return 1;
  }

  for (const s of out.status) {
    const c = s.status.conditions[0];
    if (c === undefined) continue;
    const mark = c.status === "True" ? "ok  " : "FAIL";
    log(`${mark} ${s.kind} ${s.namespace}/${s.name}: ${c.reason}${c.status === "True" ? "" : ` — ${c.message}`}`);
  }
  log(`wrote ${out.files.size} files to ${opts.out}`);
  return 0;
}
