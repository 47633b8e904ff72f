// Make before break in src/xds/server/plan.ts, without a stream: which clusters and endpoints gone
// from the snapshot stay served (retainedFor, docs/xds-protocol.md#rule-14), which endpoints are
// sent again after their cluster changed (rewarmEndpoints, #rule-15) and what a changed listener
// waits for (waitingFor, #rule-15, #rule-16). Snapshots are the proxy fixture rendered and cached:
// alpha and beta, then alpha alone (beta's four clusters and their endpoints are gone).
import { afterEach, describe, expect, test, vi } from "vitest";
import type { CachedResource, TypeSnapshot } from "../../../src/xds/cache/snapshot.js";
import type { Held } from "../../../src/xds/server/memory.js";
import { retainedFor, rewarmEndpoints, waitingFor, type TypeState } from "../../../src/xds/server/plan.js";
import {
  CLUSTER_TYPE_URL,
  ENDPOINT_TYPE_URL,
  LISTENER_TYPE_URL,
  ROUTE_TYPE_URL,
} from "../../../src/xds/resource/type-urls.js";
import { ALPHA, BETA, GAMMA } from "../../envoy/proxy-fixture.js";
import { holdingAll, keysOf, snapshotFor, snapshotWithDns, sotw, typeOf, typeState } from "./plan-fixtures.js";

afterEach(() => {
  vi.restoreAllMocks();
});

const AB = snapshotFor([ALPHA, BETA]);
const A = snapshotFor([ALPHA]);
const types = (t: string): [TypeSnapshot, TypeSnapshot] => [typeOf(AB, t), typeOf(A, t)];
const [cdsAB, cdsA] = types(CLUSTER_TYPE_URL);
const [edsAB, edsA] = types(ENDPOINT_TYPE_URL);
const [ldsAB, ldsA] = types(LISTENER_TYPE_URL);
const all = (t: TypeSnapshot): Map<string, Held> => holdingAll(t.resources.values());
/** Beta's clusters, and their ClusterLoadAssignments (an EDS cluster's service name is its own). */
const BETA_CLUSTERS = [
  "clusters-beta/ignition-server-proxy:443",
  "clusters-beta/konnectivity-server:8091",
  "clusters-beta/kube-apiserver:6443",
  "clusters-beta/oauth-openshift:6443",
];
const [BETA_API = ""] = BETA_CLUSTERS.filter((n) => n.includes("kube-apiserver"));
/** No reconnect: the client was given nothing on an earlier stream. */
const noMemory = (): readonly ReadonlyMap<string, Held>[] => [];
const state = (typeUrl: string, held: ReadonlyMap<string, Held>, more: Partial<TypeState> = {}): TypeState => ({
  ...typeState(typeUrl, sotw([]), held),
  ...more,
});
/** Known only by version: a Delta reconnect named a version this server cannot map to content. */
const byVersionOnly: Held = { version: "a-version-from-before", res: undefined };
/** Told it does not exist (Delta removed_resources). */
const toldAbsent: Held = { version: "", res: undefined };

describe("the fixture", () => {
  test("alpha's and beta's listeners use beta's EDS clusters; alpha's alone use none of them", () => {
    const used = (t: TypeSnapshot): string[] => [...t.resources.values()].flatMap((l) => l.references.clusters);
    expect(BETA_CLUSTERS.every((c) => used(ldsAB).includes(c))).toBe(true);
    expect(BETA_CLUSTERS.some((c) => used(ldsA).includes(c))).toBe(false);
    expect(BETA_CLUSTERS.map((c) => cdsAB.resources.get(c)?.references.endpoints)).toEqual(BETA_CLUSTERS);
    expect(BETA_CLUSTERS.filter((c) => cdsA.resources.has(c) || edsA.resources.has(c))).toEqual([]);
  });
});

describe("retainedFor, CDS: a gone cluster stays while a listener or route the client has uses it", () => {
  test("the client's listeners still use beta's clusters: those are kept, as the very resources it holds", () => {
    const cds = state(CLUSTER_TYPE_URL, all(cdsAB));
    const kept = retainedFor(cds, cdsA.resources, [cds, state(LISTENER_TYPE_URL, all(ldsAB))], noMemory);
    expect(keysOf(kept)).toEqual(BETA_CLUSTERS);
    for (const c of BETA_CLUSTERS) expect(kept.get(c)).toBe(cdsAB.resources.get(c));
    // Its listeners are alpha's alone now: nothing is kept.
    expect(retainedFor(cds, cdsA.resources, [cds, state(LISTENER_TYPE_URL, all(ldsA))], noMemory).size).toBe(0);
  });

  test("listeners as sent or as acknowledged both count: the client may hold either", () => {
    const cds = state(CLUSTER_TYPE_URL, all(cdsAB));
    const sentNotAcked = state(LISTENER_TYPE_URL, all(ldsAB), { acked: all(ldsA) });
    const ackedThenReplaced = state(LISTENER_TYPE_URL, all(ldsA), { acked: all(ldsAB) });
    for (const lds of [sentNotAcked, ackedThenReplaced]) {
      expect(keysOf(retainedFor(cds, cdsA.resources, [cds, lds], noMemory))).toEqual(BETA_CLUSTERS);
    }
  });

  test("route configurations count too, with what a SotW client keeps of earlier responses", () => {
    // alpha's apps VIP moves to gamma with another address: the old VIP's clusters are gone.
    const next = snapshotFor([BETA, { ...GAMMA, appsVip: "192.168.10.201" }]);
    const cds = state(CLUSTER_TYPE_URL, all(cdsAB));
    const lds = state(LISTENER_TYPE_URL, all(typeOf(next, LISTENER_TYPE_URL)));
    const routes = all(typeOf(next, ROUTE_TYPE_URL));
    const olderRoutes = all(typeOf(AB, ROUTE_TYPE_URL));
    const withKept = state(ROUTE_TYPE_URL, routes, { kept: olderRoutes });
    const nextClusters = typeOf(next, CLUSTER_TYPE_URL).resources;
    expect(keysOf(retainedFor(cds, nextClusters, [cds, lds, withKept], noMemory))).toEqual(["vip/192.168.10.200:80"]);
    expect(retainedFor(cds, nextClusters, [cds, lds, state(ROUTE_TYPE_URL, routes)], noMemory).size).toBe(0);
  });

  test("listeners not subscribed on this stream (yet): what earlier streams gave the client counts", () => {
    const cds = state(CLUSTER_TYPE_URL, all(cdsAB));
    const asked: string[] = [];
    const remembered = (t: string): readonly ReadonlyMap<string, Held>[] => {
      asked.push(t);
      return t === LISTENER_TYPE_URL ? [all(ldsA), all(ldsAB)] : [];
    };
    expect(keysOf(retainedFor(cds, cdsA.resources, [cds], remembered))).toEqual(BETA_CLUSTERS);
    expect(asked.sort()).toEqual([LISTENER_TYPE_URL, ROUTE_TYPE_URL].sort());
    expect(retainedFor(cds, cdsA.resources, [cds], noMemory).size).toBe(0);
  });

  test("nothing the client holds is gone: nothing is kept, and no listener is looked at", () => {
    const cds = state(CLUSTER_TYPE_URL, all(cdsA));
    const remembered = vi.fn(noMemory);
    expect(retainedFor(cds, cdsAB.resources, [cds], remembered).size).toBe(0);
    expect(remembered).not.toHaveBeenCalled();
  });

  test("a listener known only by version may use any cluster: every gone one is kept; one told absent uses none", () => {
    const cds = state(CLUSTER_TYPE_URL, all(cdsAB));
    const unknown = state(LISTENER_TYPE_URL, new Map([["https-443", byVersionOnly]]));
    expect(keysOf(retainedFor(cds, cdsA.resources, [cds, unknown], noMemory))).toEqual(BETA_CLUSTERS);
    const absent = state(LISTENER_TYPE_URL, new Map([...all(ldsA), ["gone-listener", toldAbsent]]));
    expect(retainedFor(cds, cdsA.resources, [cds, absent], noMemory).size).toBe(0);
  });
});

describe("retainedFor, EDS: the endpoints of every cluster the client still has stay", () => {
  const eds = (held: ReadonlyMap<string, Held> = all(edsAB)): TypeState =>
    typeState(ENDPOINT_TYPE_URL, sotw([...edsAB.resources.keys()]), held);

  test("the client still holds beta's clusters (as sent, acknowledged or kept): their endpoints are kept", () => {
    const e = eds();
    for (const cds of [
      state(CLUSTER_TYPE_URL, all(cdsAB)),
      state(CLUSTER_TYPE_URL, all(cdsA), { acked: all(cdsAB) }),
      state(CLUSTER_TYPE_URL, all(cdsA), { kept: all(cdsAB) }),
    ]) {
      const kept = retainedFor(e, edsA.resources, [cds, e], noMemory);
      expect(keysOf(kept)).toEqual(BETA_CLUSTERS);
      for (const n of BETA_CLUSTERS) expect(kept.get(n)).toBe(edsAB.resources.get(n));
    }
    expect(retainedFor(e, edsA.resources, [state(CLUSTER_TYPE_URL, all(cdsA)), e], noMemory).size).toBe(0);
  });

  test("the clusters the listeners use do not decide it: without clusters on this stream nothing is kept", () => {
    const e = eds();
    const earlierListeners = (): readonly ReadonlyMap<string, Held>[] => [all(ldsAB)];
    expect(retainedFor(e, edsA.resources, [e, state(LISTENER_TYPE_URL, all(ldsAB))], earlierListeners).size).toBe(0);
  });

  test("a cluster known only by version may use any endpoints: every gone one is kept; one told absent uses none", () => {
    const e = eds();
    const unknown = state(CLUSTER_TYPE_URL, new Map([["some-cluster", byVersionOnly]]));
    expect(keysOf(retainedFor(e, edsA.resources, [unknown, e], noMemory))).toEqual(BETA_CLUSTERS);
    const absent = state(CLUSTER_TYPE_URL, new Map([...all(cdsA), ["gone-cluster", toldAbsent]]));
    expect(retainedFor(e, edsA.resources, [absent, e], noMemory).size).toBe(0);
  });

  test("what the snapshot still has is served at its new version, and what has no known content is not kept", () => {
    // Alpha's endpoints change; the client holds the old ones, and beta's API endpoints by version only.
    const moved = snapshotFor([ALPHA], (name) => [{ address: "10.130.0.9", port: Number(name.split(":").pop()) }]);
    const movedEds = typeOf(moved, ENDPOINT_TYPE_URL).resources;
    expect([...edsA.resources.values()].every((r) => movedEds.get(r.name)?.version !== r.version)).toBe(true);
    const e = eds(new Map([...all(edsAB), [BETA_API, byVersionOnly]]));
    const kept = retainedFor(e, movedEds, [state(CLUSTER_TYPE_URL, all(cdsAB)), e], noMemory);
    expect(keysOf(kept)).toEqual(BETA_CLUSTERS.filter((n) => n !== BETA_API));
  });

  test("a cluster without endpoints (LOGICAL_DNS) keeps none", () => {
    const withDns = snapshotWithDns([ALPHA, BETA], BETA_API);
    const e = eds();
    const cds = state(CLUSTER_TYPE_URL, all(typeOf(withDns, CLUSTER_TYPE_URL)));
    expect(keysOf(retainedFor(e, edsA.resources, [cds, e], noMemory))).toEqual(
      BETA_CLUSTERS.filter((n) => n !== BETA_API),
    );
  });
});

describe("retainedFor: listeners and route configurations gone from the snapshot are not kept", () => {
  test("only clusters and endpoints are, even when the client's clusters are known only by version", () => {
    const gamma = snapshotFor([GAMMA]);
    const unknownClusters = state(CLUSTER_TYPE_URL, new Map([["some-cluster", byVersionOnly]]));
    for (const t of [LISTENER_TYPE_URL, ROUTE_TYPE_URL]) {
      const ts = state(t, all(typeOf(AB, t)));
      const now = typeOf(gamma, t).resources;
      expect(
        [...ts.held.keys()].some((n) => !now.has(n)),
        t,
      ).toBe(true);
      expect(retainedFor(ts, now, [unknownClusters, ts], () => [all(ldsAB)]).size, t).toBe(0);
    }
  });
});

describe("rewarmEndpoints: an updated cluster warms again only on its ClusterLoadAssignment", () => {
  test("the updated clusters' endpoints count as not held, so they are sent again; the others stay held", () => {
    const eds = typeState(ENDPOINT_TYPE_URL, sotw([...edsAB.resources.keys()]), all(edsAB));
    const before = eds.held;
    const updated = [cdsAB.resources.get(BETA_API)].filter((c) => c !== undefined);
    rewarmEndpoints(updated, [state(CLUSTER_TYPE_URL, all(cdsAB)), eds]);
    expect(keysOf(eds.held)).toEqual(keysOf(before).filter((n) => n !== BETA_API));
    for (const [n, h] of eds.held) expect(h).toBe(before.get(n));
  });

  test("endpoints the stream does not hold, or a cluster without any (LOGICAL_DNS): the EDS state is left as it is", () => {
    const eds = typeState(ENDPOINT_TYPE_URL, sotw([...edsA.resources.keys()]), all(edsA));
    const before = eds.held;
    const dnsCluster = typeOf(snapshotWithDns([ALPHA], "vip/192.168.10.200:443"), CLUSTER_TYPE_URL).resources.get(
      "vip/192.168.10.200:443",
    );
    expect(dnsCluster?.references.endpoints).toBeUndefined();
    const betaApi = cdsAB.resources.get(BETA_API);
    const updated = [betaApi, dnsCluster].filter((c): c is CachedResource => c !== undefined);
    expect(updated.length).toBe(2);
    rewarmEndpoints(updated, [state(CLUSTER_TYPE_URL, all(cdsAB)), eds]);
    expect(eds.held).toBe(before);
  });

  test("a stream that does not subscribe endpoints has nothing to warm", () => {
    const cds = state(CLUSTER_TYPE_URL, all(cdsAB));
    expect(() => {
      rewarmEndpoints([...cdsAB.resources.values()], [cds]);
    }).not.toThrow();
    expect(cds.held.size).toBe(cdsAB.resources.size);
  });
});

describe("waitingFor: a changed listener waits for what it needs from this stream", () => {
  const listener = (name: string): CachedResource => {
    const l = ldsA.resources.get(name);
    if (l === undefined) throw new Error(`no listener ${name}`);
    return l;
  };
  const lds = state(LISTENER_TYPE_URL, new Map());
  const ALPHA_API = "clusters-alpha/kube-apiserver:6443";
  const ready = (): TypeState[] => [
    state(CLUSTER_TYPE_URL, all(cdsA)),
    typeState(ENDPOINT_TYPE_URL, sotw([...edsA.resources.keys()]), all(edsA)),
  ];

  test("every cluster ACKed with its endpoints: nothing to wait for", () => {
    expect(listener("kube-6443").references.clusters).toEqual([ALPHA_API]);
    expect(waitingFor(lds, [...ldsA.resources.values()], ready())).toBeUndefined();
  });

  test("a cluster ACKed but taken away by a response still in flight: wait for it", () => {
    const [cds, eds] = ready();
    if (cds === undefined || eds === undefined) throw new Error("no state");
    cds.held = new Map([...cds.held].filter(([n]) => n !== ALPHA_API));
    expect(waitingFor(lds, [listener("kube-6443")], [cds, eds])).toBe(`cluster "${ALPHA_API}" to be acknowledged`);
  });

  test("after its cluster was updated and sent again, a listener waits for the endpoints sent again", () => {
    const [cds, eds] = ready();
    if (cds === undefined || eds === undefined) throw new Error("no state");
    rewarmEndpoints(
      [cdsA.resources.get(ALPHA_API)].filter((c) => c !== undefined),
      [cds, eds],
    );
    expect(waitingFor(lds, [listener("kube-6443")], [cds, eds])).toBe(`endpoints "${ALPHA_API}" to be acknowledged`);
  });

  test("a LOGICAL_DNS cluster has no endpoints to wait for: its ACK is enough", () => {
    const dnsName = "vip/192.168.10.200:443";
    const snap = snapshotWithDns([ALPHA], dnsName);
    const https = typeOf(snap, LISTENER_TYPE_URL).resources.get("https-443");
    expect(https?.references.clusters).toContain(dnsName);
    const eds = typeOf(snap, ENDPOINT_TYPE_URL);
    expect(eds.resources.has(dnsName)).toBe(false);
    const types = [
      state(CLUSTER_TYPE_URL, all(typeOf(snap, CLUSTER_TYPE_URL))),
      typeState(ENDPOINT_TYPE_URL, sotw([...eds.resources.keys()]), all(eds)),
    ];
    expect(
      waitingFor(
        lds,
        [https].filter((l) => l !== undefined),
        types,
      ),
    ).toBeUndefined();
  });

  test("a cluster this stream does not subscribe to is not waited for: it comes from elsewhere", () => {
    const named = (names: readonly string[]): TypeState[] => [typeState(CLUSTER_TYPE_URL, sotw(names), new Map())];
    expect(waitingFor(lds, [listener("kube-6443")], named(["vip/192.168.10.200:80"]))).toBeUndefined();
    expect(waitingFor(lds, [listener("kube-6443")], named([ALPHA_API]))).toBe(
      `cluster "${ALPHA_API}" to be acknowledged`,
    );
  });

  test("the same client state is not checked again; a state of all new objects gets its own answer", () => {
    const types = ready();
    const [cds] = types;
    if (cds === undefined) throw new Error("no state");
    const l = listener("kube-6443");
    expect(waitingFor(lds, [l], types)).toBeUndefined();
    const has = vi.spyOn(cds.subscription, "has");
    expect(waitingFor(lds, [l], types)).toBeUndefined();
    expect(has).not.toHaveBeenCalled();
    vi.restoreAllMocks();
    // Another subscription, other held and ACKed maps of both types: nothing ACKed yet.
    const fresh = [
      typeState(CLUSTER_TYPE_URL, sotw([...cdsA.resources.keys()]), new Map()),
      typeState(ENDPOINT_TYPE_URL, sotw([...edsA.resources.keys()]), new Map()),
    ];
    expect(waitingFor(lds, [l], fresh)).toBe(`cluster "${ALPHA_API}" to be acknowledged`);
  });
});
