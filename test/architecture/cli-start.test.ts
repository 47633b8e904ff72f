// `oooi --help` must start fast (issue 27: ≤ 3 × `node -e 0`, measured by npm run bench:cli): the
// command line's entry loads commander and its own flag modules, and every command's work only
// when it runs. Checked on the load graph, not on a clock: a static import of gRPC, YAML, the
// logger or the Kubernetes client anywhere under src/cli/main.ts fails here, naming the path.
import { describe, expect, it } from "vitest";
import { loadedFrom, readLoadGraph, type ImportGraph } from "./graph.js";

const graph = readLoadGraph(process.cwd());
const ENTRY = "src/cli/main.ts";
/** Packages the entry may load: the argument parser and Node's own modules. */
const allowedPackage = (m: string): boolean => m === "commander" || m.startsWith("node:");

function packagesLoaded(g: ImportGraph): string[] {
  return [...loadedFrom(g, ENTRY)].filter((m) => !m.startsWith("src/") && !allowedPackage(m)).sort();
}

/** How `from` reaches `target`, for the failure message. */
function pathTo(g: ImportGraph, target: string): string[] {
  const parent = new Map<string, string>();
  const queue = [ENTRY];
  for (let m = queue.shift(); m !== undefined; m = queue.shift()) {
    if (m === target) break;
    for (const next of g.get(m) ?? [])
      if (!parent.has(next) && next !== ENTRY) {
        parent.set(next, m);
        queue.push(next);
      }
  }
  const path = [target];
  for (let m = parent.get(target); m !== undefined; m = parent.get(m)) path.unshift(m);
  return path;
}

describe("what `oooi --help` loads", () => {
  it("only commander and node: modules, whatever the commands do when they run", () => {
    const extra = packagesLoaded(graph);
    expect(extra.map((p) => pathTo(graph, p).join(" → "))).toEqual([]);
    // Every command is registered, so the graph really spans them.
    const modules = loadedFrom(graph, ENTRY);
    for (const c of [
      "render",
      "serve",
      "debug",
      "verify",
      "explain",
      "operator",
      "dhcp-agent",
      "version",
      "completion",
    ])
      expect(modules.has(`src/cli/commands/${c}.ts`)).toBe(true);
  });

  it("fails when a command's flag module imports its work statically", () => {
    const planted = new Map(graph);
    planted.set("src/cli/commands/debug.ts", [...(graph.get("src/cli/commands/debug.ts") ?? []), "src/cli/debug.ts"]);
    expect(packagesLoaded(planted)).toContain("yaml");
  });

  it("leaves type-only imports and import() out of the load graph", () => {
    // commands/verify.ts imports verify.ts's options type and loads verify.ts with import().
    expect(graph.get("src/cli/commands/verify.ts")).not.toContain("src/cli/verify.ts");
  });
});
