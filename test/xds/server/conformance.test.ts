// docs/xds-protocol.md, one test per rule ("rule N" is docs/xds-protocol.md#rule-N), against the
// real server on 127.0.0.1:0. Raw streams where a rule needs exact control over requests; the
// Envoy-like client where it is about behaviour.
// "Nothing was sent" is proven with a barrier: a request for a fresh type that always gets a
// response, which the server writes after anything the earlier request would have caused.
import { afterEach, describe, expect, test } from "vitest";
import {
  CLUSTER_TYPE_URL,
  ENDPOINT_TYPE_URL,
  LISTENER_TYPE_URL,
  ROUTE_TYPE_URL,
} from "../../../src/xds/resource/protos.js";
import { XdsStatus } from "../../../src/xds/client-status.js";
import { type Logger } from "../../../src/util/logger.js";
import { EnvoyLikeClient } from "../../support/envoy/client.js";
import { openDelta, openSotw, type DeltaStream, type SotwStream } from "../../support/envoy/raw.js";
import type { DeltaResponse, SotwResponse } from "../../support/envoy/wire.js";
import { ALPHA, BETA, GAMMA, GROUP, publish, rendered, startRig, versionsOf, type Rig } from "./fixtures.js";
import { sampleEndpoints } from "../../envoy/proxy-fixture.js";
import { envoyInput } from "../../../src/envoy/snapshot.js";

const NODE = { id: "envoy-0", cluster: GROUP };
const ALPHA_API = "clusters-alpha/kube-apiserver:6443";
const BETA_API = "clusters-beta/kube-apiserver:6443";
const GAMMA_API = "tenant-x-gamma/kube-apiserver:6443";

let rig: Rig | undefined;
const cleanups: (() => void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) c();
  await rig?.close();
  rig = undefined;
});

async function start(logger?: Logger): Promise<Rig> {
  rig = await startRig(logger ? { logger, status: new XdsStatus({ logger }) } : {});
  return rig;
}

function sotw(r: Rig): SotwStream {
  const s = openSotw(r.address);
  cleanups.push(() => {
    s.close();
  });
  return s;
}

function delta(r: Rig): DeltaStream {
  const s = openDelta(r.address);
  cleanups.push(() => {
    s.close();
  });
  return s;
}

function envoy(r: Rig, protocol: "sotw" | "delta", id = "envoy-0"): EnvoyLikeClient {
  const c = new EnvoyLikeClient({ address: r.address, node: { id, cluster: GROUP }, protocol });
  cleanups.push(() => {
    c.close();
  });
  c.connect();
  return c;
}

let barriers = 0;

/** Asserts the stream has nothing queued up to now: the next response answers a fresh barrier type. */
async function expectNothingSent(s: SotwStream | DeltaStream): Promise<void> {
  const typeUrl = `type.googleapis.com/oooi.test.Barrier${String((barriers += 1))}`;
  s.send({ type_url: typeUrl });
  const next = await s.next();
  expect(next.typeUrl, "an unexpected response came before the barrier").toBe(typeUrl);
}

function names(r: SotwResponse | DeltaResponse): string[] {
  return r.resources.map((x) => x.name);
}

/** Endpoints of the sample, with one cluster moved to another address. */
function movedEndpoint(cluster: string, address: string) {
  return (name: string) => (name === cluster ? [{ address, port: 6443 }] : sampleEndpoints(name));
}

describe("docs/xds-protocol.md: xDS protocol rules", () => {
  test("rule 1: every response has a nonce unique on its stream; nonces never carry over a reconnect", async () => {
    const r = await start();
    publish(r.cache, GROUP, rendered([ALPHA]));
    const c = envoy(r, "sotw");
    await c.waitForVersions(versionsOf(r.cache, GROUP));
    publish(r.cache, GROUP, rendered([ALPHA, BETA]));
    await c.waitForVersions(versionsOf(r.cache, GROUP));
    const first = c.log.map((x) => x.nonce);
    expect(new Set(first).size).toBe(first.length);
    expect(first.every((n) => n !== "")).toBe(true);

    c.disconnect();
    c.connect();
    await c.waitFor(() => c.log.length >= first.length + 4, "the new stream's responses");
    const second = c.log.slice(first.length).map((x) => x.nonce);
    expect(new Set([...first, ...second]).size).toBe(first.length + second.length);

    // A new stream that opens with the old stream's nonce is not taken as an ACK of anything.
    const s = sotw(r);
    const old = c.log.find((x) => x.typeUrl === LISTENER_TYPE_URL);
    s.send({
      node: NODE,
      type_url: LISTENER_TYPE_URL,
      response_nonce: old?.nonce ?? "",
      version_info: old?.version ?? "",
    });
    const res = await s.next();
    expect([...first, ...second]).not.toContain(res.nonce);
    const stream = r.server.status
      .streams()
      .find((x) => x.node.id === NODE.id && x.types.some((t) => t.lastSent?.nonce === res.nonce));
    expect(stream?.types.find((t) => t.typeUrl === LISTENER_TYPE_URL)?.lastAcked).toBeUndefined();
  });

  test("rule 2: version_info is per type URL and changes whenever any resource of that type changes", async () => {
    const r = await start();
    publish(r.cache, GROUP, rendered([ALPHA, BETA]));
    // Clusters on one stream; endpoints and listeners on another (no CDS there, so nothing waits).
    const c = sotw(r);
    c.send({ node: NODE, type_url: CLUSTER_TYPE_URL });
    const cds1 = await c.next();
    c.send({ type_url: CLUSTER_TYPE_URL, response_nonce: cds1.nonce, version_info: cds1.versionInfo });
    const s = sotw(r);
    s.send({ node: NODE, type_url: ENDPOINT_TYPE_URL, resource_names: [ALPHA_API, BETA_API] });
    const eds1 = await s.next();
    s.send({ type_url: LISTENER_TYPE_URL });
    const lds1 = await s.next();
    expect(new Set([cds1.versionInfo, eds1.versionInfo, lds1.versionInfo]).size).toBe(3);
    s.send({
      type_url: ENDPOINT_TYPE_URL,
      response_nonce: eds1.nonce,
      version_info: eds1.versionInfo,
      resource_names: [ALPHA_API, BETA_API],
    });
    s.send({ type_url: LISTENER_TYPE_URL, response_nonce: lds1.nonce, version_info: lds1.versionInfo });

    // One endpoint moves: only EDS gets a new version; CDS and LDS are not pushed.
    publish(r.cache, GROUP, rendered([ALPHA, BETA], movedEndpoint(BETA_API, "10.128.9.9")));
    const eds2 = await s.next();
    expect(eds2.typeUrl).toBe(ENDPOINT_TYPE_URL);
    expect(eds2.versionInfo).not.toBe(eds1.versionInfo);
    s.send({
      type_url: ENDPOINT_TYPE_URL,
      response_nonce: eds2.nonce,
      version_info: eds2.versionInfo,
      resource_names: [ALPHA_API, BETA_API],
    });
    await expectNothingSent(s);
    await expectNothingSent(c);

    // A worker address appears: the listener changes, so LDS gets a new version; CDS keeps its own.
    publish(
      r.cache,
      GROUP,
      rendered(
        [ALPHA, { ...BETA, workers: [...BETA.workers, "192.168.10.50/32"] }],
        movedEndpoint(BETA_API, "10.128.9.9"),
      ),
    );
    const lds2 = await s.next();
    expect(lds2.typeUrl).toBe(LISTENER_TYPE_URL);
    expect(lds2.versionInfo).not.toBe(lds1.versionInfo);
    await expectNothingSent(c);
    expect(r.cache.getSnapshot(GROUP)?.types.get(CLUSTER_TYPE_URL)?.version).toBe(cds1.versionInfo);
  });

  test("rule 3: an ACK is a request whose response_nonce is the latest nonce and has no error_detail", async () => {
    const r = await start();
    publish(r.cache, GROUP, rendered([ALPHA]));
    const s = sotw(r);
    s.send({ node: NODE, type_url: LISTENER_TYPE_URL });
    const res = await s.next();
    const lds = () => r.server.status.streams()[0]?.types.find((t) => t.typeUrl === LISTENER_TYPE_URL);
    expect(lds()?.lastSent?.nonce).toBe(res.nonce);
    expect(lds()?.lastAcked).toBeUndefined();
    s.send({ type_url: LISTENER_TYPE_URL, response_nonce: res.nonce, version_info: res.versionInfo });
    await expectNothingSent(s);
    expect(lds()?.lastAcked).toMatchObject({ nonce: res.nonce, version: res.versionInfo });
    expect(lds()?.lastNack).toBeUndefined();
    const push = r.server.status.history().find((p) => p.nonce === res.nonce);
    expect(push?.ackAt).toBeDefined();
  });

  test("rule 4: a NACK carries error_detail (its version_info may be partial) and is recorded per node", async () => {
    const warnings: string[] = [];
    const logger: Logger = {
      debug() {},
      info() {},
      error() {},
      warn(_o, msg) {
        warnings.push(msg);
      },
    };
    const r = await start(logger);
    publish(r.cache, GROUP, rendered([ALPHA]));
    const nacks: string[] = [];
    r.server.status.on("nack", (_p, n) => {
      nacks.push(n.message);
    });
    for (let round = 0; round < 2; round += 1) {
      const s = sotw(r);
      s.send({ node: NODE, type_url: LISTENER_TYPE_URL });
      const res = await s.next();
      s.send({
        type_url: LISTENER_TYPE_URL,
        response_nonce: res.nonce,
        version_info: "partially-accepted",
        error_detail: { code: 3, message: "listener https-443: unknown filter" },
      });
      await expectNothingSent(s);
      const node = r.server.status.node(NODE.id);
      const lds = node?.types.find((t) => t.typeUrl === LISTENER_TYPE_URL);
      expect(lds?.lastNack).toMatchObject({
        version: res.versionInfo,
        nonce: res.nonce,
        code: 3,
        message: "listener https-443: unknown filter",
        repeats: round + 1,
      });
      expect(lds?.lastAcked).toBeUndefined();
      s.close();
    }
    expect(nacks).toHaveLength(2);
    // Logged once, not on every repeat.
    expect(warnings.filter((w) => w.includes("NACK"))).toHaveLength(1);
  });

  test("rule 5: SotW ignores requests with a stale nonce; Delta still applies their subscription changes", async () => {
    const r = await start();
    publish(r.cache, GROUP, rendered([ALPHA, BETA]));
    const s = sotw(r);
    s.send({ node: NODE, type_url: ENDPOINT_TYPE_URL, resource_names: [ALPHA_API] });
    const r1 = await s.next();
    s.send({ type_url: ENDPOINT_TYPE_URL, response_nonce: r1.nonce, resource_names: [ALPHA_API] });
    publish(r.cache, GROUP, rendered([ALPHA, BETA], movedEndpoint(ALPHA_API, "10.128.1.99")));
    const r2 = await s.next();
    // Stale: answers r1 although r2 is out. Ignored entirely, subscription included.
    s.send({ type_url: ENDPOINT_TYPE_URL, response_nonce: r1.nonce, resource_names: [ALPHA_API, BETA_API] });
    await expectNothingSent(s);
    const eds = () => r.server.status.streams()[0]?.types.find((t) => t.typeUrl === ENDPOINT_TYPE_URL);
    expect(eds()?.lastAcked?.nonce).toBe(r1.nonce);
    s.send({ type_url: ENDPOINT_TYPE_URL, response_nonce: r2.nonce, resource_names: [ALPHA_API, BETA_API] });
    const r3 = await s.next();
    expect(names(r3).sort()).toEqual([ALPHA_API, BETA_API]);

    const d = delta(r);
    d.send({ node: { ...NODE, id: "envoy-d" }, type_url: ENDPOINT_TYPE_URL, resource_names_subscribe: [ALPHA_API] });
    const d1 = await d.next();
    d.send({ type_url: ENDPOINT_TYPE_URL, response_nonce: d1.nonce });
    publish(r.cache, GROUP, rendered([ALPHA, BETA]));
    const d2 = await d.next();
    expect(names(d2)).toEqual([ALPHA_API]);
    // Stale nonce, but its subscription to BETA_API counts.
    d.send({ type_url: ENDPOINT_TYPE_URL, response_nonce: d1.nonce, resource_names_subscribe: [BETA_API] });
    d.send({ type_url: ENDPOINT_TYPE_URL, response_nonce: d2.nonce });
    const d3 = await d.next();
    expect(names(d3)).toEqual([BETA_API]);
  });

  test("rule 6: after a NACK the rejected version is never resent; a push happens again only when config changes", async () => {
    const r = await start();
    publish(r.cache, GROUP, rendered([ALPHA]));
    for (const open of [sotw, delta]) {
      const s = open(r) as SotwStream & DeltaStream;
      s.send({ node: NODE, type_url: LISTENER_TYPE_URL });
      const res = await s.next();
      s.send({
        type_url: LISTENER_TYPE_URL,
        response_nonce: res.nonce,
        error_detail: { code: 3, message: "rejected" },
      });
      await expectNothingSent(s);
      // Same subscription again: still nothing.
      s.send({ type_url: LISTENER_TYPE_URL, response_nonce: res.nonce });
      await expectNothingSent(s);
      s.close();
    }
    const c = envoy(r, "sotw", "envoy-validating");
    c.validate = (t) => (t === LISTENER_TYPE_URL ? "no listeners today" : undefined);
    await c.waitFor(() => c.log.some((x) => x.typeUrl === LISTENER_TYPE_URL && !x.accepted), "the LDS NACK");
    const before = c.log.filter((x) => x.typeUrl === LISTENER_TYPE_URL).length;
    c.validate = undefined;
    publish(r.cache, GROUP, rendered([ALPHA, BETA]));
    await c.waitForVersions(versionsOf(r.cache, GROUP));
    const lds = c.log.filter((x) => x.typeUrl === LISTENER_TYPE_URL);
    expect(lds).toHaveLength(before + 1);
    expect(c.violations).toEqual([]);
  });

  test("rule 7: the server responds only when something changed or to a new subscription", async () => {
    const r = await start();
    publish(r.cache, GROUP, rendered([ALPHA]));
    const s = sotw(r);
    s.send({ node: NODE, type_url: LISTENER_TYPE_URL });
    const res = await s.next();
    s.send({ type_url: LISTENER_TYPE_URL, response_nonce: res.nonce, version_info: res.versionInfo });
    // The same content rendered again (new objects): no new version, no push.
    const again = r.cache.setSnapshot(GROUP, envoyInput(rendered([ALPHA])));
    expect(again.ok && again.changed).toEqual([]);
    await expectNothingSent(s);
    // A change to a type the stream does not subscribe to: no push either.
    publish(r.cache, GROUP, rendered([ALPHA], movedEndpoint(ALPHA_API, "10.128.1.50")));
    await expectNothingSent(s);
    // Repeating the ACK is not a new subscription.
    s.send({ type_url: LISTENER_TYPE_URL, response_nonce: res.nonce, version_info: res.versionInfo });
    await expectNothingSent(s);
  });

  test("rule 8: only the first request surely carries node; the stream is keyed on it", async () => {
    const r = await start();
    publish(r.cache, GROUP, rendered([ALPHA]));
    publish(r.cache, "other/proxy", rendered([BETA]));
    const s = sotw(r);
    s.send({ node: NODE, type_url: ENDPOINT_TYPE_URL, resource_names: [ALPHA_API] });
    const e1 = await s.next();
    expect(names(e1)).toEqual([ALPHA_API]);
    // No node on later requests: still served from the first node's group.
    s.send({ type_url: CLUSTER_TYPE_URL });
    const cds = await s.next();
    expect(names(cds)).toContain(ALPHA_API);
    expect(names(cds)).not.toContain(BETA_API);
    // A different node later on is ignored: the stream stays on its first node and group.
    s.send({
      node: { id: "intruder", cluster: "other/proxy" },
      type_url: ENDPOINT_TYPE_URL,
      response_nonce: e1.nonce,
      resource_names: [ALPHA_API, BETA_API],
    });
    await expectNothingSent(s);
    expect(r.server.status.streams().map((x) => x.node)).toEqual([{ id: NODE.id, cluster: GROUP, userAgent: "" }]);

    const anonymous = sotw(r);
    anonymous.send({ type_url: LISTENER_TYPE_URL });
    expect((await anonymous.ended()).code).toBe(3); // INVALID_ARGUMENT
  });

  test('rule 9: LDS/CDS: empty resource_names on the first request is a wildcard; "*" is an explicit wildcard', async () => {
    const r = await start();
    const res = rendered([ALPHA, BETA]);
    publish(r.cache, GROUP, res);
    const allListeners = res.listeners.map((l) => (l as { name: string }).name).sort();
    const legacy = sotw(r);
    legacy.send({ node: NODE, type_url: LISTENER_TYPE_URL });
    expect(names(await legacy.next()).sort()).toEqual(allListeners);
    const star = sotw(r);
    star.send({ node: NODE, type_url: LISTENER_TYPE_URL, resource_names: ["*"] });
    expect(names(await star.next()).sort()).toEqual(allListeners);
    const named = sotw(r);
    named.send({ node: NODE, type_url: LISTENER_TYPE_URL, resource_names: ["https-443"] });
    const n1 = await named.next();
    expect(names(n1)).toEqual(["https-443"]);
    named.send({ type_url: LISTENER_TYPE_URL, response_nonce: n1.nonce, resource_names: ["*", "https-443"] });
    expect(names(await named.next()).sort()).toEqual(allListeners);
    // EDS is never a wildcard: an empty first request subscribes to nothing.
    const eds = sotw(r);
    eds.send({ node: NODE, type_url: ENDPOINT_TYPE_URL });
    expect(names(await eds.next())).toEqual([]);
    const d = delta(r);
    d.send({ node: NODE, type_url: CLUSTER_TYPE_URL });
    expect(names(await d.next())).toHaveLength(res.clusters.length);
  });

  test("rule 10: a newly subscribed name is sent even if unchanged", async () => {
    const r = await start();
    publish(r.cache, GROUP, rendered([ALPHA, BETA]));
    const s = sotw(r);
    s.send({ node: NODE, type_url: ENDPOINT_TYPE_URL, resource_names: [ALPHA_API] });
    let last = await s.next();
    const ask = async (list: string[]): Promise<SotwResponse> => {
      s.send({ type_url: ENDPOINT_TYPE_URL, response_nonce: last.nonce, resource_names: list });
      last = await s.next();
      return last;
    };
    expect(names(await ask([ALPHA_API, BETA_API])).sort()).toEqual([ALPHA_API, BETA_API]);
    s.send({ type_url: ENDPOINT_TYPE_URL, response_nonce: last.nonce, resource_names: [ALPHA_API] });
    await expectNothingSent(s);
    expect(names(await ask([ALPHA_API, BETA_API])).sort()).toEqual([ALPHA_API, BETA_API]);

    const d = delta(r);
    d.send({ node: NODE, type_url: ENDPOINT_TYPE_URL, resource_names_subscribe: [BETA_API] });
    const d1 = await d.next();
    d.send({ type_url: ENDPOINT_TYPE_URL, response_nonce: d1.nonce, resource_names_unsubscribe: [BETA_API] });
    await expectNothingSent(d);
    d.send({ type_url: ENDPOINT_TYPE_URL, resource_names_subscribe: [BETA_API] });
    expect(names(await d.next())).toEqual([BETA_API]);
  });

  test("rule 11: names that do not exist yet are remembered and sent when they appear", async () => {
    const r = await start();
    publish(r.cache, GROUP, rendered([ALPHA]));
    const s = sotw(r);
    s.send({ node: NODE, type_url: ENDPOINT_TYPE_URL, resource_names: [GAMMA_API] });
    const empty = await s.next();
    expect(names(empty)).toEqual([]);
    s.send({ type_url: ENDPOINT_TYPE_URL, response_nonce: empty.nonce, resource_names: [GAMMA_API] });
    const d = delta(r);
    d.send({ node: NODE, type_url: ENDPOINT_TYPE_URL, resource_names_subscribe: [GAMMA_API] });
    const d1 = await d.next();
    d.send({ type_url: ENDPOINT_TYPE_URL, response_nonce: d1.nonce });
    await expectNothingSent(s);
    publish(r.cache, GROUP, rendered([ALPHA, GAMMA]));
    expect(names(await s.next())).toEqual([GAMMA_API]);
    expect(names(await d.next())).toEqual([GAMMA_API]);
  });

  test("rule 12: SotW LDS/CDS responses carry the full set (absence = deletion)", async () => {
    const r = await start();
    publish(r.cache, GROUP, rendered([ALPHA, BETA, GAMMA]));
    const s = sotw(r);
    s.send({ node: NODE, type_url: CLUSTER_TYPE_URL });
    const c1 = await s.next();
    s.send({ type_url: CLUSTER_TYPE_URL, response_nonce: c1.nonce });
    const smaller = rendered([ALPHA, BETA]);
    publish(r.cache, GROUP, smaller);
    const c2 = await s.next();
    const expected = smaller.clusters.map((c) => (c as { name: string }).name).sort();
    expect(names(c2).sort()).toEqual(expected);
    expect(names(c2)).not.toContain(GAMMA_API);
    expect(names(c1)).toContain(GAMMA_API);
  });

  test("rule 13: no name twice in one response", async () => {
    const r = await start();
    publish(r.cache, GROUP, rendered([ALPHA, BETA]));
    const s = sotw(r);
    s.send({ node: NODE, type_url: ENDPOINT_TYPE_URL, resource_names: [ALPHA_API, ALPHA_API, BETA_API] });
    const e = await s.next();
    s.send({ type_url: LISTENER_TYPE_URL, resource_names: ["*", "https-443", "https-443"] });
    const l = await s.next();
    const d = delta(r);
    d.send({ node: NODE, type_url: LISTENER_TYPE_URL, resource_names_subscribe: ["*", "https-443", "https-443"] });
    const dl = await d.next();
    for (const res of [e, l, dl]) {
      expect(new Set(names(res)).size, res.typeUrl).toBe(names(res).length);
    }
    expect(names(e).sort()).toEqual([ALPHA_API, BETA_API]);
  });

  test("rule 14: make before break: CDS, then EDS, then LDS, then RDS; stale clusters are removed last", async () => {
    for (const protocol of ["sotw", "delta"] as const) {
      const r = await start();
      publish(r.cache, GROUP, rendered([ALPHA]));
      const c = envoy(r, protocol);
      await c.waitForVersions(versionsOf(r.cache, GROUP));
      const mark = c.log.length;
      // Every cluster, listener chain and route changes at once.
      publish(r.cache, GROUP, rendered([BETA, { ...GAMMA, appsVip: "192.168.10.201" }]));
      await c.waitForVersions(versionsOf(r.cache, GROUP));
      await c.waitFor(
        () => [...c.clusters.keys()].every((n) => !n.startsWith("clusters-alpha/")),
        "alpha's clusters to go",
      );
      await c.barrier();
      expect(c.violations, protocol).toEqual([]);
      const after = c.log.slice(mark).filter((x) => x.names.length > 0 || x.removed.length > 0);
      const order = after.map((x) => x.typeUrl);
      expect(order.indexOf(CLUSTER_TYPE_URL)).toBe(0);
      expect(order.indexOf(ENDPOINT_TYPE_URL)).toBeLessThan(order.indexOf(LISTENER_TYPE_URL));
      expect(order.indexOf(LISTENER_TYPE_URL)).toBeLessThan(order.indexOf(ROUTE_TYPE_URL));
      // The first CDS push still carries alpha's clusters; the last one removes them.
      const cds = after.filter((x) => x.typeUrl === CLUSTER_TYPE_URL);
      expect(cds.length, protocol).toBeGreaterThanOrEqual(2);
      if (protocol === "sotw") expect(cds[0]?.names).toContain(ALPHA_API);
      const removal = cds.findIndex((x) =>
        protocol === "sotw" ? !x.names.includes(ALPHA_API) : x.removed.includes(ALPHA_API),
      );
      expect(removal).toBeGreaterThan(0);
      const removalRecord = cds[removal];
      if (removalRecord === undefined) throw new Error("no CDS removal");
      expect(after.indexOf(removalRecord)).toBeGreaterThan(order.lastIndexOf(LISTENER_TYPE_URL));
      expect(c.clusters.has(ALPHA_API)).toBe(false);
      c.close();
      await r.close();
      rig = undefined;
    }
  });

  test("rule 15: a cluster needs its EDS before it warms (listeners wait for the endpoints)", async () => {
    const r = await start();
    publish(r.cache, GROUP, rendered([ALPHA]));
    const s = sotw(r);
    s.send({ node: NODE, type_url: CLUSTER_TYPE_URL });
    s.send({ type_url: ENDPOINT_TYPE_URL });
    s.send({ type_url: LISTENER_TYPE_URL });
    const cds = await s.next();
    const eds0 = await s.next();
    expect([cds.typeUrl, eds0.typeUrl]).toEqual([CLUSTER_TYPE_URL, ENDPOINT_TYPE_URL]);
    expect(names(eds0)).toEqual([]);
    s.send({ type_url: CLUSTER_TYPE_URL, response_nonce: cds.nonce, version_info: cds.versionInfo });
    // Clusters acknowledged, but their endpoints were never sent: no listener yet.
    await expectNothingSent(s);
    s.send({ type_url: ENDPOINT_TYPE_URL, response_nonce: eds0.nonce, resource_names: names(cds) });
    const eds = await s.next();
    expect(eds.typeUrl).toBe(ENDPOINT_TYPE_URL);
    expect(names(eds).sort()).toEqual(names(cds).sort());
    // Sent is not enough: only the ACK (with its resource names) says the client kept them.
    await expectNothingSent(s);
    s.send({
      type_url: ENDPOINT_TYPE_URL,
      response_nonce: eds.nonce,
      version_info: eds.versionInfo,
      resource_names: names(cds),
    });
    expect((await s.next()).typeUrl).toBe(LISTENER_TYPE_URL);
  });

  test("rule 16: a new cluster is ACKed before the LDS that uses it is sent", async () => {
    const r = await start();
    publish(r.cache, GROUP, rendered([ALPHA]));
    const s = sotw(r);
    s.send({ node: NODE, type_url: CLUSTER_TYPE_URL });
    s.send({ type_url: LISTENER_TYPE_URL });
    const cds1 = await s.next();
    s.send({ type_url: ENDPOINT_TYPE_URL, resource_names: names(cds1) });
    s.send({ type_url: CLUSTER_TYPE_URL, response_nonce: cds1.nonce, version_info: cds1.versionInfo });
    const eds1 = await s.next();
    expect(eds1.typeUrl).toBe(ENDPOINT_TYPE_URL);
    s.send({ type_url: ENDPOINT_TYPE_URL, response_nonce: eds1.nonce, resource_names: names(cds1) });
    const lds1 = await s.next();
    expect(lds1.typeUrl).toBe(LISTENER_TYPE_URL);
    s.send({ type_url: LISTENER_TYPE_URL, response_nonce: lds1.nonce, version_info: lds1.versionInfo });
    await expectNothingSent(s);

    publish(r.cache, GROUP, rendered([ALPHA, BETA]));
    const cds2 = await s.next();
    expect(cds2.typeUrl).toBe(CLUSTER_TYPE_URL);
    expect(names(cds2)).toContain(BETA_API);
    // beta's clusters are not acknowledged yet: the listener that routes to them waits.
    await expectNothingSent(s);
    s.send({ type_url: ENDPOINT_TYPE_URL, response_nonce: eds1.nonce, resource_names: names(cds2) });
    const eds2 = await s.next();
    expect(eds2.typeUrl).toBe(ENDPOINT_TYPE_URL);
    s.send({ type_url: ENDPOINT_TYPE_URL, response_nonce: eds2.nonce, resource_names: names(cds2) });
    // Endpoints acknowledged, the clusters themselves not yet: still no listener.
    await expectNothingSent(s);
    s.send({ type_url: CLUSTER_TYPE_URL, response_nonce: cds2.nonce, version_info: cds2.versionInfo });
    const lds2 = await s.next();
    expect(lds2.typeUrl).toBe(LISTENER_TYPE_URL);
    expect(JSON.stringify(lds2.resources.map((x) => x.json))).toContain(BETA_API);
  });

  test("rule 17: Delta reconnect honours initial_resource_versions and sends only what differs", async () => {
    const r = await start();
    publish(r.cache, GROUP, rendered([ALPHA, BETA]));
    const c = envoy(r, "delta");
    await c.waitForVersions(versionsOf(r.cache, GROUP));
    c.disconnect();
    publish(r.cache, GROUP, rendered([ALPHA, BETA], movedEndpoint(BETA_API, "10.128.2.99")));
    const mark = c.log.length;
    c.connect();
    await c.waitForVersions(new Map([...versionsOf(r.cache, GROUP)].filter(([t]) => t === ENDPOINT_TYPE_URL)));
    await c.barrier();
    const resent = c.log.slice(mark).flatMap((x) => x.names);
    expect(resent).toEqual([BETA_API]);
    expect(c.violations).toEqual([]);

    // Raw: a stale claimed version is resent; a claimed name that no longer exists is removed.
    const d = delta(r);
    d.send({
      node: NODE,
      type_url: ENDPOINT_TYPE_URL,
      resource_names_subscribe: [ALPHA_API, BETA_API, GAMMA_API],
      initial_resource_versions: {
        [ALPHA_API]: r.cache.getSnapshot(GROUP)?.types.get(ENDPOINT_TYPE_URL)?.resources.get(ALPHA_API)?.version ?? "",
        [BETA_API]: "stale",
        [GAMMA_API]: "gone",
      },
    });
    const res = await d.next();
    expect(names(res)).toEqual([BETA_API]);
    expect(res.removed).toEqual([GAMMA_API]);
  });

  test("rule 18: Delta: unknown and removed names go in removed_resources", async () => {
    const r = await start();
    publish(r.cache, GROUP, rendered([ALPHA, GAMMA]));
    const d = delta(r);
    d.send({ node: NODE, type_url: ENDPOINT_TYPE_URL, resource_names_subscribe: ["no-such-cluster", ALPHA_API] });
    const e1 = await d.next();
    expect(e1.removed).toEqual(["no-such-cluster"]);
    expect(names(e1)).toEqual([ALPHA_API]);
    d.send({ type_url: ENDPOINT_TYPE_URL, response_nonce: e1.nonce });
    d.send({ type_url: CLUSTER_TYPE_URL });
    const c1 = await d.next();
    expect(names(c1)).toContain(GAMMA_API);
    d.send({ type_url: CLUSTER_TYPE_URL, response_nonce: c1.nonce });
    publish(r.cache, GROUP, rendered([ALPHA]));
    const c2 = await d.next();
    expect(c2.typeUrl).toBe(CLUSTER_TYPE_URL);
    expect(names(c2)).toEqual([]);
    expect(c2.removed).toContain(GAMMA_API);
    expect(c2.removed).not.toContain(ALPHA_API);
  });

  test('rule 19: Delta: "*" plus explicit names are handled per spec', async () => {
    const r = await start();
    publish(r.cache, GROUP, rendered([ALPHA]));
    const d = delta(r);
    d.send({ node: NODE, type_url: LISTENER_TYPE_URL, resource_names_subscribe: ["*", "kube-6443"] });
    const l1 = await d.next();
    expect(names(l1).sort()).toEqual(["http-80", "https-443", "kube-6443"]);
    d.send({ type_url: LISTENER_TYPE_URL, response_nonce: l1.nonce, resource_names_unsubscribe: ["*"] });
    await expectNothingSent(d);
    // Only the explicit name is still subscribed: a change to https-443 is not pushed, one to kube-6443 is.
    publish(r.cache, GROUP, rendered([{ ...ALPHA, domain: "alpha2.example.com" }]));
    const l2 = await d.next();
    expect(names(l2)).toEqual(["kube-6443"]);
    expect(l2.removed).toEqual([]);
  });

  test("rule 20: Delta: one resource per entry; system_version_info is only for debugging", async () => {
    const r = await start();
    publish(r.cache, GROUP, rendered([ALPHA, BETA]));
    const d = delta(r);
    d.send({ node: NODE, type_url: CLUSTER_TYPE_URL });
    const res = await d.next();
    const snap = r.cache.getSnapshot(GROUP)?.types.get(CLUSTER_TYPE_URL);
    expect(res.resources).toHaveLength(snap?.resources.size ?? -1);
    for (const entry of res.resources) {
      expect(entry.json["name"]).toBe(entry.name);
      expect(entry.version).toBe(snap?.resources.get(entry.name)?.version);
    }
    expect(res.systemVersionInfo).toBe(snap?.version);
    // A client that ACKs without caring about system_version_info is served the same.
    d.send({ type_url: CLUSTER_TYPE_URL, response_nonce: res.nonce });
    await expectNothingSent(d);
  });

  test("rule 21: a slow stream never delays others; it receives the newest state, never a queue of stale ones", async () => {
    const r = await start();
    publish(r.cache, GROUP, rendered([ALPHA]));
    const slow = sotw(r);
    slow.send({ node: { id: "slow", cluster: GROUP }, type_url: LISTENER_TYPE_URL });
    const s1 = await slow.next();
    const fast = new EnvoyLikeClient({ address: r.address, node: { id: "fast", cluster: GROUP }, protocol: "sotw" });
    cleanups.push(() => {
      fast.close();
    });
    fast.connect();
    await fast.waitForVersions(versionsOf(r.cache, GROUP));
    // The slow stream never ACKs while 20 changes go out; the fast one follows every one it gets.
    for (let i = 0; i < 20; i += 1) {
      publish(r.cache, GROUP, rendered([{ ...ALPHA, workers: [`192.168.10.${String(100 + i)}/32`] }]));
      await fast.waitForVersions(versionsOf(r.cache, GROUP));
    }
    expect(slow.unread()).toEqual([]);
    slow.send({ type_url: LISTENER_TYPE_URL, response_nonce: s1.nonce, version_info: s1.versionInfo });
    const s2 = await slow.next();
    expect(s2.versionInfo).toBe(versionsOf(r.cache, GROUP).get(LISTENER_TYPE_URL));
    await expectNothingSent(slow);
    expect(fast.violations).toEqual([]);
  });
});
