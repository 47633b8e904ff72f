// Status entries (+ where each object was read from) → one readable line per problem, for
// render's stderr and serve's log; and which lines are new since the previous rendering, so serve
// tells each problem once rather than on every reload.
import { statSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import type { StatusEntry } from "../pipeline/outputs.js";
import type { ManifestSources, SourcePosition } from "../watchers/manifest-sources.js";
import type { ManifestLoad } from "../watchers/manifests.js";

export interface ProblemLine {
  readonly severity: "error" | "pending" | "warning";
  readonly object: string;
  readonly field: string;
  readonly reason: string;
  readonly position: SourcePosition | undefined;
  /** The complete message: "infra.yaml:9:5: Infra clusters/x: spec.networkConfig.gatway: unknown field — did you mean gateway? (UnknownField)". */
  readonly text: string;
}

/** An object and its problems: a status entry, or what of one the lines need. */
export type ProblemEntry = Pick<StatusEntry, "kind" | "namespace" | "name" | "problems">;

/**
 * A manifest file as the user can open it from where they ran the command: under `--manifests` as
 * given (`root`, a folder; undefined when files are already named as given: one file, stdin).
 */
export function userPath(root: string | undefined, file: string): string {
  return root === undefined || file === root || isAbsolute(file) ? file : join(root, file);
}

/** The userPath root of `--manifests`: itself when it is a folder, undefined for one file or stdin. */
export function manifestsRoot(manifests: string): string | undefined {
  try {
    return statSync(manifests).isDirectory() ? manifests : undefined;
  } catch {
    return undefined;
  }
}

/** `root`: the `--manifests` folder, so each FILE is a path the shell can open (userPath). */
export function problemLines(status: readonly ProblemEntry[], sources?: ManifestSources, root?: string): ProblemLine[] {
  const lines: ProblemLine[] = [];
  for (const s of status) for (const p of s.problems) lines.push(problemLine(s, p, sources, root));
  return lines;
}

/** One problem of an object as its line (problemLines). */
export function problemLine(
  s: Pick<ProblemEntry, "kind" | "namespace" | "name">,
  p: ProblemEntry["problems"][number],
  sources?: ManifestSources,
  root?: string,
): ProblemLine {
  const object = `${s.kind} ${s.namespace === "" ? "" : `${s.namespace}/`}${s.name}`;
  const found = sources?.locate(s, p.field);
  const position = found === undefined ? undefined : { ...found, file: userPath(root, found.file) };
  const where = position === undefined ? "" : `${position.file}:${String(position.line)}:${String(position.column)}: `;
  const text = `${where}${object}: ${p.field === "" ? "" : `${p.field}: `}${p.message} (${p.reason})`;
  return { severity: p.severity, object, field: p.field, reason: p.reason, position, text };
}

/** Remembers the previous rendering's lines: `update` returns those that appeared and those that went away. */
export class ProblemMemory {
  #last = new Set<string>();

  update(lines: readonly ProblemLine[]): {
    readonly added: readonly ProblemLine[];
    readonly resolved: readonly string[];
  } {
    const now = new Set(lines.map((l) => l.text));
    const added = lines.filter((l) => !this.#last.has(l.text));
    const resolved = [...this.#last].filter((t) => !now.has(t));
    this.#last = now;
    return { added, resolved };
  }
}

/**
 * "no Infra in DIR: found 2 Service, 1 HostedCluster in 2 files" when a folder has nothing to serve
 * (a wrong --manifests is the likely cause); undefined when it holds an Infra, valid or not.
 */
export function noInfraWarning(dir: string, load: Extract<ManifestLoad, { ok: true }>): string | undefined {
  const { state } = load;
  if (state.infras.length > 0 || (state.invalid ?? []).some((i) => i.ref.kind === "Infra")) return undefined;
  if (load.files.length === 0) return `no Infra in ${dir}: the folder holds no manifest files (*.yaml, *.yml, *.json)`;
  const counts = new Map<string, number>();
  const count = (kind: string, n: number) => {
    if (n > 0) counts.set(kind, (counts.get(kind) ?? 0) + n);
  };
  count("InfraClusterAttachment", state.attachments.length);
  for (const i of state.invalid ?? []) count(i.ref.kind, 1);
  count("HostedCluster", state.hostedClusters.length);
  count("NodePool", state.nodePools.length);
  count("Machine", state.machines.length);
  count("VirtualMachineInstance", state.vmis.length);
  count("Service", state.services.length);
  count("Namespace", state.namespaces.length);
  for (const o of load.ignored) count(o.kind, 1);
  const found = counts.size === 0 ? "no objects" : [...counts].map(([k, n]) => `${String(n)} ${k}`).join(", ");
  return `no Infra in ${dir}: found ${found} in ${String(load.files.length)} file${load.files.length === 1 ? "" : "s"}; nothing is served`;
}
