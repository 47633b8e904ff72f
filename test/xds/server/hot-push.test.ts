// Hot push: a new snapshot reaches every subscribed stream of its group without reconnecting,
// streams of other groups get nothing, and every stream gets the same bytes.
import { afterEach, expect, test } from "vitest";
import { envoyTypeSpecs } from "../../../src/xds/cache/index.js";
import { encodeAny } from "../../../src/xds/cache/response-fragments.js";
import { LISTENER_TYPE_URL } from "../../../src/xds/resource/protos.js";
import { EnvoyLikeClient } from "../../support/envoy/client.js";
import { ALPHA, BETA, GAMMA, GROUP, publish, rendered, startRig, versionsOf, type Rig } from "./fixtures.js";

const OTHER = "tenant-x/other-proxy";
let rig: Rig | undefined;
const clients: EnvoyLikeClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await rig?.close();
});

function connect(r: Rig, id: string, group: string, protocol: "sotw" | "delta"): EnvoyLikeClient {
  const c = new EnvoyLikeClient({ address: r.address, node: { id, cluster: group }, protocol });
  clients.push(c);
  c.connect();
  return c;
}

test("a new snapshot reaches every stream of its group, without reconnecting, and no other group", async () => {
  rig = await startRig();
  const r = rig;
  let encodes = 0;
  const spec = envoyTypeSpecs().get(LISTENER_TYPE_URL);
  if (!spec) throw new Error("no listener spec");
  r.cache.registerType(LISTENER_TYPE_URL, {
    ...spec,
    encode: (x) => {
      encodes += 1;
      return spec.encode(x);
    },
  });
  publish(r.cache, GROUP, rendered([ALPHA]));
  publish(r.cache, OTHER, rendered([GAMMA]));
  const mine = [connect(r, "a-0", GROUP, "sotw"), connect(r, "a-1", GROUP, "sotw"), connect(r, "a-2", GROUP, "delta")];
  const others = [connect(r, "b-0", OTHER, "sotw"), connect(r, "b-1", OTHER, "delta")];
  await Promise.all(mine.map((c) => c.waitForVersions(versionsOf(r.cache, GROUP))));
  await Promise.all(others.map((c) => c.waitForVersions(versionsOf(r.cache, OTHER))));
  const otherPushes = new Map(others.map((c) => [c, c.log.length]));
  let pushesToOthers = 0;
  // Barrier responses are pushes too; count only configuration.
  r.server.status.on("push", (p) => {
    if (p.group === OTHER && p.typeUrl.includes("/envoy.config.")) pushesToOthers += 1;
  });

  encodes = 0;
  const next = rendered([ALPHA, BETA]);
  publish(r.cache, GROUP, next);
  // Only the listeners whose content changed were encoded, once, whatever the number of streams.
  expect(encodes).toBeLessThanOrEqual(next.listeners.length);
  await Promise.all(mine.map((c) => c.waitForVersions(versionsOf(r.cache, GROUP))));
  await Promise.all([...mine, ...others].map((c) => c.barrier()));

  for (const c of mine) {
    expect(c.streamCount).toBe(1);
    expect(c.violations).toEqual([]);
  }
  expect(pushesToOthers).toBe(0);
  for (const c of others) expect(c.log.length).toBe(otherPushes.get(c));

  // The same bytes on every stream: the cache's encoding of the listener.
  const cached = r.cache.getSnapshot(GROUP)?.types.get(LISTENER_TYPE_URL)?.resources.get("kube-6443");
  for (const c of mine) {
    const last = [...c.log].reverse().find((x) => x.typeUrl === LISTENER_TYPE_URL && x.values.has("kube-6443"));
    const value = last?.values.get("kube-6443") ?? new Uint8Array();
    expect(Buffer.from(encodeAny(LISTENER_TYPE_URL, value))).toEqual(Buffer.from(cached?.any ?? []));
  }
  // Filter-chain selection on the pushed config: beta's API name reaches beta's API server.
  const route = mine[0]?.route({
    destinationPort: 6443,
    sourceIp: "192.168.10.77",
    serverName: "api.beta.example.com",
    transportProtocol: "tls",
  });
  expect(route?.chain.cluster).toBe("clusters-beta/kube-apiserver:6443");
  expect(route?.endpoints.length).toBeGreaterThan(0);
});
