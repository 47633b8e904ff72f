// `oooi render`: one shot, manifests in, the contract's files out.
import { FileSink, OutputWriteError } from "../pipeline/file-sink.js";
import { checkOutputDir } from "../pipeline/output-guard.js";
import { renderAll } from "../pipeline/outputs.js";
import { text } from "node:stream/consumers";
import { formatManifestError, loadManifests, parseManifests, summarizeIgnored } from "../watchers/manifests.js";
import { manifestsRoot, noInfraWarning, problemLines, userPath } from "./problem-report.js";

/** How problems name manifests read from standard input. */
export const STDIN_NAME = "<stdin>";

export interface RenderCommandOptions {
  /** A folder, one file, or "-": the manifests on standard input (a multi-document YAML stream). */
  readonly manifests: string;
  readonly out: string;
  readonly keaHooksDir?: string;
  /** Write into a non-empty folder that holds no earlier render. */
  readonly force?: boolean;
  /** Exit 1 when any object has a problem of severity error (CI). */
  readonly strict?: boolean;
  /** The xDS server the bootstrap.yaml files point at; default serve's default listen address. */
  readonly xdsAddress?: { readonly host: string; readonly port: number };
  /** Largest manifest file read (--max-manifest-bytes); default DEFAULT_MAX_MANIFEST_BYTES. */
  readonly maxManifestBytes?: number;
  /** Render TLS listeners with filter_chain_matcher (--filter-chain-matcher). */
  readonly filterChainMatcher?: boolean;
}

/**
 * Exit codes of the contract: 0 rendered (problems or not), 2 unreadable input or a refused --out,
 * 1 cannot write, or — with --strict — rendered but some object has an error.
 */
export async function renderCommand(
  opts: RenderCommandOptions,
  log: (line: string) => void,
  stdin: () => Promise<string> = () => text(process.stdin),
): Promise<number> {
  const fromStdin = opts.manifests === "-";
  const load = fromStdin
    ? parseManifests([{ path: STDIN_NAME, text: await stdin() }])
    : await loadManifests(opts.manifests, opts.maxManifestBytes);
  // Problems name files under --manifests as given, so each can be opened from here.
  const root = fromStdin ? undefined : manifestsRoot(opts.manifests);
  if (!load.ok) {
    log(
      `oooi render: cannot read manifests: ${formatManifestError({ ...load.error, file: userPath(root, load.error.file) })}`,
    );
    return 2;
  }
  const guard = await checkOutputDir(opts.out, fromStdin ? undefined : opts.manifests, {
    requireOwned: opts.force !== true,
  });
  if (!guard.ok) {
    log(`oooi render: ${guard.message}`);
    return 2;
  }
  const ignored = summarizeIgnored(load.ignored);
  if (ignored !== "") log(`ignored ${ignored} (not inputs of the model)`);
  const empty = noInfraWarning(fromStdin ? STDIN_NAME : opts.manifests, load);
  if (empty !== undefined) log(`warning ${empty}`);

  const out = renderAll(load.state, {
    ...(opts.keaHooksDir === undefined ? {} : { kea: { hooksDirectory: opts.keaHooksDir } }),
    ...(opts.xdsAddress === undefined ? {} : { xdsAddress: opts.xdsAddress }),
    envoy: { filterChainMatcher: opts.filterChainMatcher === true },
  });
  try {
    // Stale children of a deleted Infra go, as listed by the previous render's index; nothing else.
    await (await FileSink.open(opts.out)).sync(out.files);
  } catch (e) {
    // The folder keeps its previous complete set; the message names the file that failed.
    log(
      `oooi render: ${e instanceof OutputWriteError ? e.message : `cannot write ${opts.out}: ${(e as Error).message}`}`,
    );
    return 1;
  }

  const problems = problemLines(out.status, load.sources, root);
  for (const p of problems) log(`${p.severity.padEnd(7)} ${p.text}`);
  for (const s of out.status) {
    const c = s.status.conditions[0];
    if (c === undefined) continue;
    const mark = c.status === "True" ? "ok  " : "FAIL";
    log(`${mark} ${s.kind} ${s.namespace}/${s.name}: ${c.reason}${c.status === "True" ? "" : ` — ${c.message}`}`);
  }
  log(`wrote ${out.files.size} files to ${opts.out}`);
  const errors = problems.filter((p) => p.severity === "error").length;
  if (opts.strict === true && errors > 0) {
    log(`oooi render --strict: ${String(errors)} error${errors === 1 ? "" : "s"}`);
    return 1;
  }
  return 0;
}
