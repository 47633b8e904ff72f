// A group's data-plane stamp (src/operator/status/xds-dataplane.ts) read from a live XdsStatus: an
// unchanged node keeps its report object, so a pass compares reports by identity; a write to one of
// the group's nodes that changes its report (sent, ACK, NACK, close) gives the group a new stamp,
// and after any sequence of writes and publishes the stamp moves exactly when the group's snapshot
// or the JSON of its nodes' reports — built from nothing — moves.
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { buildReport } from "../../src/operator/status/report.js";
import { localNodes, XdsDataPlane } from "../../src/operator/status/xds-dataplane.js";
import { SnapshotCache } from "../../src/xds/cache/index.js";
import { XdsStatus } from "../../src/xds/client-status.js";
import { KEA_CONFIG_TYPE_SPEC, KEA_CONFIG_TYPE_URL, keaConfigResource } from "../../src/dhcp/kea-config-resource.js";
import { checkEnvoySnapshot } from "../../src/envoy/snapshot.js";
import { StatusPlayer, statusEventArb, type StatusEvent } from "../support/xds-status-events.js";

/** The groups of the player's clients. */
const GROUPS = ["ns/one", "ns/two"];
/** A type of the groups' snapshots and one they never hold. */
const TYPES = [KEA_CONFIG_TYPE_URL, "type.googleapis.com/envoy.config.listener.v3.Listener"];

/** A cache, the versions published per group (newest last) and a player whose `sent` index counts back from the newest. */
function rig() {
  const cache = new SnapshotCache({ check: checkEnvoySnapshot });
  cache.registerType(KEA_CONFIG_TYPE_URL, KEA_CONFIG_TYPE_SPEC);
  const published = new Map<string, string[]>();
  const publish = (group: string): void => {
    const round = published.get(group)?.length ?? 0;
    const set = cache.setSnapshot(
      group,
      new Map([[KEA_CONFIG_TYPE_URL, [keaConfigResource(group, { Dhcp4: { round } })]]]),
    );
    if (!set.ok) throw new Error("snapshot refused");
    const version = set.snapshot.types.get(KEA_CONFIG_TYPE_URL)?.version ?? "";
    published.set(group, [...(published.get(group) ?? []), version]);
  };
  const version = (group: string, back: number): string => published.get(group)?.at(-1 - back) ?? "never";
  const player = (status: XdsStatus): StatusPlayer => new StatusPlayer(status, TYPES, version);
  return { cache, publish, version, player };
}

function answers(view: XdsDataPlane) {
  return GROUPS.map((g) => [view.synced(g), view.serving(g), view.lastNack(g), view.ackedVersion(g), view.health(g)]);
}

/** Node a of ns/one on stream 0, node c of ns/two on stream 1, each sent the current KeaConfig. */
const CONNECTED: readonly StatusEvent[] = [
  { op: "open", stream: 0, client: 0 },
  { op: "open", stream: 1, client: 4 },
  { op: "sent", stream: 0, type: 0, version: 0 },
  { op: "sent", stream: 1, type: 0, version: 0 },
];

/** Writes to node a (stream 0); `setup` runs before the stamps are taken. */
const WRITES: readonly { name: string; events: StatusEvent[]; setup?: StatusEvent[] }[] = [
  { name: "its ACK", events: [{ op: "ack", stream: 0, type: 0 }] },
  { name: "its NACK", events: [{ op: "nack", stream: 0, type: 0, message: 0 }] },
  {
    name: "a new response sent after its ACK",
    setup: [{ op: "ack", stream: 0, type: 0 }],
    events: [{ op: "sent", stream: 0, type: 0, version: 1 }],
  },
  { name: "a first response of a type the snapshot lacks", events: [{ op: "sent", stream: 0, type: 1, version: 0 }] },
  { name: "its stream closing", events: [{ op: "close", stream: 0 }] },
];

describe("XdsDataPlane.stamp over a live XdsStatus", () => {
  it("hands out the same reports and stamps while nothing is written", () => {
    const { cache, publish, player } = rig();
    GROUPS.forEach(publish);
    const status = new XdsStatus();
    const play = player(status);
    CONNECTED.forEach((e, at) => play.play(e, at));
    const source = localNodes(status);
    const reports = source.nodes();
    expect(reports.map((n) => n.id)).toEqual(["a", "c"]);
    source.nodes().forEach((n, i) => {
      expect(n).toBe(reports[i]);
    });
    const plane = new XdsDataPlane(source, cache);
    const stamps = GROUPS.map((g) => plane.moment().stamp(g));
    const moment = plane.moment();
    GROUPS.forEach((g, i) => {
      expect(moment.stamp(g), g).toBe(stamps[i]);
    });
  });

  it.each(WRITES)("$name: a new report and stamp for its group, the other group's kept", ({ events, setup }) => {
    const { cache, publish, player } = rig();
    GROUPS.forEach(publish);
    const status = new XdsStatus();
    const play = player(status);
    [...CONNECTED, ...(setup ?? [])].forEach((e, at) => play.play(e, at));
    const source = localNodes(status);
    const plane = new XdsDataPlane(source, cache);
    const [a, c] = source.nodes();
    const before = plane.moment();
    const [one, two] = GROUPS.map((g) => before.stamp(g));
    events.forEach((e, i) => play.play(e, 100 + i));
    const after = plane.moment();
    expect(after.stamp("ns/one")).not.toBe(one);
    expect(after.stamp("ns/two")).toBe(two);
    expect(source.nodes()).not.toContain(a);
    expect(source.nodes()).toContain(c);
  });

  it("a repeated NACK is a new view of the node, but the same report text: its group keeps its stamp, and the next pass compares no text", () => {
    const { cache, publish, player } = rig();
    GROUPS.forEach(publish);
    const status = new XdsStatus();
    const play = player(status);
    [...CONNECTED, { op: "nack", stream: 0, type: 0, message: 0 } as const].forEach((e, at) => play.play(e, at));
    const plane = new XdsDataPlane(localNodes(status), cache);
    const stamp = plane.moment().stamp("ns/one");
    const view = status.node("a");
    play.play({ op: "nack", stream: 0, type: 0, message: 0 }, 100);
    expect(status.node("a")).not.toBe(view);
    expect(plane.moment().stamp("ns/one")).toBe(stamp);
    // The stamp now holds the new report: an unchanged group costs no JSON text (issue 30's profile).
    const stringify = vi.spyOn(JSON, "stringify");
    try {
      const moment = plane.moment();
      expect(GROUPS.map((g) => moment.stamp(g))[0]).toBe(stamp);
      expect(stringify).not.toHaveBeenCalled();
    } finally {
      stringify.mockRestore();
    }
  });

  it("after any writes and publishes, a stamp moves exactly when the snapshot or its reports' JSON built from nothing does; the answers are those built from nothing", () => {
    const step = fc.oneof(
      { arbitrary: statusEventArb(4, TYPES.length), weight: 5 },
      { arbitrary: fc.record({ op: fc.constant("publish" as const), group: fc.constantFrom(...GROUPS) }), weight: 1 },
    );
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 40 }), (steps) => {
        const { cache, publish, version } = rig();
        const status = new XdsStatus({ maxIdleNodes: 2 });
        // A replay sends the versions sent then, not those current at its time.
        const sent: string[] = [];
        const play = new StatusPlayer(status, TYPES, (g, back) => {
          sent.push(version(g, back));
          return sent.at(-1) ?? "";
        });
        const plane = new XdsDataPlane(localNodes(status), cache);
        // The same answers from reports of a status fed the same writes, read only now.
        let fromNothing = buildReport("local", []).nodes;
        const twin = new XdsDataPlane({ nodes: () => fromNothing, subscribe: () => () => undefined }, cache);
        const last = new Map<string, { stamp: unknown; snap: unknown; text: string }>();
        for (const [at, s] of steps.entries()) {
          if (s.op === "publish") publish(s.group);
          else play.play(s, at);
          const fresh = new XdsStatus({ maxIdleNodes: 2 });
          const versions = sent.values();
          const replay = new StatusPlayer(fresh, TYPES, () => versions.next().value ?? "");
          for (const [j, earlier] of steps.slice(0, at + 1).entries())
            if (earlier.op !== "publish") replay.play(earlier, j);
          fromNothing = buildReport("local", fresh.nodes()).nodes;
          const moment = plane.moment();
          for (const g of GROUPS) {
            const stamp = moment.stamp(g);
            const snap = cache.getSnapshot(g);
            const text = JSON.stringify(fromNothing.filter((n) => n.group === g));
            const was = last.get(g);
            if (was !== undefined) expect(stamp === was.stamp, g).toBe(snap === was.snap && text === was.text);
            last.set(g, { stamp, snap, text });
          }
          expect(answers(moment)).toEqual(answers(twin));
        }
      }),
      { seed: 30, numRuns: 150 },
    );
  });
});
