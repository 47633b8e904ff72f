// Envoy's own validation rules (go-control-plane's protoc-gen-validate code and Snapshot.Consistent,
// test/peers/envoy-check) on everything the renderer produces: every example, every golden
// envoy.json, and seeded random topologies through the real model and renderer. The rejection
// rows prove the checker can fail: each breaks one rule Envoy enforces in a real rendering.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { ENVOY_FILE, renderAll } from "../../src/pipeline/outputs.js";
import { loadManifestDir } from "../../src/watchers/manifests.js";
import { scenario } from "../support/arbitrary.js";
import { envoyCheckBinary, runEnvoyCheck } from "../support/envoy-check.js";

const ROOT = join(import.meta.dirname, "..", "..");
const EXAMPLES = join(ROOT, "examples");
const GOLDEN = join(ROOT, "test", "golden");
const checker = envoyCheckBinary();
const work = mkdtempSync(join(tmpdir(), "oooi-envoy-check-"));
afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

/** Writes every envoy.json of `files` under `dir`; returns how many. */
function writeEnvoyFiles(dir: string, files: ReadonlyMap<string, string>): number {
  let count = 0;
  for (const [rel, text] of files) {
    if (!rel.endsWith(`/${ENVOY_FILE}`)) continue;
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), text);
    count += 1;
  }
  return count;
}

function check(paths: readonly string[]): ReturnType<typeof runEnvoyCheck> {
  if (checker.path === undefined) throw new Error("unreachable: suite skips without the checker");
  return runEnvoyCheck(checker.path, paths);
}

function accepted(run: ReturnType<typeof runEnvoyCheck>): string[] {
  return run.lines.filter((l) => / ok \(/.test(l));
}

describe.skipIf(checker.path === undefined)("envoy-check: what oooi renders, Envoy accepts", () => {
  const examples = readdirSync(EXAMPLES, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();

  it("every example's render", async () => {
    const dir = join(work, "examples");
    let written = 0;
    for (const name of examples) {
      const load = await loadManifestDir(join(EXAMPLES, name));
      if (!load.ok) throw new Error(`example ${name} unreadable`);
      written += writeEnvoyFiles(join(dir, name), renderAll(load.state).files);
    }
    expect(written).toBeGreaterThanOrEqual(examples.length);
    const run = check([dir]);
    expect(run.lines.filter((l) => !/ ok \(/.test(l))).toEqual([]);
    expect(run.status).toBe(0);
    expect(accepted(run)).toHaveLength(written);
  });

  it("every golden envoy.json", () => {
    const run = check([GOLDEN]);
    expect(run.lines.filter((l) => !/ ok \(/.test(l))).toEqual([]);
    expect(run.status).toBe(0);
    expect(accepted(run).length).toBeGreaterThanOrEqual(examples.length);
  });

  it("seeded random topologies through the real model and renderer", () => {
    const dir = join(work, "random");
    let written = 0;
    fc.sample(scenario, { seed: 20261201, numRuns: 120 }).forEach((s, i) => {
      written += writeEnvoyFiles(join(dir, `case-${String(i).padStart(3, "0")}`), renderAll(s.state).files);
    });
    expect(written).toBeGreaterThan(60);
    const run = check([dir]);
    expect(run.lines.filter((l) => !/ ok \(/.test(l))).toEqual([]);
    expect(run.status).toBe(0);
    expect(accepted(run)).toHaveLength(written);
  });
});

type EnvoyJson = Record<"listeners" | "clusters" | "endpoints" | "routes", Record<string, unknown>[]>;
type Path = readonly (string | number)[];

function at(root: unknown, path: Path): Record<string, unknown> {
  let node = root;
  for (const key of path) node = (node as Record<string | number, unknown>)[key];
  return node as Record<string, unknown>;
}

const TCP_PROXY: Path = ["listeners", 0, "filter_chains", 0, "filters", 0, "typed_config"];
const HCM: Path = ["listeners", 0, "filter_chains", 0, "filters", 0, "typed_config"];

/** One broken rule each: how to break a real rendering, and what the checker must say. */
const REJECTIONS: readonly { name: string; example: string; breakIt: (doc: EnvoyJson) => void; says: RegExp }[] = [
  {
    name: "a TcpProxy without stat_prefix",
    example: "minimal",
    breakIt: (d) => {
      delete at(d, TCP_PROXY)["stat_prefix"];
    },
    says: /listener "https-443": filter_chains\[0\]\.filters\[0\]\.typed_config \(envoy\.extensions\.filters\.network\.tcp_proxy\.v3\.TcpProxy\): invalid TcpProxy\.StatPrefix/,
  },
  {
    name: "an HttpConnectionManager without stat_prefix",
    example: "apps-ingress",
    breakIt: (d) => {
      delete at(d, HCM)["stat_prefix"];
    },
    says: /listener "http-80": filter_chains\[0\]\.filters\[0\]\.typed_config \(envoy\.extensions\.filters\.network\.http_connection_manager\.v3\.HttpConnectionManager\): invalid HttpConnectionManager\.StatPrefix/,
  },
  {
    name: "a connect_timeout of 0s",
    example: "minimal",
    breakIt: (d) => {
      at(d, ["clusters", 0])["connect_timeout"] = "0s";
    },
    says: /cluster "[^"]+": invalid Cluster\.ConnectTimeout: value must be greater than 0s/,
  },
  {
    name: "an empty cluster name",
    example: "minimal",
    breakIt: (d) => {
      at(d, ["clusters", 0])["name"] = "";
    },
    says: /cluster "": invalid Cluster\.Name: value length must be at least 1 runes/,
  },
  {
    name: "an unknown field (strict parse)",
    example: "minimal",
    breakIt: (d) => {
      at(d, ["clusters", 0])["conect_timeout"] = "1s";
    },
    says: /clusters\[0\]: does not parse as cluster: .*conect_timeout/,
  },
  {
    name: "a typed_config of a type Envoy does not know",
    example: "minimal",
    breakIt: (d) => {
      at(d, TCP_PROXY)["@type"] = "type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxi";
    },
    says: /listeners\[0\]: does not parse as listener: .*TcpProxi/,
  },
  {
    name: "an EDS cluster whose ClusterLoadAssignment is missing (Snapshot.Consistent)",
    example: "minimal",
    breakIt: (d) => {
      d.endpoints.pop();
    },
    says: /snapshot not consistent: mismatched "type\.googleapis\.com\/envoy\.config\.endpoint\.v3\.ClusterLoadAssignment" reference and resource lengths/,
  },
  {
    name: "a route configuration no listener names (Snapshot.Consistent)",
    example: "apps-ingress",
    breakIt: (d) => {
      d.routes.push({ ...at(d, ["routes", 0]), name: "orphan" });
    },
    says: /snapshot not consistent: mismatched "type\.googleapis\.com\/envoy\.config\.route\.v3\.RouteConfiguration" reference/,
  },
  {
    name: "an endpoint port above 65535",
    example: "minimal",
    breakIt: (d) => {
      at(d, ["endpoints", 0, "endpoints", 0, "lb_endpoints", 0, "endpoint", "address", "socket_address"])[
        "port_value"
      ] = 70000;
    },
    says: /ClusterLoadAssignment "[^"]+": invalid ClusterLoadAssignment\.Endpoints\[0\]: .*PortValue: value must be less than or equal to 65535/,
  },
];

describe.skipIf(checker.path === undefined)("envoy-check: what Envoy rejects, the checker rejects", () => {
  function goldenEnvoy(example: string): EnvoyJson {
    const dir = join(GOLDEN, example, "clusters");
    const child = readdirSync(dir).find((d) => d.endsWith("-proxy"));
    if (child === undefined) throw new Error(`no proxy in golden ${example}`);
    return JSON.parse(readFileSync(join(dir, child, ENVOY_FILE), "utf8")) as EnvoyJson;
  }

  it.each(REJECTIONS)("$name", ({ name, example, breakIt, says }) => {
    const doc = goldenEnvoy(example);
    breakIt(doc);
    const file = join(work, `${name.replace(/[^a-z0-9]+/gi, "-")}.json`);
    writeFileSync(file, JSON.stringify(doc));
    const run = check([file]);
    expect(run.status).toBe(1);
    expect(
      run.lines.some((l) => l.startsWith(`${file}: `) && says.test(l)),
      run.lines.join("\n"),
    ).toBe(true);
    expect(accepted(run)).toEqual([]);
  });

  it("names every rejected file among several and exits 1; a readable good file still passes", () => {
    const good = join(GOLDEN, "minimal", "clusters", "tenant-vlan100-proxy", ENVOY_FILE);
    const doc = goldenEnvoy("minimal");
    delete at(doc, TCP_PROXY)["stat_prefix"];
    const bad = join(work, "several-bad.json");
    writeFileSync(bad, JSON.stringify(doc));
    const run = check([good, bad]);
    expect(run.status).toBe(1);
    expect(accepted(run)).toEqual([
      expect.stringContaining(`${good}: ok (2 listeners, 4 clusters, 4 endpoints, 0 routes)`),
    ]);
    expect(run.lines.at(-1)).toBe("envoy-check: 1 of 2 files rejected");
  });

  it("exits 2 on an argument it cannot read", () => {
    const run = check([join(work, "does-not-exist.json")]);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/does-not-exist\.json/);
  });
});
