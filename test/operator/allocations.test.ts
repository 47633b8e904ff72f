// The operator's durable DHCP state: the leader writes each DHCPServer's allocation table to its
// status; a restarted operator or a new leader renders from it, so no VMI's address moves.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { DHCPAllocation } from "../../src/api/schema.js";
import type { KubeObject } from "../../src/kube/rest.js";
import { PersistedAllocations, persistedAllocations } from "../../src/operator/inputs/allocations.js";
import { NO_DATA_PLANE } from "../../src/operator/status/dataplane.js";
import { desiredState } from "../../src/operator/desired/index.js";
import { operatorSettings } from "../../src/operator/desired/settings.js";
import { statusUpdates } from "../../src/operator/status/object-status.js";
import { renderAll } from "../../src/pipeline/outputs.js";
import { buildObserved } from "../../src/watchers/kube/observed.js";
import { exampleRaw } from "./support.js";

const NOW = Date.parse("2026-01-01T00:00:00Z");

/** The standalone example as the watchers see it, plus its DHCPServer carrying `allocations`. */
function observed(allocations: readonly DHCPAllocation[] | undefined, dropVmi?: string) {
  const raw = exampleRaw((o) => (o.metadata?.name === dropVmi ? undefined : o));
  const first = renderAll(buildObserved(raw, 1).state);
  const child = first.model.topologies[0]?.children.dhcp;
  if (child === undefined) throw new Error("example has no DHCPServer");
  const key = `${child.metadata.namespace}/${child.metadata.name}`;
  raw.dhcpservers.set(key, {
    ...child,
    metadata: { ...child.metadata, resourceVersion: "1" },
    ...(allocations === undefined ? {} : { status: { allocations } }),
  });
  return { obs: buildObserved(raw, 2), key };
}

function reconcileOnce(allocations: readonly DHCPAllocation[] | undefined, now: number, dropVmi?: string) {
  const { obs, key } = observed(allocations, dropVmi);
  const outputs = renderAll(obs.state, { dhcpAllocations: persistedAllocations(obs.raw.dhcpservers), now });
  const desired = desiredState({ state: obs.state, outputs, settings: operatorSettings() });
  const update = statusUpdates({ observed: obs, outputs, desired, dataPlane: NO_DATA_PLANE, now }).find(
    (u) => u.kind === "DHCPServer",
  );
  return {
    written: update?.status["allocations"] as DHCPAllocation[] | undefined,
    reservations: outputs.model.topologies[0]?.dhcp?.reservations,
    key,
  };
}

describe("operator DHCP allocations", () => {
  it("writes the table to the DHCPServer status and renders from it after a restart", () => {
    const first = reconcileOnce(undefined, NOW);
    expect(first.written?.length).toBeGreaterThan(0);
    // A new leader reads what the last one wrote: same table, nothing to write.
    const next = reconcileOnce(first.written, NOW + 60_000);
    expect(next.written).toEqual(first.written);
  });

  it("a VMI gone (VM restarting) keeps its reservation from the persisted table, then comes back on it", () => {
    const first = reconcileOnce(undefined, NOW);
    const held = first.written?.find((a) => a.vmi.endsWith("/alpha-workers-0"));
    expect(held).toBeDefined();
    const gone = reconcileOnce(first.written, NOW + 1000, "alpha-workers-0");
    expect(gone.written?.find((a) => a.mac === held?.mac)).toMatchObject({
      ip: held?.ip,
      releasedAt: new Date(NOW + 1000).toISOString(),
    });
    expect(gone.reservations?.map((r) => r.ipAddress)).toContain(held?.ip);
    const back = reconcileOnce(gone.written, NOW + 120_000);
    expect(back.written?.find((a) => a.mac === held?.mac)).toEqual(held);
  });
});

describe("PersistedAllocations", () => {
  it("answers what persistedAllocations answers, snapshot after snapshot, keeping the map while no DHCPServer changed", () => {
    const table = (n: number): DHCPAllocation[] => [
      { mac: `02:00:00:00:00:${String(10 + n)}`, ip: `192.0.2.${String(n)}`, vmi: `ns/vm-${String(n)}` },
    ];
    const server = (name: string, allocations: number | undefined): KubeObject => ({
      metadata: { name, namespace: "ns" },
      ...(allocations === undefined ? {} : { status: { allocations: table(allocations) } }),
    });
    const step = fc.record({
      server: fc.nat(8),
      to: fc.oneof(fc.constant("gone" as const), fc.constant("no table" as const), fc.nat(50)),
    });
    fc.assert(
      fc.property(fc.array(fc.array(step, { maxLength: 5 }), { minLength: 1, maxLength: 40 }), (rounds) => {
        const persisted = new PersistedAllocations();
        let servers: ReadonlyMap<string, KubeObject> = new Map();
        for (const round of rounds) {
          const next = new Map(servers);
          for (const s of round) {
            const name = `s${String(s.server)}`;
            if (s.to === "gone") next.delete(`ns/${name}`);
            else next.set(`ns/${name}`, server(name, s.to === "no table" ? undefined : s.to));
          }
          const before = persisted.of(servers);
          // Nothing changed: the same map.
          expect(persisted.of(servers)).toBe(before);
          servers = round.length === 0 ? servers : next;
          expect(new Map(persisted.of(servers))).toEqual(persistedAllocations(servers));
        }
      }),
      { numRuns: 200 },
    );
  });
});
