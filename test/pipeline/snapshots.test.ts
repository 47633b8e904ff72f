// publishSnapshots after a previous publish into the same cache: only the node groups whose
// rendering changed are handed to the cache (one change costs its groups, not every group), and
// a group whose Infra went is still dropped. Real renderings, a real SnapshotCache.
import { describe, expect, it } from "vitest";
import type { ClusterState } from "../../src/model/types.js";
import { renderAll, type Outputs } from "../../src/pipeline/outputs.js";
import { publishSnapshots } from "../../src/pipeline/snapshots.js";
import { SnapshotCache, type SetSnapshotResult } from "../../src/xds/cache/index.js";
import { KEA_CONFIG_TYPE_SPEC, KEA_CONFIG_TYPE_URL } from "../../src/dhcp/kea-config-resource.js";
import { attachment, combine, hostedCluster, infra, machine, NS } from "../support/fixtures.js";
import { checkEnvoySnapshot } from "../../src/envoy/snapshot.js";
import { type SnapshotInput } from "../../src/xds/resource/specs.js";

const net = (third: number) => ({
  networkConfig: {
    cidr: `10.${String(third)}.0.0/24`,
    gateway: `10.${String(third)}.0.1`,
    networkAttachmentDefinition: `v${String(third)}`,
  },
  infraComponents: {
    dhcp: {
      serverIP: `10.${String(third)}.0.2`,
      rangeStart: `10.${String(third)}.0.100`,
      rangeEnd: `10.${String(third)}.0.199`,
    },
    dns: { serverIP: `10.${String(third)}.0.3` },
    proxy: { serverIP: `10.${String(third)}.0.4` },
  },
});

const base: ClusterState = combine(
  { infras: [infra("a", net(1)), infra("b", net(2))] },
  { attachments: [attachment("h1", { infra: "a" }), attachment("h2", { infra: "b" })] },
  hostedCluster("h1", 1, ["10.1.0.10"]),
  hostedCluster("h2", 2, ["10.2.0.10"]),
);

/** A cache that counts what it is handed, per group. */
class CountingCache extends SnapshotCache {
  readonly handed: string[] = [];
  override setSnapshot(group: string, input: SnapshotInput): SetSnapshotResult {
    this.handed.push(group);
    return super.setSnapshot(group, input);
  }
}

const quiet = { error: () => undefined };
const next = (last: Outputs, state: ClusterState): Outputs =>
  renderAll(state, { reuse: last, lastGood: last.lastGood });

describe("publishSnapshots after a previous publish", () => {
  it("hands over only the groups whose rendering changed, and drops the group of an Infra that went", () => {
    const cache = new CountingCache({ check: checkEnvoySnapshot });
    cache.registerType(KEA_CONFIG_TYPE_URL, KEA_CONFIG_TYPE_SPEC);
    const first = next(renderAll(base), base);
    publishSnapshots(cache, first, quiet);
    expect(cache.groups()).toEqual([`${NS}/a-dhcp`, `${NS}/a-proxy`, `${NS}/b-dhcp`, `${NS}/b-proxy`]);
    const aListeners = cache.getSnapshot(`${NS}/a-proxy`);

    const before = [...base.machines].find((m) => m.metadata.name === "h2-worker-0");
    const moved = {
      ...base,
      machines: [...base.machines].map((m) =>
        m === before ? machine(`${NS}-h2`, "h2-worker-0", "h2-workers", ["10.2.0.11"]) : m,
      ),
    };
    const second = next(first, moved);
    cache.handed.length = 0;
    publishSnapshots(cache, second, quiet, first);
    expect(cache.handed.sort()).toEqual([`${NS}/b-dhcp`, `${NS}/b-proxy`]);
    expect(cache.getSnapshot(`${NS}/a-proxy`)).toBe(aListeners);

    // Without the previous publish every group is handed over again (the cache finds them unchanged).
    cache.handed.length = 0;
    publishSnapshots(cache, second, quiet);
    expect(cache.handed).toHaveLength(4);

    const gone = { ...moved, infras: moved.infras.filter((i) => i.metadata.name !== "b") };
    const third = next(second, gone);
    cache.handed.length = 0;
    publishSnapshots(cache, third, quiet, second);
    expect(cache.handed).toEqual([]);
    expect(cache.groups()).toEqual([`${NS}/a-dhcp`, `${NS}/a-proxy`]);
  });
});
