// The parts kept by identity across builds and renders (model/backends.ts per attachment,
// render/listeners.ts per Backend, chain-matcher.ts per chain, clusters.ts and endpoints.ts per
// Upstream) change nothing, in both listener forms: on random sequences of worker moves, Service
// changes and attachment edits over four hosted clusters, the warm render equals a render of a
// deep copy of the model (no object any memo has seen), and a hosted cluster the step did not
// touch keeps the very objects of its chains, clusters and assignments, so the xDS cache encodes
// none of them again.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { build } from "../../src/model/build.js";
import type { ClusterState, ProxyModel } from "../../src/model/types.js";
import { renderEnvoy, type EnvoyRender } from "../../src/envoy/render/index.js";
import { attachment, combine, hostedCluster, infra, machine, NS, service } from "../support/fixtures.js";

const CLUSTERS = ["alpha", "beta", "gamma", "delta"] as const;

interface Edit {
  readonly cluster: number;
  /** 0: a worker moves, 1: a worker goes, 2: kube-apiserver's ClusterIP changes, 3: headless, 4: apps ingress Ready. */
  readonly what: number;
  readonly value: number;
}

const edit: fc.Arbitrary<Edit> = fc.record({
  cluster: fc.nat({ max: CLUSTERS.length - 1 }),
  what: fc.nat({ max: 4 }),
  value: fc.integer({ min: 10, max: 250 }),
});

function first(): ClusterState {
  return combine(
    { infras: [infra()], attachments: CLUSTERS.map((c) => attachment(c)) },
    ...CLUSTERS.map((c, n) => hostedCluster(c, n, [`192.0.2.${String(10 + n)}`, `192.0.2.${String(20 + n)}`])),
  );
}

/** The state after one edit; every object it does not touch is the same object as before. */
function apply(s: ClusterState, e: Edit): ClusterState {
  const name = CLUSTERS[e.cluster] ?? "alpha";
  const cp = `${NS}-${name}`;
  const worker = `${name}-worker-0`;
  if (e.what === 0 || e.what === 1) {
    // Each cluster moves inside a block of its own: a worker taking another's address is that one's change too.
    const address = `192.0.2.${String(30 + e.cluster * 50 + (e.value % 50))}`;
    const moved = machine(cp, worker, `${name}-workers`, e.what === 0 ? [address] : []);
    return {
      ...s,
      machines: [...s.machines].map((m) => (m.metadata.namespace === cp && m.metadata.name === worker ? moved : m)),
    };
  }
  if (e.what === 2 || e.what === 3) {
    const ip = e.what === 2 ? `10.96.${String(e.cluster)}.${String(e.value)}` : "None";
    const svc = service(cp, "kube-apiserver", ip, [6443]);
    return {
      ...s,
      services: [...s.services].map((x) =>
        x.metadata.namespace === cp && x.metadata.name === "kube-apiserver" ? svc : x,
      ),
    };
  }
  const ready = attachment(name, {
    spec: { appsIngress: { enabled: true } },
    status: { appsIngressStatus: { phase: "Ready", externalIP: `192.0.2.${String(e.value)}` } },
  });
  return { ...s, attachments: s.attachments.map((a) => (a.metadata.name === name ? ready : a)) };
}

function proxyOf(s: ClusterState): ProxyModel {
  const proxy = build(s).topologies[0]?.proxy;
  if (proxy === undefined) throw new Error("the Infra serves a proxy");
  return proxy;
}

/** Every rendered object that belongs to one hosted cluster, by its backend or upstream name. */
function objectsOf(r: EnvoyRender, name: string): object[] {
  if (!r.ok) return [];
  const chains = r.resources.listeners.flatMap(
    (l) => (l as { filter_chains?: { name: string }[] }).filter_chains ?? [],
  );
  const mine = (n: string): boolean => n.startsWith(`${NS}/${name}/`) || n.startsWith(`${NS}-${name}/`);
  return [
    ...chains.filter((c) => mine(c.name)),
    ...r.resources.clusters.filter((c) => mine((c as { name: string }).name)),
    ...r.resources.endpoints.filter((c) => mine((c as { cluster_name: string }).cluster_name)),
  ];
}

describe.each([
  { form: "filter_chain_match", options: {} },
  { form: "filter_chain_matcher", options: { filterChainMatcher: true } },
])("render parts kept by identity ($form)", ({ options }) => {
  it("equal a cold render after every step, and an untouched hosted cluster keeps its objects", () => {
    let kept = 0;
    fc.assert(
      fc.property(fc.array(edit, { minLength: 1, maxLength: 12 }), (edits) => {
        let s = first();
        let before = renderEnvoy(proxyOf(s), options);
        for (const e of edits) {
          s = apply(s, e);
          const proxy = proxyOf(s);
          const warm = renderEnvoy(proxy, options);
          expect(warm).toEqual(renderEnvoy(structuredClone(proxy), options));
          expect(build(s)).toEqual(build(structuredClone(s)));
          for (const [i, name] of CLUSTERS.entries()) {
            if (i === e.cluster) continue;
            const [was, now] = [objectsOf(before, name), objectsOf(warm, name)];
            expect(now.length).toBe(was.length);
            for (const [k, o] of now.entries()) expect(o).toBe(was[k]);
            kept += now.length;
          }
          before = warm;
        }
      }),
      { seed: 1618, numRuns: 60 },
    );
    expect(kept).toBeGreaterThan(400);
  });
});
