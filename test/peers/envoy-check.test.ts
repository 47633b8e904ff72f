// Envoy's own validation rules (go-control-plane's protoc-gen-validate code and Snapshot.Consistent,
// test/peers/envoy-check) on everything the renderer produces: every example, every golden
// envoy.json and bootstrap.yaml, and seeded random topologies through the real model and renderer.
// The rejection rows prove the checker can fail: each breaks one rule Envoy enforces, in a real
// rendering or (the listener-manager rules) in a minimal resource set that breaks nothing else.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { BOOTSTRAP_FILE, ENVOY_FILE, renderAll } from "../../src/pipeline/outputs.js";
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

/** Writes every envoy.json and bootstrap.yaml of `files` under `dir`; returns how many. */
function writeEnvoyFiles(dir: string, files: ReadonlyMap<string, string>): number {
  let count = 0;
  for (const [rel, text] of files) {
    if (!rel.endsWith(`/${ENVOY_FILE}`) && !rel.endsWith(`/${BOOTSTRAP_FILE}`)) continue;
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

/** The accepted bootstraps among a run's lines. */
function acceptedBootstraps(run: ReturnType<typeof runEnvoyCheck>): string[] {
  return accepted(run).filter((l) => l.includes(`/${BOOTSTRAP_FILE}: ok (bootstrap: `));
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
    expect(acceptedBootstraps(run).length).toBeGreaterThanOrEqual(examples.length);
  });

  it("every golden envoy.json and bootstrap.yaml", () => {
    const run = check([GOLDEN]);
    expect(run.lines.filter((l) => !/ ok \(/.test(l))).toEqual([]);
    expect(run.status).toBe(0);
    expect(accepted(run).length).toBeGreaterThanOrEqual(examples.length);
    const bootstraps = readdirSync(GOLDEN, { recursive: true, encoding: "utf8" }).filter((f) =>
      f.endsWith(`/${BOOTSTRAP_FILE}`),
    );
    expect(bootstraps.length).toBeGreaterThanOrEqual(examples.length);
    expect(acceptedBootstraps(run)).toHaveLength(bootstraps.length);
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
    expect(acceptedBootstraps(run).length).toBeGreaterThan(30);
  });

  it("the same topologies with --filter-chain-matcher: the Matcher protos valid, every chain named", () => {
    const dir = join(work, "random-matcher");
    let written = 0;
    let matchers = 0;
    fc.sample(scenario, { seed: 20261201, numRuns: 120 }).forEach((s, i) => {
      const files = renderAll(s.state, { envoy: { filterChainMatcher: true } }).files;
      for (const [rel, text] of files)
        if (rel.endsWith(`/${ENVOY_FILE}`)) matchers += text.split('"filter_chain_matcher"').length - 1;
      written += writeEnvoyFiles(join(dir, `case-${String(i).padStart(3, "0")}`), files);
    });
    expect(matchers).toBeGreaterThan(60);
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

const TCP_PROXY_TYPE = "type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy";
const HCM_TYPE =
  "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager";
const ROUTER_TYPE = "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router";
const TCP_LISTENER: Path = ["listeners", 0];
const TCP_CHAIN: Path = ["listeners", 0, "filter_chains", 0];
const TCP_CONFIG: Path = [...TCP_CHAIN, "filters", 0, "typed_config"];
const HTTP_CONFIG: Path = ["listeners", 1, "filter_chains", 0, "filters", 0, "typed_config"];
const ROUTE_ACTION: Path = ["routes", 0, "virtual_hosts", 0, "routes", 0, "route"];

/**
 * The smallest set that touches every listener-manager rule: a static cluster "a", a TCP listener
 * sending to it, an HTTP listener whose RDS route configuration "r" routes to it.
 */
function minimalSet(): EnvoyJson {
  const address = (port: number): Record<string, unknown> => ({
    socket_address: { address: "127.0.0.1", port_value: port },
  });
  return {
    clusters: [
      {
        name: "a",
        type: "STATIC",
        connect_timeout: "1s",
        load_assignment: { cluster_name: "a", endpoints: [{ lb_endpoints: [{ endpoint: { address: address(1) } }] }] },
      },
    ],
    endpoints: [],
    listeners: [
      {
        name: "tcp",
        address: address(2),
        filter_chains: [
          {
            name: "tcp",
            filters: [
              {
                name: "envoy.filters.network.tcp_proxy",
                typed_config: { "@type": TCP_PROXY_TYPE, stat_prefix: "tcp", cluster: "a" },
              },
            ],
          },
        ],
      },
      {
        name: "http",
        address: address(3),
        filter_chains: [
          {
            filters: [
              {
                name: "envoy.filters.network.http_connection_manager",
                typed_config: {
                  "@type": HCM_TYPE,
                  stat_prefix: "http",
                  rds: { config_source: { ads: {}, resource_api_version: "V3" }, route_config_name: "r" },
                  http_filters: [{ name: "envoy.filters.http.router", typed_config: { "@type": ROUTER_TYPE } }],
                },
              },
            ],
          },
        ],
      },
    ],
    routes: [
      {
        name: "r",
        virtual_hosts: [{ name: "v", domains: ["*"], routes: [{ match: { prefix: "/" }, route: { cluster: "a" } }] }],
      },
    ],
  };
}

/** Envoy's listener-manager and cluster-manager rules, each broken alone in the minimal set. */
const SET_REJECTIONS: readonly { name: string; breakIt: (doc: EnvoyJson) => void; says: RegExp }[] = [
  {
    name: "two listeners of one name",
    breakIt: (d) => {
      at(d, ["listeners", 1])["name"] = "tcp";
    },
    says: /duplicate listener name "tcp" \(entries 0 and 1\): names must be unique/,
  },
  {
    name: "two clusters of one name",
    breakIt: (d) => {
      d.clusters.push(structuredClone(at(d, ["clusters", 0])));
    },
    says: /duplicate cluster name "a" \(entries 0 and 1\): names must be unique/,
  },
  {
    name: "two route configurations of one name",
    breakIt: (d) => {
      d.routes.push(structuredClone(at(d, ["routes", 0])));
    },
    says: /duplicate route configuration name "r" \(entries 0 and 1\): names must be unique/,
  },
  {
    name: "a tcp_proxy naming a cluster that does not exist",
    breakIt: (d) => {
      at(d, TCP_CONFIG)["cluster"] = "b";
    },
    says: /listener "tcp": filter_chains\[0\]\.filters\[0\] \(tcp_proxy cluster\) names cluster "b", which is not among the clusters \(unknown cluster\)/,
  },
  {
    name: "a tcp_proxy weighted cluster that does not exist",
    breakIt: (d) => {
      const config = at(d, TCP_CONFIG);
      delete config["cluster"];
      config["weighted_clusters"] = {
        clusters: [
          { name: "a", weight: 1 },
          { name: "b", weight: 1 },
        ],
      };
    },
    says: /listener "tcp": filter_chains\[0\]\.filters\[0\] \(tcp_proxy weighted_clusters\[1\]\) names cluster "b", which is not among the clusters \(unknown cluster\)/,
  },
  {
    name: "a route to a cluster that does not exist",
    breakIt: (d) => {
      at(d, ROUTE_ACTION)["cluster"] = "b";
    },
    says: /route configuration "r": virtual_hosts\[0\]\.routes\[0\] \(route cluster\) names cluster "b", which is not among the clusters \(unknown cluster\)/,
  },
  {
    name: "the HTTP router as a network filter",
    breakIt: (d) => {
      at(d, TCP_CHAIN)["filters"] = [{ name: "envoy.filters.http.router", typed_config: { "@type": ROUTER_TYPE } }];
    },
    says: /listener "tcp": filter_chains\[0\]\.filters\[0\] typed_config envoy\.extensions\.filters\.http\.router\.v3\.Router is not a network filter type \(filter type not allowed here\)/,
  },
  {
    name: "a network filter among the HTTP filters",
    breakIt: (d) => {
      at(d, HTTP_CONFIG)["http_filters"] = [
        { name: "tcp", typed_config: { "@type": TCP_PROXY_TYPE, stat_prefix: "x", cluster: "a" } },
      ];
    },
    says: /listener "http": filter_chains\[0\]\.filters\[0\]\.http_filters\[0\] typed_config envoy\.extensions\.filters\.network\.tcp_proxy\.v3\.TcpProxy is not a http filter type \(filter type not allowed here\)/,
  },
  {
    name: "an HTTP filter as a listener filter",
    breakIt: (d) => {
      at(d, TCP_LISTENER)["listener_filters"] = [
        { name: "envoy.filters.http.router", typed_config: { "@type": ROUTER_TYPE } },
      ];
    },
    says: /listener "tcp": listener_filters\[0\] typed_config envoy\.extensions\.filters\.http\.router\.v3\.Router is not a listener filter type \(filter type not allowed here\)/,
  },
  {
    name: "two filter chains of one listener with the same filter_chain_match",
    breakIt: (d) => {
      const chains = at(d, TCP_LISTENER)["filter_chains"] as Record<string, unknown>[];
      const first = chains[0] ?? {};
      first["filter_chain_match"] = { server_names: ["x.example"] };
      chains.push({ ...structuredClone(first), name: "tcp-again" });
    },
    says: /listener "tcp": filter_chains\[1\] \("tcp-again"\) has the same filter_chain_match as filter_chains\[0\] \("tcp"\) \(duplicate filter chain match\)/,
  },
  {
    name: "two filter chains without a filter_chain_match (both match everything)",
    breakIt: (d) => {
      const chains = at(d, TCP_LISTENER)["filter_chains"] as Record<string, unknown>[];
      chains.push({ ...structuredClone(chains[0] ?? {}), name: "tcp-again", filter_chain_match: {} });
    },
    says: /listener "tcp": filter_chains\[1\] \("tcp-again"\) has the same filter_chain_match as filter_chains\[0\] \("tcp"\) \(duplicate filter chain match\)/,
  },
];

/** The TCP listener of minimalSet picking its chain "tcp" by a filter_chain_matcher on the source address. */
function withMatcher(d: EnvoyJson, ranges: readonly object[] = [{ address_prefix: "10.0.0.0", prefix_len: 8 }]): void {
  const action = (name: string): object => ({
    action: { name, typed_config: { "@type": "type.googleapis.com/google.protobuf.StringValue", value: name } },
  });
  at(d, TCP_LISTENER)["filter_chain_matcher"] = {
    matcher_tree: {
      input: {
        name: "envoy.matching.inputs.source_ip",
        typed_config: {
          "@type": "type.googleapis.com/envoy.extensions.matching.common_inputs.network.v3.SourceIPInput",
        },
      },
      custom_match: {
        name: "envoy.matching.custom_matchers.trie_matcher",
        typed_config: {
          "@type": "type.googleapis.com/xds.type.matcher.v3.IPMatcher",
          range_matchers: [{ ranges, on_match: action("tcp") }],
        },
      },
    },
    on_no_match: action("tcp-other"),
  };
  const chains = at(d, TCP_LISTENER)["filter_chains"] as Record<string, unknown>[];
  chains.push({ ...structuredClone(chains[0] ?? {}), name: "tcp-other" });
}

const MATCHER_REJECTIONS: readonly { name: string; breakIt: (doc: EnvoyJson) => void; says: RegExp }[] = [
  {
    name: "a filter_chain_matcher naming a chain the listener does not have",
    breakIt: (d) => {
      withMatcher(d);
      (at(d, TCP_LISTENER)["filter_chains"] as unknown[]).pop();
    },
    says: /listener "tcp": filter_chain_matcher names filter chain "tcp-other", which the listener does not have \(unknown filter chain\)/,
  },
  {
    name: "a filter chain no filter_chain_matcher action names",
    breakIt: (d) => {
      withMatcher(d);
      const chains = at(d, TCP_LISTENER)["filter_chains"] as Record<string, unknown>[];
      chains.push({ ...structuredClone(chains[0] ?? {}), name: "tcp-unused" });
    },
    says: /listener "tcp": filter chain "tcp-unused" is named by no filter_chain_matcher action \(unreachable filter chain\)/,
  },
  {
    name: "two chains of one name beside a filter_chain_matcher",
    breakIt: (d) => {
      withMatcher(d);
      const chains = at(d, TCP_LISTENER)["filter_chains"] as Record<string, unknown>[];
      chains.push({ ...structuredClone(chains[0] ?? {}) });
    },
    says: /listener "tcp": filter_chains\[2\] name "tcp" is not unique \(filter_chain_matcher needs uniquely named chains\)/,
  },
  {
    name: "an IPMatcher range matcher without ranges (the Matcher protos' own rules)",
    breakIt: (d) => {
      withMatcher(d, []);
    },
    says: /listener "tcp": filter_chain_matcher\.matcher_tree\.custom_match\.typed_config \(xds\.type\.matcher\.v3\.IPMatcher\): invalid IPMatcher\.RangeMatchers\[0\]: .*value must contain at least 1 item/,
  },
];

describe.skipIf(checker.path === undefined)("envoy-check: Envoy's listener-manager rules", () => {
  function write(name: string, doc: EnvoyJson): string {
    const file = join(work, `set-${name.replace(/[^a-z0-9]+/gi, "-")}.json`);
    writeFileSync(file, JSON.stringify(doc));
    return file;
  }

  it("accepts the minimal set every row breaks", () => {
    const run = check([write("minimal", minimalSet())]);
    expect(run.lines).toEqual([expect.stringMatching(/: ok \(2 listeners, 1 clusters, 0 endpoints, 1 routes\)$/)]);
    expect(run.status).toBe(0);
  });

  it("accepts the minimal set with a filter_chain_matcher over two named chains without matches", () => {
    const doc = minimalSet();
    withMatcher(doc);
    const run = check([write("matcher", doc)]);
    expect(run.lines).toEqual([expect.stringMatching(/: ok \(2 listeners, 1 clusters, 0 endpoints, 1 routes\)$/)]);
  });

  it.each([...SET_REJECTIONS, ...MATCHER_REJECTIONS])(
    "rejects $name, and nothing else in the set",
    ({ name, breakIt, says }) => {
      const doc = minimalSet();
      breakIt(doc);
      const file = write(name, doc);
      const run = check([file]);
      expect(run.status).toBe(1);
      expect(run.lines).toEqual([
        expect.stringMatching(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: ${says.source}`)),
        "envoy-check: 1 of 1 files rejected",
      ]);
    },
  );
});
