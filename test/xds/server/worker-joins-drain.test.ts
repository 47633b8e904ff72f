// Worker churn and connection drains, through the real ADS server to the Envoy stand-in: 1,000
// workers join one hosted cluster, one LDS update each, while connections are open on every kind
// of chain. The stand-in drains as Envoy documents it (test/support/envoy/drain.ts): with
// --filter-chain-matcher a join changes only the listener's matcher and drains nothing; with
// filter_chain_match it changes the cluster's by-source chains and drains their connections.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { renderEnvoy } from "../../../src/envoy/render/index.js";
import { aggregate, formatCidr, parseIPv4 } from "../../../src/model/ipv4.js";
import type { Backend, ProxyModel } from "../../../src/model/types.js";
import { EnvoyLikeClient, type ConnectionInfo } from "../../support/envoy/client.js";
import { GROUP, publish, startRig, versionsOf, type Rig } from "./fixtures.js";

const JOINS = 1000;
const PROXY = join(import.meta.dirname, "..", "..", "golden", "envoy", "two-clusters-disjoint-worker-sources");
const base = JSON.parse(readFileSync(join(PROXY, "proxy.json"), "utf8")) as ProxyModel;
const ALPHA = "clusters/alpha";
const AFFECTED = ["clusters/alpha/kubernetes-hostname", "clusters/alpha/kubernetes-service"];

const workerIp = (k: number): string => `10.200.${k >> 8}.${k & 255}`;
const address = (cidr: string): string => cidr.split("/")[0] ?? "";

/**
 * The proxy once `joined` new workers of alpha are up: its by-source backends list the minimal
 * cover of its workers' addresses, as the model computes it (src/model/backends.ts).
 */
function withWorkers(joined: number): ProxyModel {
  const join = (b: Backend): Backend => {
    if (b.attachment !== ALPHA || b.sourcePrefixRanges.length === 0) return b;
    const workers = [
      ...b.sourcePrefixRanges.map(address),
      ...Array.from({ length: joined }, (_, i) => workerIp(i + 1)),
    ];
    return { ...b, sourcePrefixRanges: aggregate(workers.map((w) => parseIPv4(w) ?? 0)).map(formatCidr) };
  };
  return { ...base, backends: base.backends.map(join) };
}

function render(joined: number, filterChainMatcher: boolean) {
  const r = renderEnvoy(withWorkers(joined), { filterChainMatcher });
  if (!r.ok) throw new Error(r.errors.map((e) => e.message).join("\n"));
  return r.resources;
}

/** A worker's connections to its API server: the kubernetes Service (6443, no SNI) and the "kubernetes" alias (443). */
const kubeConnections = (sourceIp: string): ConnectionInfo[] => [
  { destinationPort: 6443, sourceIp, transportProtocol: "tls" },
  { destinationPort: 443, sourceIp, serverName: "kubernetes", transportProtocol: "tls" },
];

let rig: Rig | undefined;
let client: EnvoyLikeClient | undefined;
afterEach(async () => {
  client?.close();
  await rig?.close();
});

async function churn(filterChainMatcher: boolean): Promise<EnvoyLikeClient> {
  rig = await startRig();
  const r = rig;
  publish(r.cache, GROUP, render(0, filterChainMatcher));
  const envoy = new EnvoyLikeClient({ address: r.address, node: { id: "envoy-0", cluster: GROUP } });
  client = envoy;
  envoy.connect();
  await envoy.waitForVersions(versionsOf(r.cache, GROUP));
  // The workers already up (alpha's and beta's), and a client of alpha's API by its name.
  const existing = base.backends.flatMap((b) => b.sourcePrefixRanges).map(address);
  const opened = [
    ...[...new Set(existing)].flatMap(kubeConnections),
    { destinationPort: 6443, sourceIp: "198.51.100.7", serverName: "api.alpha.example.com", transportProtocol: "tls" },
  ].map((c) => envoy.openConnection(c as ConnectionInfo));
  expect(opened.every((o) => o !== undefined)).toBe(true);
  for (let k = 1; k <= JOINS; k++) {
    publish(r.cache, GROUP, render(k, filterChainMatcher));
    await envoy.waitForVersions(versionsOf(r.cache, GROUP));
    // The worker that joined reaches its own API server on the updated listener.
    const [service] = kubeConnections(workerIp(k));
    const open = service && envoy.openConnection(service);
    expect(open?.chain).toBe("clusters/alpha/kubernetes-service");
  }
  return envoy;
}

describe(`${JOINS} worker joins, one LDS update each`, () => {
  it("with --filter-chain-matcher: no connection is drained", async () => {
    const envoy = await churn(true);
    expect(envoy.violations).toEqual([]);
    expect(envoy.drained).toEqual([]);
    expect(envoy.openConnections.length).toBe(5 + JOINS);
  }, 120_000);

  it("without it: the joining cluster's by-source chains are drained at every join, nothing else", async () => {
    const envoy = await churn(false);
    expect(envoy.violations).toEqual([]);
    expect([...new Set(envoy.drained.map((d) => d.chain))].sort()).toEqual(AFFECTED);
    // alpha's two existing connections, then each new worker's at the next join; the last one stays.
    expect(envoy.drained.length).toBe(2 + (JOINS - 1));
    expect(envoy.openConnections.map((o) => o.chain).sort()).toEqual([
      "clusters/alpha/kube-apiserver",
      "clusters/alpha/kubernetes-service",
      "clusters/beta/kubernetes-hostname",
      "clusters/beta/kubernetes-service",
    ]);
  }, 120_000);
});
