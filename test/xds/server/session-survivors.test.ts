// The session on an in-process transport, at the edges Stryker found untested (issue 32): requests
// that arrive before the type's first response, nonces that are not this stream's, type order,
// types the server does not know yet, a Delta stream of a group without a snapshot, what a stream
// logs when it holds a listener back, and the control plane every response names.
import { describe, expect, test } from "vitest";
import { XdsEngine } from "../../../src/xds/server/index.js";
import {
  CLUSTER_TYPE_URL,
  ENDPOINT_TYPE_URL,
  LISTENER_TYPE_URL,
  ROUTE_TYPE_URL,
} from "../../../src/xds/resource/protos.js";
import { KEA_CONFIG_TYPE_SPEC, KEA_CONFIG_TYPE_URL, keaConfigResource } from "../../../src/dhcp/kea-config-resource.js";
import { ALPHA, BETA, GROUP, publish, rendered } from "./fixtures.js";
import { ALPHA_API, BETA_API, delta, FakeCall, NODE, sessionRig, sotw } from "./session-fixtures.js";

const names = (r: { readonly resources: readonly { readonly name: string }[] } | undefined): string[] =>
  (r?.resources ?? []).map((x) => x.name).sort();

describe("requests before the type's first response (rule 5 counts only this stream's responses)", () => {
  test("SotW: a second request while nothing was sent yet (no snapshot) replaces the first's names", () => {
    const { engine, cache } = sessionRig({ empty: true });
    const call = new FakeCall();
    const s = engine.openSession(call, "sotw");
    s.handleSotw(sotw({ node: NODE, type_url: ENDPOINT_TYPE_URL, resource_names: [ALPHA_API] }));
    s.handleSotw(sotw({ type_url: ENDPOINT_TYPE_URL, resource_names: [ALPHA_API, BETA_API] }));
    expect(call.raw).toEqual([]);
    publish(cache, GROUP, rendered([ALPHA, BETA]));
    expect(call.sotw.map(names)).toEqual([[ALPHA_API, BETA_API]]);
  });

  test("SotW: a nonce this stream never sent does not make a request stale before any response", () => {
    const { engine, cache, find } = sessionRig({ empty: true });
    const call = new FakeCall();
    const s = engine.openSession(call, "sotw");
    // A nonce left over from an earlier stream, on the first request and on the next.
    s.handleSotw(
      sotw({ node: NODE, type_url: ENDPOINT_TYPE_URL, response_nonce: "from-before", resource_names: [ALPHA_API] }),
    );
    s.handleSotw(
      sotw({ type_url: ENDPOINT_TYPE_URL, response_nonce: "from-before", resource_names: [ALPHA_API, BETA_API] }),
    );
    publish(cache, GROUP, rendered([ALPHA, BETA]));
    expect(call.sotw.map(names)).toEqual([[ALPHA_API, BETA_API]]);
    expect(find("ignoring SotW request with a stale nonce")).toEqual([]);
  });

  test("SotW: a first request carrying an earlier stream's nonce is answered", () => {
    const { engine } = sessionRig();
    const call = new FakeCall();
    engine
      .openSession(call, "sotw")
      .handleSotw(
        sotw({ node: NODE, type_url: ENDPOINT_TYPE_URL, response_nonce: "from-before", resource_names: [ALPHA_API] }),
      );
    expect(call.sotw.map(names)).toEqual([[ALPHA_API]]);
  });

  test("Delta: repeating the newest nonce after its ACK is not called stale", () => {
    const { engine, find } = sessionRig();
    const call = new FakeCall();
    const s = engine.openSession(call, "delta");
    s.handleDelta(delta({ node: NODE, type_url: ENDPOINT_TYPE_URL, resource_names_subscribe: [ALPHA_API] }));
    const nonce = call.delta[0]?.nonce ?? "";
    s.handleDelta(delta({ type_url: ENDPOINT_TYPE_URL, response_nonce: nonce }));
    s.handleDelta(delta({ type_url: ENDPOINT_TYPE_URL, response_nonce: nonce, resource_names_subscribe: [BETA_API] }));
    expect(call.delta.map(names)).toEqual([[ALPHA_API], [BETA_API]]);
    expect(find("Delta request with a stale nonce: applying its subscription changes only")).toEqual([]);
  });
});

describe("a stream the server ended", () => {
  test("a Delta request arriving after the stream ended before its first request opens nothing", () => {
    const { engine, find } = sessionRig();
    const call = new FakeCall();
    const s = engine.openSession(call, "delta");
    s.end("server shutting down");
    s.handleDelta(delta({ node: NODE, type_url: CLUSTER_TYPE_URL }));
    expect(call.raw).toEqual([]);
    expect(engine.status.streams()).toEqual([]);
    expect(engine.streamCount()).toBe(0);
    expect(find("xDS stream connected")).toEqual([]);
  });

  test("ending an identified stream logs its disconnect, not an end 'before its first request'", () => {
    const { engine, find } = sessionRig();
    const call = new FakeCall();
    const s = engine.openSession(call, "sotw");
    s.handleSotw(sotw({ node: NODE, type_url: CLUSTER_TYPE_URL }));
    s.end("server shutting down");
    expect(call.ended).toBe(1);
    expect(find("ending xDS stream before its first request")).toEqual([]);
    expect(find("xDS stream disconnected").map((l) => l.obj.reason)).toEqual(["server shutting down"]);
  });
});

describe("push order among types the Envoy order does not name (rule 14)", () => {
  test("other types go by type URL whatever order their requests came in", () => {
    const { engine, clock } = sessionRig();
    clock.queue = true;
    const call = new FakeCall();
    const s = engine.openSession(call, "delta");
    const A = "type.googleapis.com/aa.A";
    const M = "type.googleapis.com/mm.M";
    const Z = "type.googleapis.com/zz.Z";
    s.handleDelta(delta({ node: NODE, type_url: A, resource_names_subscribe: ["x"] }));
    s.handleDelta(delta({ type_url: M, resource_names_subscribe: ["x"] }));
    s.handleDelta(delta({ type_url: Z, resource_names_subscribe: ["x"] }));
    s.handleDelta(delta({ type_url: CLUSTER_TYPE_URL }));
    clock.flush();
    expect(call.delta.map((r) => r.typeUrl)).toEqual([CLUSTER_TYPE_URL, A, M, Z]);
  });
});

describe("a type the server does not know yet", () => {
  test("an empty first request is a wildcard, as for LDS and CDS: the type's resources reach it once served", () => {
    const { engine, cache } = sessionRig();
    const call = new FakeCall();
    const s = engine.openSession(call, "sotw");
    // The responses' resources are counted from the push records: the test decoder knows Envoy's types only.
    const pushed = () =>
      engine.status
        .history()
        .filter((p) => p.typeUrl === KEA_CONFIG_TYPE_URL)
        .map((p) => p.resources);
    s.handleSotw(sotw({ node: NODE, type_url: KEA_CONFIG_TYPE_URL }));
    expect(pushed()).toEqual([0]);
    s.handleSotw(
      sotw({
        type_url: KEA_CONFIG_TYPE_URL,
        response_nonce: engine.status.history()[0]?.nonce ?? "",
        version_info: engine.status.history()[0]?.version ?? "",
      }),
    );
    cache.registerType(KEA_CONFIG_TYPE_URL, KEA_CONFIG_TYPE_SPEC);
    const set = cache.setSnapshot(
      GROUP,
      new Map([[KEA_CONFIG_TYPE_URL, [keaConfigResource("dhcp-a", { Dhcp4: {} })]]]),
    );
    expect(set.ok).toBe(true);
    expect(pushed()).toEqual([0, 1]);
  });
});

describe("a Delta stream of a group without a snapshot yet", () => {
  test("its reconnect (initial_resource_versions) waits, then gets what differs", () => {
    const { engine, cache } = sessionRig({ empty: true });
    const call = new FakeCall();
    const s = engine.openSession(call, "delta");
    s.handleDelta(
      delta({
        node: NODE,
        type_url: ENDPOINT_TYPE_URL,
        resource_names_subscribe: [ALPHA_API, BETA_API],
        initial_resource_versions: { [ALPHA_API]: "from-before" },
      }),
    );
    expect(call.raw).toEqual([]);
    publish(cache, GROUP, rendered([ALPHA, BETA]));
    expect(call.delta.map(names)).toEqual([[ALPHA_API, BETA_API]]);
  });
});

describe("every response names its control plane", () => {
  test("SotW: control_plane.identifier is oooi", () => {
    const { engine } = sessionRig();
    const call = new FakeCall();
    engine.openSession(call, "sotw").handleSotw(sotw({ node: NODE, type_url: CLUSTER_TYPE_URL }));
    expect(call.sotw.map((r) => [r.typeUrl, r.controlPlane])).toEqual([[CLUSTER_TYPE_URL, "oooi"]]);
  });
});

describe("a listener held back (rules 15, 16) says what it waits for", () => {
  test("until its cluster is ACKed, the debug line names the stream, the type and the cluster", () => {
    const { engine, find } = sessionRig();
    const call = new FakeCall();
    const s = engine.openSession(call, "sotw");
    s.handleSotw(sotw({ node: NODE, type_url: CLUSTER_TYPE_URL }));
    s.handleSotw(sotw({ type_url: LISTENER_TYPE_URL }));
    expect(call.sotw.map((r) => r.typeUrl)).toEqual([CLUSTER_TYPE_URL]);
    const held = find("holding back until the client has what this needs");
    expect(held.map((l) => [l.level, l.obj.stream, l.obj.typeUrl])).toEqual([["debug", s.id, LISTENER_TYPE_URL]]);
    expect(held[0]?.obj.waiting).toMatch(/^cluster ".+" to be acknowledged$/);
  });
});

/** Beta's clusters: gone from the snapshot when alpha is served alone. */
const BETA_CLUSTERS = [
  "clusters-beta/ignition-server-proxy:443",
  "clusters-beta/konnectivity-server:8091",
  "clusters-beta/kube-apiserver:6443",
  "clusters-beta/oauth-openshift:6443",
];
/** Alpha alone, its API server's cluster with another connect_timeout. */
function alphaWithTimeout(timeout: string) {
  const base = rendered([ALPHA]);
  const clusters = base.clusters.map((c) =>
    (c as { name?: string }).name === ALPHA_API ? { ...c, connect_timeout: timeout } : c,
  );
  return { ...base, clusters };
}
const hasBeta = (r: { readonly resources: readonly { readonly name: string }[] } | undefined): boolean =>
  BETA_CLUSTERS.every((c) => names(r).includes(c));

/** An ADS stream of NODE that asked for clusters, ACKed them, then listeners, and ACKed those (rule 14's order). */
function clustersThenListeners(engine: ReturnType<typeof sessionRig>["engine"]) {
  const call = new FakeCall();
  const session = engine.openSession(call, "sotw");
  const client = sotwClient(session, call);
  session.handleSotw(sotw({ node: NODE, type_url: CLUSTER_TYPE_URL }));
  client.ack(CLUSTER_TYPE_URL);
  session.handleSotw(sotw({ type_url: LISTENER_TYPE_URL }));
  client.ack(LISTENER_TYPE_URL);
  return { call, session, client };
}

/** A SotW stream's requests, each answering the latest response of its type on `call`. */
function sotwClient(
  s: { handleSotw(req: ReturnType<typeof sotw>): void },
  call: FakeCall,
  /** The names a type's ACK carries (none: a wildcard stream's ACK). */
  namesOf: (typeUrl: string) => string[] | undefined = () => undefined,
) {
  const latest = (typeUrl: string) => call.sotw.filter((r) => r.typeUrl === typeUrl).at(-1);
  const acked = new Set<string>();
  const ack = (typeUrl: string): void => {
    const r = latest(typeUrl);
    const resourceNames = namesOf(typeUrl);
    s.handleSotw(
      sotw({
        type_url: typeUrl,
        response_nonce: r?.nonce ?? "",
        version_info: r?.versionInfo ?? "",
        ...(resourceNames === undefined ? {} : { resource_names: resourceNames }),
      }),
    );
  };
  return {
    latest,
    ack,
    /** ACKs the latest response of each type not ACKed yet, in rule 14's order, until nothing more comes. */
    settle: (): void => {
      for (let progressed = true; progressed;) {
        progressed = false;
        for (const t of [CLUSTER_TYPE_URL, LISTENER_TYPE_URL, ROUTE_TYPE_URL]) {
          const r = latest(t);
          if (r === undefined || acked.has(r.nonce)) continue;
          acked.add(r.nonce);
          ack(t);
          progressed = true;
        }
      }
    },
  };
}

describe("a Delta stream adding the wildcard to its names (rule 19)", () => {
  test("gets every resource of the type, not only the names it added", () => {
    const { engine, cache, clock } = sessionRig();
    const call = new FakeCall();
    const s = engine.openSession(call, "delta");
    s.handleDelta(delta({ node: NODE, type_url: ENDPOINT_TYPE_URL, resource_names_subscribe: [ALPHA_API] }));
    s.handleDelta(delta({ type_url: ENDPOINT_TYPE_URL, response_nonce: call.delta[0]?.nonce ?? "" }));
    // A name, then the wildcard, answered together.
    clock.queue = true;
    s.handleDelta(delta({ type_url: ENDPOINT_TYPE_URL, resource_names_subscribe: [BETA_API] }));
    s.handleDelta(delta({ type_url: ENDPOINT_TYPE_URL, resource_names_subscribe: ["*"] }));
    clock.flush();
    const all = [...(cache.getSnapshot(GROUP)?.types.get(ENDPOINT_TYPE_URL)?.resources.keys() ?? [])];
    expect(all.length).toBeGreaterThan(2);
    expect(call.delta.map(names)).toEqual([[ALPHA_API], all.filter((n) => n !== ALPHA_API).sort()]);
  });
});

describe("streams woken by one change share a response only when it is the same (rule 1)", () => {
  test("SotW: a stream holding the previous version and a new one get one full-state response, nonce included", () => {
    const { engine, cache, clock } = sessionRig();
    const holding = new FakeCall();
    const h = engine.openSession(holding, "sotw");
    h.handleSotw(sotw({ node: NODE, type_url: CLUSTER_TYPE_URL }));
    sotwClient(h, holding).ack(CLUSTER_TYPE_URL);
    clock.queue = true;
    publish(cache, GROUP, rendered([ALPHA]));
    const fresh = new FakeCall();
    engine
      .openSession(fresh, "sotw")
      .handleSotw(sotw({ node: { id: "envoy-1", cluster: GROUP }, type_url: CLUSTER_TYPE_URL }));
    clock.flush();
    const [a, b] = [holding.sotw[1], fresh.sotw[0]];
    expect(names(a)).toEqual(names(b));
    expect(a?.nonce).toBeDefined();
    expect(b?.nonce).toBe(a?.nonce);
  });

  test("SotW: a stream keeping clusters its listeners still use does not share with one that keeps none", () => {
    const { engine, cache, clock } = sessionRig();
    const { call: withListeners, client: wc } = clustersThenListeners(engine);
    const clustersOnly = new FakeCall();
    const c = engine.openSession(clustersOnly, "sotw");
    c.handleSotw(sotw({ node: { id: "envoy-1", cluster: GROUP }, type_url: CLUSTER_TYPE_URL }));
    sotwClient(c, clustersOnly).ack(CLUSTER_TYPE_URL);
    clock.queue = true;
    // Beta goes, and one of alpha's clusters changes: both streams have clusters to send.
    publish(cache, GROUP, alphaWithTimeout("7s"));
    clock.flush();
    // Rule 14: the listeners it holds use beta's clusters, so they stay; the other stream has no listeners.
    expect(withListeners.sotw.filter((r) => r.typeUrl === CLUSTER_TYPE_URL)).toHaveLength(2);
    expect(hasBeta(wc.latest(CLUSTER_TYPE_URL))).toBe(true);
    expect(clustersOnly.sotw).toHaveLength(2);
    const other = clustersOnly.sotw.at(-1);
    expect(other?.nonce).not.toBe(wc.latest(CLUSTER_TYPE_URL)?.nonce);
    expect(names(other).some((n) => BETA_CLUSTERS.includes(n))).toBe(false);
  });
});

describe("make before break (rule 14) only within one aggregated stream", () => {
  test("per-type SotW streams of one node: the CDS stream drops gone clusters at once", () => {
    const { engine, cache } = sessionRig();
    const ldsCall = new FakeCall();
    const lds = engine.openSession(ldsCall, "sotw", "lds");
    lds.handleSotw(sotw({ node: NODE, type_url: LISTENER_TYPE_URL }));
    sotwClient(lds, ldsCall).ack(LISTENER_TYPE_URL);
    const cdsCall = new FakeCall();
    const cds = engine.openSession(cdsCall, "sotw", "cds");
    cds.handleSotw(sotw({ node: NODE, type_url: CLUSTER_TYPE_URL }));
    sotwClient(cds, cdsCall).ack(CLUSTER_TYPE_URL);
    expect(hasBeta(cdsCall.sotw[0])).toBe(true);
    publish(cache, GROUP, rendered([ALPHA]));
    const after = cdsCall.sotw.slice(1);
    expect(after).toHaveLength(1);
    expect(names(after[0]).some((n) => BETA_CLUSTERS.includes(n))).toBe(false);
  });
});

describe("a reconnecting ADS client's clusters (rule 14 across streams)", () => {
  test("the listeners its node ACKed on the previous stream still use beta's clusters: they stay until its listeners move", () => {
    const { engine, cache } = sessionRig();
    const { session: s1, client: c1 } = clustersThenListeners(engine);
    const clustersAB = c1.latest(CLUSTER_TYPE_URL)?.versionInfo ?? "";
    s1.transportClosed();
    publish(cache, GROUP, rendered([ALPHA]));

    const second = new FakeCall();
    const s2 = engine.openSession(second, "sotw");
    s2.handleSotw(sotw({ node: NODE, type_url: CLUSTER_TYPE_URL, version_info: clustersAB }));
    expect(second.failed).toEqual([]);
    expect(second.sotw.map((r) => r.typeUrl)).toEqual([CLUSTER_TYPE_URL]);
    expect(hasBeta(second.sotw[0])).toBe(true);
  });
});

describe("a reconnecting ADS client's listeners, by the version it names (rule 14 across streams)", () => {
  /** A node that held alpha's and beta's clusters and listeners, back after beta went, naming `listeners`. */
  function back(listeners: string) {
    const { engine, cache, clock } = sessionRig();
    const first = new FakeCall();
    const s1 = engine.openSession(first, "sotw");
    const c1 = sotwClient(s1, first);
    s1.handleSotw(sotw({ node: NODE, type_url: CLUSTER_TYPE_URL }));
    s1.handleSotw(sotw({ type_url: LISTENER_TYPE_URL }));
    c1.settle();
    expect(hasBeta(c1.latest(CLUSTER_TYPE_URL))).toBe(true);
    s1.transportClosed();
    publish(cache, GROUP, rendered([ALPHA]));
    clock.queue = true;
    const call = new FakeCall();
    const s = engine.openSession(call, "sotw");
    const clusters = c1.latest(CLUSTER_TYPE_URL)?.versionInfo ?? "";
    s.handleSotw(sotw({ node: NODE, type_url: CLUSTER_TYPE_URL, version_info: clusters }));
    s.handleSotw(sotw({ type_url: LISTENER_TYPE_URL, version_info: listeners }));
    clock.flush();
    clock.queue = false;
    return { call, client: sotwClient(s, call) };
  }

  test("a version this server cannot place: the listeners it gave the node before may be held, until the client ACKs", () => {
    const { call, client } = back("a-version-from-another-replica");
    expect(call.sotw.map((r) => r.typeUrl)).toEqual([CLUSTER_TYPE_URL, LISTENER_TYPE_URL]);
    expect(hasBeta(call.sotw[0])).toBe(true);
    // Its listener ACK says what it holds (alpha's listeners alone): beta's clusters go.
    client.settle();
    expect(names(client.latest(CLUSTER_TYPE_URL)).some((n) => BETA_CLUSTERS.includes(n))).toBe(false);
  });

  test("no version (a client without listeners): beta's clusters go at once", () => {
    const { call } = back("");
    expect(call.sotw[0]?.typeUrl).toBe(CLUSTER_TYPE_URL);
    expect(names(call.sotw[0]).some((n) => BETA_CLUSTERS.includes(n))).toBe(false);
  });
});

describe("a reconnecting ADS client naming the listener version it was last sent (rule 14 across streams)", () => {
  const OLD_HTTP = "vip/192.168.10.200:80";
  /** Alpha and beta (alpha's apps VIP at `vip`), and when `extra` a listener on 7443 that alone uses OLD_HTTP. */
  function config(vip: string, extra: boolean) {
    const base = rendered([{ ...ALPHA, appsVip: vip }, BETA]);
    const kube = base.listeners.find((l) => (l as { name?: string }).name === "kube-6443");
    if (kube === undefined) throw new Error("no kube-6443 listener");
    const copy = JSON.stringify(kube)
      .replace('"name":"kube-6443"', '"name":"extra-7443"')
      .replace('"port_value":6443', '"port_value":7443')
      .replaceAll(`"${ALPHA_API}"`, `"${OLD_HTTP}"`)
      .replaceAll(`"${BETA_API}"`, `"${OLD_HTTP}"`);
    return extra ? { ...base, listeners: [...base.listeners, JSON.parse(copy) as object] } : base;
  }

  test("it holds that version's listeners only: a cluster only an earlier version used goes", () => {
    const { engine, cache, clock } = sessionRig();
    publish(cache, GROUP, config("192.168.10.200", true));
    const first = new FakeCall();
    const s1 = engine.openSession(first, "sotw");
    const c1 = sotwClient(s1, first);
    s1.handleSotw(sotw({ node: NODE, type_url: CLUSTER_TYPE_URL }));
    s1.handleSotw(sotw({ type_url: LISTENER_TYPE_URL }));
    c1.settle();
    expect(names(c1.latest(LISTENER_TYPE_URL))).toContain("extra-7443");
    // The extra listener goes; the client applies that response but its stream breaks before the ACK.
    publish(cache, GROUP, config("192.168.10.200", false));
    expect(names(c1.latest(LISTENER_TYPE_URL))).not.toContain("extra-7443");
    const versions = {
      clusters: c1.latest(CLUSTER_TYPE_URL)?.versionInfo ?? "",
      listeners: c1.latest(LISTENER_TYPE_URL)?.versionInfo ?? "",
    };
    s1.transportClosed();
    // Meanwhile alpha's apps VIP moves: its old clusters are gone from the snapshot.
    publish(cache, GROUP, config("192.168.10.201", false));

    clock.queue = true;
    const call = new FakeCall();
    const s = engine.openSession(call, "sotw");
    s.handleSotw(sotw({ node: NODE, type_url: CLUSTER_TYPE_URL, version_info: versions.clusters }));
    s.handleSotw(sotw({ type_url: LISTENER_TYPE_URL, version_info: versions.listeners }));
    clock.flush();
    const clusters = call.sotw[0];
    expect(clusters?.typeUrl).toBe(CLUSTER_TYPE_URL);
    // https-443 of the version it holds still uses the old HTTPS VIP; only extra-7443 used the old HTTP one.
    expect(names(clusters)).toContain("vip/192.168.10.200:443");
    expect(names(clusters)).not.toContain(OLD_HTTP);
  });
});

describe("what a SotW client keeps of route configurations a response left out (rules 12, 14)", () => {
  const ROUTE = "http-80";
  const EXTRA = "extra-80";
  /** Alpha's apps VIP at `vip`, with a second route configuration (a copy of http-80) when `extra`. */
  function config(vip: string, extra: boolean) {
    const base = rendered([{ ...ALPHA, appsVip: vip }, BETA]);
    const route = base.routes.find((r) => (r as { name?: string }).name === ROUTE);
    if (route === undefined) throw new Error("no http-80 route configuration");
    return extra ? { ...base, routes: [...base.routes, { ...route, name: EXTRA }] } : base;
  }
  const OLD_HTTP = "vip/192.168.10.200:80";

  /** A SotW ADS stream of CDS, LDS and RDS (`routes`), its first requests naming `versions` of each. */
  function open(engine: XdsEngine, routes: string[], versions: Partial<Record<string, string>> = {}) {
    const call = new FakeCall();
    const s = engine.openSession(call, "sotw");
    const state = { routes };
    const client = sotwClient(s, call, (t) => (t === ROUTE_TYPE_URL ? state.routes : undefined));
    const settle = client.settle;
    const version = (t: string) => ({ version_info: versions[t] ?? "" });
    s.handleSotw(sotw({ node: NODE, type_url: CLUSTER_TYPE_URL, ...version(CLUSTER_TYPE_URL) }));
    s.handleSotw(sotw({ type_url: LISTENER_TYPE_URL, ...version(LISTENER_TYPE_URL) }));
    s.handleSotw(sotw({ type_url: ROUTE_TYPE_URL, resource_names: routes, ...version(ROUTE_TYPE_URL) }));
    return { s, call, client, settle, state };
  }

  /** A stream holding both route configurations, then the move of alpha's VIP that drops the second. */
  function moved() {
    const { engine, cache, clock } = sessionRig();
    publish(cache, GROUP, config("192.168.10.200", true));
    const first = open(engine, [ROUTE, EXTRA]);
    first.settle();
    expect(names(first.client.latest(ROUTE_TYPE_URL))).toEqual([EXTRA, ROUTE]);
    // Alpha's VIP moves and the second route configuration goes: the response leaves it out, which
    // does not delete it on the client (SotW RDS), so the old VIP's HTTP cluster it uses stays.
    publish(cache, GROUP, config("192.168.10.201", false));
    first.settle();
    expect(names(first.client.latest(ROUTE_TYPE_URL))).toEqual([ROUTE]);
    return { engine, clock, first };
  }

  test("a route configuration gone from the snapshot still holds its cluster until the client unsubscribes it", () => {
    const { first } = moved();
    const { s, client, settle, state, call } = first;
    expect(names(client.latest(CLUSTER_TYPE_URL))).toContain(OLD_HTTP);
    expect(names(client.latest(CLUSTER_TYPE_URL))).not.toContain("vip/192.168.10.200:443");
    // The client unsubscribes it: now the cluster goes.
    state.routes = [ROUTE];
    s.handleSotw(
      sotw({
        type_url: ROUTE_TYPE_URL,
        response_nonce: client.latest(ROUTE_TYPE_URL)?.nonce ?? "",
        version_info: client.latest(ROUTE_TYPE_URL)?.versionInfo ?? "",
        resource_names: state.routes,
      }),
    );
    settle();
    expect(names(client.latest(CLUSTER_TYPE_URL))).not.toContain(OLD_HTTP);
    expect(call.failed).toEqual([]);
  });

  test("its next stream, naming the versions it holds, keeps that cluster too: the server remembers what it kept", () => {
    const { engine, clock, first } = moved();
    const versions = Object.fromEntries(
      [CLUSTER_TYPE_URL, LISTENER_TYPE_URL, ROUTE_TYPE_URL].map((t) => [t, first.client.latest(t)?.versionInfo ?? ""]),
    );
    expect(names(first.client.latest(CLUSTER_TYPE_URL))).toContain(OLD_HTTP);
    first.s.transportClosed();
    clock.queue = true;
    const second = open(engine, [ROUTE, EXTRA], versions);
    clock.flush();
    expect(second.call.sotw.map((r) => r.typeUrl)).toContain(CLUSTER_TYPE_URL);
    expect(names(second.client.latest(CLUSTER_TYPE_URL))).toContain(OLD_HTTP);
  });
});
