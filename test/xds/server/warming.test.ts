// Resource warming against the real server, as the Envoy stand-in experiences it
// (https://www.envoyproxy.io/docs/envoy/latest/api-docs/xds_protocol#resource-warming): "Warming of
// Cluster is completed only when a ClusterLoadAssignment response is supplied by management server",
// on initialization and when the cluster is updated. A changed cluster whose endpoints did not
// change must still get an EDS response, or Envoy keeps it warming.
import { afterEach, describe, expect, test } from "vitest";
import type { EnvoyResources } from "../../../src/envoy/resources.js";
import { EnvoyLikeClient } from "../../support/envoy/client.js";
import { ALPHA, GROUP, publish, rendered, startRig, versionsOf, type Rig } from "./fixtures.js";

let rig: Rig | undefined;
const clients: EnvoyLikeClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await rig?.close();
  rig = undefined;
});

const CLUSTER = "clusters-alpha/kube-apiserver:6443";

/** The same configuration with one cluster's connect_timeout changed; its endpoints unchanged. */
function withTimeout(base: EnvoyResources, timeout: string): EnvoyResources {
  const clusters = base.clusters.map((c) =>
    (c as { name?: string }).name === CLUSTER ? { ...c, connect_timeout: timeout } : c,
  );
  return { ...base, clusters };
}

describe.each(["sotw", "delta"] as const)("cluster warming (%s)", (protocol) => {
  test("a new cluster serves only after its EDS; a changed one re-warms while the old version serves", async () => {
    rig = await startRig();
    const base = rendered([ALPHA]);
    publish(rig.cache, GROUP, base);
    const c = new EnvoyLikeClient({ address: rig.address, node: { id: "warm-0", cluster: GROUP }, protocol });
    clients.push(c);
    c.connect();
    await c.waitForVersions(versionsOf(rig.cache, GROUP));
    expect(c.isWarm(CLUSTER)).toBe(true);
    expect(c.warmingClusters).toEqual([]);
    // The first CDS response came before any EDS: every cluster waited for it.
    const firstEds = c.log.findIndex((r) => r.typeUrl.endsWith("ClusterLoadAssignment"));
    const firstCds = c.log.findIndex((r) => r.typeUrl.endsWith("Cluster"));
    expect(firstCds).toBeLessThan(firstEds);

    publish(rig.cache, GROUP, withTimeout(base, "7s"));
    await c.waitFor(() => c.clusters.get(CLUSTER)?.json["connect_timeout"] === "7s", "the changed cluster");
    await c.barrier();
    // The server answered the re-warming cluster's EDS request: the new version serves.
    expect(c.warmingClusters).toEqual([]);
    expect(c.servingCluster(CLUSTER)?.json["connect_timeout"]).toBe("7s");
    expect(c.violations).toEqual([]);
  });
});
