// Which ProblemReasons the model goldens must show: every member of the ProblemReason union in
// src/model/types.ts except the few raised outside the model, each of which is checked to be
// raised where this file says (and nowhere in src/model), so a reason the model starts to report
// cannot stay unreviewed.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dirname, "..", "..");
const TYPES = join(ROOT, "src", "model", "types.ts");

/** Reasons no model build can report, with the file that raises each and the golden layer (if any) that shows it. */
export const RAISED_OUTSIDE_THE_MODEL: Readonly<
  Record<string, { readonly file: string; readonly layer?: string; readonly modelDefence?: string }>
> = {
  // The Envoy renderer refusing a proxy: shown by test/golden/envoy's refused cases.
  InconsistentConfig: { file: "src/envoy/render/index.ts", layer: "envoy" },
  // Last good keeps an edited object's previous version: a property of a sequence of builds.
  ServingLastGood: { file: "src/pipeline/last-good.ts" },
  // The operator's own checks of what it writes and how it was started.
  InfraNotObserved: { file: "src/operator/desired/index.ts" },
  // Also checked in the model, but manifests never reach it: the schema refuses the same names first
  // (InvalidSpec, test/golden/model/infra-name-too-long-for-its-children). The model's check is for
  // objects the API server stored before the rule existed.
  InvalidName: { file: "src/operator/desired/index.ts", modelDefence: "src/model/infra.ts" },
  InvalidOperatorSettings: { file: "src/operator/desired/index.ts" },
  KeaSccBindingNeeded: { file: "src/operator/writing/reconcile.ts" },
  KeaSccBindingConflict: { file: "src/operator/writing/reconcile.ts" },
};

/** The string members of a type alias in src/model/types.ts, following aliases it names. */
export function unionMembers(typeName: string): string[] {
  const text = readFileSync(TYPES, "utf8");
  const m = new RegExp(`export type ${typeName} =([^;]*);`).exec(text);
  if (m === null) throw new Error(`type ${typeName} not found in ${TYPES}`);
  const body = (m[1] ?? "").replace(/\/\/.*$/gm, "");
  const out: string[] = [];
  for (const part of body.split("|").map((s) => s.trim())) {
    if (part === "") continue;
    const literal = /^"([^"]+)"$/.exec(part);
    if (literal !== null) out.push(literal[1] ?? "");
    else if (/^[A-Z][A-Za-z]*$/.test(part)) out.push(...unionMembers(part));
    else throw new Error(`unexpected member ${part} of ${typeName}`);
  }
  return [...new Set(out)].sort();
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => join(e.parentPath, e.name));
}

/**
 * What is wrong with the coverage: each ProblemReason the model may report that `seen` lacks, and
 * each exemption that no longer holds (raised in src/model after all, or not where it says).
 */
export function modelReasonsUncovered(seen: ReadonlySet<string>): string[] {
  const wrong: string[] = [];
  const modelFiles = sources(join(ROOT, "src", "model")).filter((f) => f !== TYPES);
  const modelText = modelFiles.map((f) => readFileSync(f, "utf8")).join("\n");
  for (const reason of unionMembers("ProblemReason")) {
    const outside = RAISED_OUTSIDE_THE_MODEL[reason];
    if (outside === undefined) {
      if (!seen.has(reason)) wrong.push(`${reason}: in no model golden`);
      continue;
    }
    if (outside.modelDefence !== undefined) {
      if (!readFileSync(join(ROOT, outside.modelDefence), "utf8").includes(`"${reason}"`))
        wrong.push(`${reason}: said to be checked in ${outside.modelDefence}, which does not name it`);
    } else if (modelText.includes(`"${reason}"`))
      wrong.push(`${reason}: exempt as raised outside the model, but src/model raises it`);
    if (!readFileSync(join(ROOT, outside.file), "utf8").includes(`"${reason}"`))
      wrong.push(`${reason}: exempt as raised in ${outside.file}, which does not name it`);
  }
  return wrong;
}
