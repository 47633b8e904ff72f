// Differential: the embedded responder (`oooi serve`) and real CoreDNS, given the same DnsModel,
// must give every client the same rcode, AA flag, answer and authority (TTLs included) — for every
// example and for seeded random shared-VLAN topologies, from a VLAN and a pod-network source.
// Queries: every published name and zone apex (A, AAAA, TXT, NS, SOA, ANY), wildcard apps names,
// unpublished names below published ones and under the cluster domain, forwarded names.
// CoreDNS runs without `cache` here: the responder has none, and CoreDNS's cache marks every
// reply it serves as authoritative, forwarded ones included (examples.test.ts covers the cache).
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDnsResponder } from "../../../src/dns/server/index.js";
import { renderCoreDns } from "../../../src/dns/render/index.js";
import { renderAll } from "../../../src/pipeline/outputs.js";
import type { DnsModel } from "../../../src/model/types.js";
import { scenario } from "../../support/arbitrary.js";
import { anyModel } from "../arbitraries.js";

import { digBatch, type Query, type Reply } from "./batch.js";
import { EXAMPLES, renderExample } from "./examples.js";
import { clientIn, COREDNS, modelOnLoopback, podClientOutside, startCoreDns } from "./rig.js";
import { startUpstream, type Upstream } from "./upstream.js";
import { skipUnless, toolMissing } from "../../support/peers.js";

const digMissing = skipUnless(toolMissing("dig", "apt-get install bind9-dnsutils")) !== undefined;
const SEED = 1811;
const RANDOM_TOPOLOGIES = 12;
const RANDOM_MODELS = 15;

/** Every name worth asking about in `model`, with the qtypes that tell the servers apart. */
function queriesFor(model: DnsModel): Query[] {
  const names = new Map<string, readonly string[]>();
  const add = (name: string, ...types: string[]): void => {
    names.set(name, [...new Set([...(names.get(name) ?? []), ...types])]);
  };
  const domains = new Set<string>();
  for (const view of model.views) {
    for (const zone of view.zones) {
      add(zone.origin, "A", "AAAA", "TXT", "NS", "SOA", "ANY");
      add(`ns.${zone.origin}`, "A");
      add(`x.${zone.origin}`, "A", "AAAA");
      for (const r of zone.records) {
        if (r.name.startsWith("*.")) {
          const parent = r.name.slice(2);
          add(`console-openshift-console.${parent}`, "A", "AAAA");
          add(`a.b.${parent}`, "A", "TXT");
        } else {
          add(r.name, "A", "AAAA");
          // Its parent may be an empty non-terminal (NODATA) or the apex.
          const parent = r.name.slice(r.name.indexOf(".") + 1);
          if (r.name.includes(".") && parent.endsWith(zone.origin)) add(parent, "A");
        }
      }
      // The parent (for per-name zones, the cluster domain): a name no block of this view serves
      // falls back to parent zones, finally the root block.
      const dot = zone.origin.indexOf(".");
      if (dot > 0) domains.add(zone.origin.slice(dot + 1));
    }
  }
  for (const d of domains) {
    add(d, "A", "SOA");
    add(`foo.${d}`, "A", "AAAA");
    add(`nxfoo.${d}`, "A");
  }
  add("www.example.net", "A", "AAAA");
  add("nx.example.net", "A");
  for (const alias of [
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
    "kubernetes.default.svc.cluster.local",
  ])
    add(alias, "A");
  return [...names]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .flatMap(([name, types]) => types.map((type) => ({ name, type })));
}

interface Difference {
  readonly view: string;
  readonly query: string;
  readonly responder: Omit<Reply, "query">;
  readonly coredns: Omit<Reply, "query">;
}

async function differences(model: DnsModel, upstream: Upstream, tcp: boolean): Promise<Difference[]> {
  const loopback = modelOnLoopback(model);
  const coredns = await startCoreDns(renderCoreDns(loopback).files, { upstream, withoutCache: true });
  const responder = await startDnsResponder(loopback, { host: "127.0.0.1", port: 0, upstreamPort: upstream.port });
  try {
    const queries = queriesFor(model);
    const out: Difference[] = [];
    const vlanCidr = loopback.views[0].sourceCidr ?? "";
    const sources = [
      ["vlan", clientIn(vlanCidr)],
      ["pods", podClientOutside(vlanCidr)],
    ] as const;
    const strip = (reply: Reply): Omit<Reply, "query"> => ({
      status: reply.status,
      aa: reply.aa,
      answer: reply.answer,
      authority: reply.authority,
    });
    const compare = async (view: string, source: string, asked: readonly Query[]): Promise<Difference[]> => {
      const ours = await digBatch({ host: "127.0.0.1", port: responder.address.udpPort }, asked, { source, tcp });
      const theirs = await digBatch(coredns, asked, { source, tcp });
      return ours.flatMap((r, i) => {
        const c = theirs[i];
        if (c !== undefined && JSON.stringify(strip(r)) === JSON.stringify(strip(c))) return [];
        return [
          {
            view,
            query: `${r.query.name} ${r.query.type}`,
            responder: strip(r),
            coredns: c === undefined ? strip(r) : strip(c),
          },
        ];
      });
    };
    for (const [view, source] of sources) {
      // A differing answer is asked once more before it counts: about one run in three, CoreDNS
      // returned a forwarded NODATA without the upstream's SOA for one query (not yet explained;
      // see the closing note of issue 11). A difference that repeats still fails the test.
      const first = await compare(view, source, queries);
      const again =
        first.length === 0
          ? []
          : await compare(
              view,
              source,
              queries.filter((q) => first.some((d) => d.query === `${q.name} ${q.type}`)),
            );
      out.push(...again);
    }
    return out;
  } finally {
    await responder.close();
    await coredns.close();
  }
}

describe.skipIf(COREDNS.path === undefined || digMissing)("embedded responder and real CoreDNS answer alike", () => {
  let upstream: Upstream;
  beforeAll(async () => {
    upstream = await startUpstream();
  });
  afterAll(async () => {
    await upstream.close();
  });

  it.each(EXAMPLES)("example %s, over UDP and TCP", async (example) => {
    const { servers } = await renderExample(example);
    for (const server of servers) {
      const model = server.topology.dns;
      if (model === undefined) continue;
      expect(await differences(model, upstream, false)).toEqual([]);
      expect(await differences(model, upstream, true)).toEqual([]);
    }
  });

  it(`${RANDOM_TOPOLOGIES} seeded random shared-VLAN topologies (seed ${SEED})`, async () => {
    const models = fc
      .sample(scenario, { seed: SEED, numRuns: RANDOM_TOPOLOGIES })
      .flatMap((s) => renderAll(s.state).infras.flatMap((r) => (r.topology.dns === undefined ? [] : [r.topology.dns])));
    expect(models.length).toBeGreaterThanOrEqual(RANDOM_TOPOLOGIES);
    // The sample must exercise what differs between views: some default views empty, some not.
    expect(new Set(models.map((m) => m.views[1].zones.length === 0))).toEqual(new Set([true, false]));
    for (const model of models) expect(await differences(model, upstream, false)).toEqual([]);
  }, 240_000);

  // Beyond what the model emits today: zones nested in one another, apex and deeper records,
  // empty non-terminals, wildcards below other names, views publishing different zones.
  it(`${RANDOM_MODELS} seeded arbitrary models with nesting zones (seed ${SEED})`, async () => {
    for (const model of fc.sample(anyModel, { seed: SEED, numRuns: RANDOM_MODELS })) {
      expect({ model, differences: await differences(model, upstream, false) }).toEqual({ model, differences: [] });
    }
  }, 240_000);
});
