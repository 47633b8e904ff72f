// The per-type discovery services (LDS, CDS, EDS, RDS; SotW and Delta) run on the same engine as
// ADS, each stream carrying only its own type; and the status view introspection builds on.
import { afterEach, expect, test } from "vitest";
import { CLUSTER_TYPE_URL, ENDPOINT_TYPE_URL, LISTENER_TYPE_URL } from "../../../src/xds/resource/protos.js";
import { METHODS, openDelta, openSotw } from "../../support/envoy/raw.js";
import { ALPHA, GROUP, publish, rendered, startRig, type Rig } from "./fixtures.js";

const NODE = { id: "envoy-0", cluster: GROUP };
let rig: Rig | undefined;
const closers: (() => void)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) c();
  await rig?.close();
});

test("LDS, CDS and EDS services serve their own type, with or without type_url, SotW and Delta", async () => {
  rig = await startRig();
  publish(rig.cache, GROUP, rendered([ALPHA]));
  const lds = openSotw(rig.address, METHODS.ldsSotw);
  closers.push(() => {
    lds.close();
  });
  lds.send({ node: NODE, type_url: "" });
  const l = await lds.next();
  expect(l.typeUrl).toBe(LISTENER_TYPE_URL);
  expect(l.resources.map((r) => r.name).sort()).toEqual(["http-80", "https-443", "kube-6443"]);

  const eds = openSotw(rig.address, METHODS.edsSotw);
  closers.push(() => {
    eds.close();
  });
  eds.send({ node: NODE, type_url: ENDPOINT_TYPE_URL, resource_names: ["clusters-alpha/kube-apiserver:6443"] });
  expect((await eds.next()).resources.map((r) => r.name)).toEqual(["clusters-alpha/kube-apiserver:6443"]);

  const cds = openDelta(rig.address, METHODS.cdsDelta);
  closers.push(() => {
    cds.close();
  });
  cds.send({ node: NODE, type_url: CLUSTER_TYPE_URL });
  expect((await cds.next()).resources).toHaveLength(rendered([ALPHA]).clusters.length);

  const wrong = openSotw(rig.address, METHODS.cdsSotw);
  closers.push(() => {
    wrong.close();
  });
  wrong.send({ node: NODE, type_url: LISTENER_TYPE_URL });
  expect((await wrong.ended()).code).toBe(3);

  expect(
    rig.server.status
      .streams()
      .map((s) => s.service)
      .sort(),
  ).toEqual(["cds", "eds", "lds"]);
});

test("status: per-stream config, node records kept after disconnect, push history with latencies", async () => {
  rig = await startRig();
  const r = rig;
  publish(r.cache, GROUP, rendered([ALPHA]));
  const s = openSotw(r.address);
  s.send({ node: NODE, type_url: LISTENER_TYPE_URL });
  const res = await s.next();
  s.send({ type_url: LISTENER_TYPE_URL, response_nonce: res.nonce, version_info: res.versionInfo });
  s.send({ type_url: "type.googleapis.com/oooi.test.Barrier" });
  await s.next();
  const stream = r.server.status.streams()[0];
  expect(stream?.node).toEqual({ id: NODE.id, cluster: GROUP, userAgent: "" });
  const config = r.server.status.streamConfig(stream?.streamId ?? "", LISTENER_TYPE_URL);
  expect(config?.acked.map((h) => h.name).sort()).toEqual(["http-80", "https-443", "kube-6443"]);
  expect(config?.acked[0]?.resource).toBeDefined();
  const push = r.server.status.history().find((p) => p.nonce === res.nonce);
  expect(push).toMatchObject({
    nodeId: NODE.id,
    group: GROUP,
    typeUrl: LISTENER_TYPE_URL,
    cause: "subscription",
    version: res.versionInfo,
  });
  expect((push?.ackAt ?? -1) >= (push?.sentAt ?? 0) && (push?.sentAt ?? -1) >= (push?.changeAt ?? 0)).toBe(true);

  const closed = new Promise((resolve) => {
    r.server.status.on("stream-close", resolve);
  });
  s.close();
  await closed;
  expect(r.server.status.streams()).toEqual([]);
  const node = r.server.status.node(NODE.id);
  expect(node?.connectedStreams).toBe(0);
  expect(node?.types.find((t) => t.typeUrl === LISTENER_TYPE_URL)?.lastAcked?.version).toBe(res.versionInfo);
});
