// The data-plane view a reconcile pass asks (src/operator/status/xds-dataplane.ts): its moment() — the
// fleet's nodes read once and indexed by group — answers exactly what the live view answers, for
// every group, in every state a node can be in (no ACK, ACK of the current or the last synced
// version, a NACK), and what either learns about last-synced versions the other keeps.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { NodeReport } from "../../src/operator/status/report.js";
import { XdsDataPlane, type NodeSource } from "../../src/operator/status/xds-dataplane.js";
import { SnapshotCache } from "../../src/xds/cache/index.js";
import { KEA_CONFIG_TYPE_SPEC, KEA_CONFIG_TYPE_URL, keaConfigResource } from "../../src/dhcp/kea-config-resource.js";
import { checkEnvoySnapshot } from "../../src/envoy/snapshot.js";

const GROUPS = ["ns/a-dhcp", "ns/b-dhcp", "ns/c-dhcp", "ns/none"];

/** A node's state for the group's KeaConfig: its ACKed version (by index of the snapshots published) and a NACK. */
const nodeArb = fc.record({
  id: fc.integer({ min: 0, max: 5 }),
  group: fc.constantFrom(...GROUPS),
  acked: fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined }),
  nack: fc.boolean(),
});

function answers(view: XdsDataPlane) {
  return GROUPS.map((g) => [view.synced(g), view.serving(g), view.lastNack(g), view.ackedVersion(g), view.health(g)]);
}

describe("XdsDataPlane.moment()", () => {
  it("answers what the live view answers, shares what it learns about synced versions, and keeps a group's stamp only while its answers stay", () => {
    fc.assert(
      fc.property(fc.array(fc.array(nodeArb, { maxLength: 8 }), { minLength: 1, maxLength: 4 }), (rounds) => {
        const cache = new SnapshotCache({ check: checkEnvoySnapshot });
        cache.registerType(KEA_CONFIG_TYPE_URL, KEA_CONFIG_TYPE_SPEC);
        const versions = new Map<string, string[]>();
        let nodes: NodeReport[] = [];
        const source: NodeSource = { nodes: () => nodes, subscribe: () => () => undefined };
        const live = new XdsDataPlane(source, cache);
        const twin = new XdsDataPlane(source, cache);
        let last: { stamps: unknown[]; answers: ReturnType<typeof answers> } | undefined;
        for (const [round, reported] of rounds.entries()) {
          for (const g of GROUPS.slice(0, 3)) {
            const set = cache.setSnapshot(
              g,
              new Map([[KEA_CONFIG_TYPE_URL, [keaConfigResource(g, { Dhcp4: { round: Math.min(round, 2) } })]]]),
            );
            if (set.ok)
              versions.set(g, [...(versions.get(g) ?? []), set.snapshot.types.get(KEA_CONFIG_TYPE_URL)?.version ?? ""]);
          }
          const seen = new Set<string>();
          nodes = reported.flatMap((n) => {
            const id = `node-${String(n.id)}`;
            if (seen.has(id)) return [];
            seen.add(id);
            const v = n.acked === undefined ? undefined : versions.get(n.group)?.at(-1 - n.acked);
            return [
              {
                id,
                group: n.group,
                replica: "r",
                userAgent: "test",
                types: [
                  {
                    typeUrl: KEA_CONFIG_TYPE_URL,
                    ...(v === undefined ? {} : { acked: v }),
                    ...(n.nack ? { nack: { version: "x", message: "refused" } } : {}),
                  },
                ],
              },
            ];
          });
          // The moment first, then the live view: each learns last-synced versions into the same memory.
          const moment = live.moment();
          const stamps = GROUPS.map((g) => moment.stamp(g));
          expect(answers(moment)).toEqual(answers(twin));
          expect(answers(live)).toEqual(answers(twin));
          // A group's stamp kept from the last round promises its answers did not move.
          for (const [i, g] of GROUPS.entries())
            if (last !== undefined && stamps[i] === last.stamps[i])
              expect(answers(moment)[i], `${g} kept its stamp`).toEqual(last.answers[i]);
          // And nothing moving keeps every stamp.
          const again = live.moment();
          for (const [i, g] of GROUPS.entries()) expect(again.stamp(g), g).toBe(stamps[i]);
          last = { stamps, answers: answers(moment) };
        }
      }),
      { seed: 16, numRuns: 200 },
    );
  });

  it("answers each question once per snapshot of the group, and anew once the group's snapshot changes", () => {
    const cache = new SnapshotCache({ check: checkEnvoySnapshot });
    cache.registerType(KEA_CONFIG_TYPE_URL, KEA_CONFIG_TYPE_SPEC);
    /** The snapshot's version and its KeaConfig's. */
    const publish = (round: number): [string, string] => {
      const set = cache.setSnapshot(
        "ns/a-dhcp",
        new Map([[KEA_CONFIG_TYPE_URL, [keaConfigResource("ns/a-dhcp", { Dhcp4: { round } })]]]),
      );
      if (!set.ok) throw new Error("snapshot refused");
      return [set.snapshot.version, set.snapshot.types.get(KEA_CONFIG_TYPE_URL)?.version ?? ""];
    };
    const [v1, kea1] = publish(1);
    const node: NodeReport = {
      id: "node-1",
      group: "ns/a-dhcp",
      replica: "r",
      userAgent: "test",
      types: [{ typeUrl: KEA_CONFIG_TYPE_URL, acked: kea1 }],
    };
    // A false answer about another version does not stand for the plain question.
    const other = new XdsDataPlane({ nodes: () => [node], subscribe: () => () => undefined }, cache).moment();
    expect([other.synced("ns/a-dhcp", "not-the-current-version"), other.synced("ns/a-dhcp")]).toEqual([false, true]);
    const moment = new XdsDataPlane({ nodes: () => [node], subscribe: () => () => undefined }, cache).moment();
    expect([moment.synced("ns/a-dhcp"), moment.serving("ns/a-dhcp"), moment.ackedVersion("ns/a-dhcp")]).toEqual([
      true,
      true,
      v1,
    ]);
    expect(moment.synced("ns/a-dhcp")).toBe(true);
    // A question about a version is answered for that version, not from the memo of the plain one.
    expect([moment.synced("ns/a-dhcp", "not-the-current-version"), moment.synced("ns/a-dhcp", v1)]).toEqual([
      false,
      true,
    ]);
    const stamp = moment.stamp("ns/a-dhcp");
    // A new snapshot the node has not ACKed: no longer synced, still serving the last synced one.
    publish(2);
    expect(moment.stamp("ns/a-dhcp"), "a new snapshot, the same nodes").not.toBe(stamp);
    expect([moment.synced("ns/a-dhcp"), moment.serving("ns/a-dhcp"), moment.ackedVersion("ns/a-dhcp")]).toEqual([
      false,
      true,
      v1,
    ]);
  });

  it("reads the source once, however many questions it answers", () => {
    const cache = new SnapshotCache({ check: checkEnvoySnapshot });
    let reads = 0;
    const source: NodeSource = {
      nodes: () => {
        reads++;
        return [];
      },
      subscribe: () => () => undefined,
    };
    const moment = new XdsDataPlane(source, cache).moment();
    const asked = GROUPS.map((g) => [moment.synced(g), moment.serving(g), moment.lastNack(g), moment.ackedVersion(g)]);
    expect(asked).toEqual(GROUPS.map(() => [false, false, undefined, undefined]));
    expect(reads).toBe(1);
  });
});
