// What the per-layer golden tests share: the case folders of a layer, and comparing (or, with
// UPDATE_GOLDEN=1, writing) one expected file of a case.
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";

export const UPDATE = process.env["UPDATE_GOLDEN"] === "1";

/** The case folders of a layer (test/golden/<layer>/<case>), sorted. */
export function caseNames(layerDir: string): string[] {
  return readdirSync(layerDir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
}

/**
 * The case's expected files are exactly `actual` (file name → text): with UPDATE_GOLDEN=1 they are
 * written first (and expected files the output no longer has are removed), else any difference
 * fails with the text diff. `owned` names every file the layer writes, so inputs are never touched.
 */
export function expectGolden(
  caseDir: string,
  owned: readonly string[],
  actual: ReadonlyMap<string, string>,
  layer: string,
): void {
  if (UPDATE) {
    for (const name of owned) {
      const text = actual.get(name);
      const path = join(caseDir, name);
      if (text === undefined) rmSync(path, { force: true });
      else if (!existsSync(path) || readFileSync(path, "utf8") !== text) writeFileSync(path, text);
    }
  }
  const hint = `run UPDATE_GOLDEN=1 npx vitest run test/golden/${layer}.test.ts and review the diff`;
  const present = owned.filter((name) => existsSync(join(caseDir, name)));
  expect(present, `expected files of ${caseDir} differ from the output's; ${hint}`).toEqual(
    owned.filter((name) => actual.has(name)),
  );
  for (const name of present) {
    expect(actual.get(name), `${caseDir}/${name} differs; ${hint}`).toBe(readFileSync(join(caseDir, name), "utf8"));
  }
}

/** JSON text with every object's keys sorted (arrays keep their order: the layers sort what they list). */
export function sortedJson(value: unknown): string {
  return `${JSON.stringify(sortKeys(value), null, 2)}\n`;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value !== "object" || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) out[key] = sortKeys((value as Record<string, unknown>)[key]);
  return out;
}
