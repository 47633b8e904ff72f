// The layers of docs/architecture.md, enforced: arrows point inward (cli → operator/watchers →
// model/envoy), the transport never learns an Envoy rule, the pure core does no I/O. Each rule is
// also run on the real graph with one wrong import planted, so a rule that cannot fail fails here.
import { describe, expect, it } from "vitest";
import { cycles, readImportGraph, violations, type ImportGraph, type ImportRule } from "./graph.js";

const graph = readImportGraph(process.cwd());
const under =
  (...prefixes: string[]) =>
  (module: string): boolean =>
    prefixes.some((p) => module.startsWith(p));
const not =
  (test: (m: string) => boolean) =>
  (m: string): boolean =>
    !test(m);

/** node: modules a pure module may use: hashing only, no file, socket, process or timer. */
const PURE_NODE = new Set(["node:crypto"]);
const pureImport = (target: string): boolean =>
  !(target === "rxjs" || target.startsWith("rxjs/")) && (!target.startsWith("node:") || PURE_NODE.has(target));

interface Row {
  readonly rule: ImportRule;
  /** One import the rule must refuse: [importing module, imported module or package]. */
  readonly planted: readonly [string, string];
}

const rows: readonly Row[] = [
  {
    rule: {
      name: "model/ imports only api/, util/ and itself",
      applies: under("src/model/"),
      allows: under("src/model/", "src/api/", "src/util/"),
    },
    planted: ["src/model/build.ts", "src/envoy/render/index.ts"],
  },
  {
    rule: {
      name: "envoy/ never imports the xDS cache or server",
      applies: under("src/envoy/"),
      allows: not(under("src/xds/cache/", "src/xds/server/", "src/xds/introspect/")),
    },
    planted: ["src/envoy/select.ts", "src/xds/cache/cache.ts"],
  },
  {
    rule: {
      name: "xds/ (the transport) never imports envoy/, model/, dhcp/ or operator/",
      applies: under("src/xds/"),
      allows: not(under("src/envoy/", "src/model/", "src/dhcp/", "src/operator/")),
    },
    planted: ["src/xds/cache/cache.ts", "src/envoy/validate/consistency.ts"],
  },
  {
    rule: {
      name: "the cache never imports the server",
      applies: under("src/xds/cache/"),
      allows: not(under("src/xds/server/")),
    },
    planted: ["src/xds/cache/cache.ts", "src/xds/server/session.ts"],
  },
  {
    rule: {
      name: "watchers/ never imports operator/",
      applies: under("src/watchers/"),
      allows: not(under("src/operator/")),
    },
    planted: ["src/watchers/manifests.ts", "src/operator/desired/objects.ts"],
  },
  {
    rule: {
      name: "the model and the renderers import no node: I/O and no rxjs",
      applies: under("src/model/", "src/envoy/", "src/dns/render/", "src/dhcp/render/"),
      allows: pureImport,
    },
    planted: ["src/envoy/render/listeners.ts", "node:fs"],
  },
];

function planted(base: ImportGraph, [from, to]: readonly [string, string]): ImportGraph {
  const copy = new Map(base);
  copy.set(from, [...(base.get(from) ?? []), to]);
  return copy;
}

describe("import rules", () => {
  it("reads the whole of src/", () => {
    expect(graph.size).toBeGreaterThan(150);
    expect([...graph.keys()].filter((m) => !graph.has(m))).toEqual([]);
  });

  it.each(rows)("$rule.name", ({ rule, planted: edge }) => {
    expect(graph.has(edge[0])).toBe(true);
    expect(violations(graph, rule)).toEqual([]);
    expect(violations(planted(graph, edge), rule)).toEqual([{ from: edge[0], to: edge[1] }]);
  });

  it("no import cycle, type-only imports included", () => {
    expect(cycles(graph)).toEqual([]);
    // The same check on a planted back edge: an existing import a → b, and b importing a.
    const [a, targets] = [...graph].find(([, t]) => t.some((m) => m.startsWith("src/") && graph.has(m))) ?? ["", []];
    const b = targets.find((m) => graph.has(m)) ?? "";
    expect(cycles(planted(graph, [b, a]))).toEqual([[a, b].sort()]);
  });

  it("every relative import names a module that exists", () => {
    const missing = [...graph].flatMap(([from, targets]) =>
      targets.filter((t) => t.startsWith("src/") && !graph.has(t)).map((to) => ({ from, to })),
    );
    expect(missing).toEqual([]);
  });
});
