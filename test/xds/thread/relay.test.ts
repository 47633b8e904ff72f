// The two halves of the ADS thread's link (src/xds/thread/), each message through structuredClone as
// postMessage sends it: a cache copied from another serves the same versions and bytes and keeps an
// unchanged resource's object; a status record replayed from the server's reads the same as the
// server's own and emits the same events.
import { afterEach, describe, expect, it } from "vitest";
import { SnapshotCache } from "../../../src/xds/cache/index.js";
import { XdsStatus, type PushRecord } from "../../../src/xds/client-status.js";
import { CLUSTER_TYPE_URL, LISTENER_TYPE_URL } from "../../../src/xds/resource/protos.js";
import { adoptSnapshot, relaySnapshots, type SnapshotWire } from "../../../src/xds/thread/snapshot-relay.js";
import { RelayingXdsStatus, StatusReplay } from "../../../src/xds/thread/status-relay.js";
import { EnvoyLikeClient } from "../../support/envoy/client.js";
import { ALPHA, BETA, GAMMA, GROUP, publish, rendered, startRig, versionsOf, type Rig } from "../server/fixtures.js";
import { checkEnvoySnapshot } from "../../../src/envoy/snapshot.js";
import { StatusPlayer, type StatusEvent } from "../../support/xds-status-events.js";

const closers: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A render-side cache relayed into a copy, every message kept as it crossed. */
function relayed(): { source: SnapshotCache; copy: SnapshotCache; wires: SnapshotWire[] } {
  const source = new SnapshotCache({ check: checkEnvoySnapshot });
  const copy = new SnapshotCache({ check: () => ["a copy adopts; it never checks"] });
  const wires: SnapshotWire[] = [];
  closers.push(
    relaySnapshots(source, (wire) => {
      const crossed = structuredClone(wire);
      wires.push(crossed);
      adoptSnapshot(copy, crossed);
    }),
  );
  return { source, copy, wires };
}

/** Every type's version, names, resource versions, bytes and JSON of a group's snapshot. */
function contentOf(cache: SnapshotCache, group: string): unknown {
  const s = cache.getSnapshot(group);
  if (s === undefined) return undefined;
  return {
    version: s.version,
    createdAt: s.createdAt,
    types: [...s.types].map(([typeUrl, t]) => ({
      typeUrl,
      version: t.version,
      changedAt: t.changedAt,
      bytes: t.bytes,
      resources: [...t.resources].map(([name, r]) => ({
        name,
        version: r.version,
        any: Buffer.from(r.any).toString("base64"),
        resource: r.resource,
        references: r.references,
      })),
    })),
  };
}

describe("snapshot relay", () => {
  it("copies a group's snapshot whole, then only the resources that changed", () => {
    const { source, copy, wires } = relayed();
    const told: [string, readonly string[]][] = [];
    copy.subscribe((group, _s, changed) => told.push([group, changed]));

    publish(source, GROUP, rendered([ALPHA, BETA, GAMMA]));
    expect(contentOf(copy, GROUP)).toEqual(contentOf(source, GROUP));
    const first = wires.at(-1);
    if (first === undefined || first.removed) throw new Error("no snapshot relayed");
    const fresh = first.types.flatMap((t) => (t.kept ? [] : t.fresh));
    const total = [...(source.getSnapshot(GROUP)?.types.values() ?? [])].reduce((n, t) => n + t.resources.size, 0);
    expect(fresh).toHaveLength(total);
    // Envoy's types cross as bytes only; the copy decodes the JSON when introspection asks.
    expect(fresh.filter((r) => r.resource !== undefined)).toEqual([]);

    const before = copy.getSnapshot(GROUP);
    publish(source, GROUP, rendered([ALPHA, BETA]));
    expect(contentOf(copy, GROUP)).toEqual(contentOf(source, GROUP));
    const second = wires.at(-1);
    if (second === undefined || second.removed) throw new Error("no change relayed");
    // Only resources whose version moved cross again; GAMMA's are gone from the names.
    const sourceTypes = source.getSnapshot(GROUP)?.types;
    for (const t of second.types) {
      if (t.kept) continue;
      const held = before?.types.get(t.typeUrl)?.resources;
      for (const r of t.fresh) expect(r.version).not.toBe(held?.get(r.name)?.version);
      expect(t.names).toEqual([...(sourceTypes?.get(t.typeUrl)?.resources.keys() ?? [])]);
    }
    // In the copy too, an unchanged resource keeps its object (streams compare by identity).
    const clustersBefore = before?.types.get(CLUSTER_TYPE_URL)?.resources;
    const clustersAfter = copy.getSnapshot(GROUP)?.types.get(CLUSTER_TYPE_URL)?.resources;
    const unchanged = [...(clustersAfter?.values() ?? [])].filter(
      (r) => clustersBefore?.get(r.name)?.version === r.version,
    );
    expect(unchanged.length).toBeGreaterThan(0);
    for (const r of unchanged) expect(clustersBefore?.get(r.name)).toBe(r);
    expect(told.map(([, changed]) => [...changed].sort())).toEqual([
      [...(sourceTypes?.keys() ?? [])].sort(),
      [...second.changed].sort(),
    ]);
    expect(second.changed.length).toBeGreaterThan(0);

    source.deleteSnapshot(GROUP);
    expect(copy.getSnapshot(GROUP)).toBeUndefined();
  });

  it("an unchanged type crosses as a name only", () => {
    const { source, wires } = relayed();
    publish(source, GROUP, rendered([ALPHA, BETA, GAMMA]));
    const endpointsOnly = rendered([ALPHA, BETA, GAMMA], () => [{ address: "192.0.2.99", port: 6443 }]);
    publish(source, GROUP, endpointsOnly);
    const last = wires.at(-1);
    if (last === undefined || last.removed) throw new Error("no change relayed");
    expect(last.types.find((t) => t.typeUrl === LISTENER_TYPE_URL)?.kept).toBe(true);
    expect(last.types.some((t) => !t.kept)).toBe(true);
  });

  it("relays what the cache held before the relay began", () => {
    const source = new SnapshotCache({ check: checkEnvoySnapshot });
    publish(source, GROUP, rendered());
    const copy = new SnapshotCache({ check: () => [] });
    closers.push(
      relaySnapshots(source, (wire) => {
        adoptSnapshot(copy, structuredClone(wire));
      }),
    );
    expect(contentOf(copy, GROUP)).toEqual(contentOf(source, GROUP));
  });

  it("refuses a message naming what the copy never received", () => {
    const { source, wires } = relayed();
    publish(source, GROUP, rendered([ALPHA, BETA, GAMMA]));
    publish(source, GROUP, rendered([ALPHA, BETA]));
    const change = wires.at(-1);
    if (change === undefined) throw new Error("no change relayed");
    const stranger = new SnapshotCache({ check: () => [] });
    expect(() => {
      adoptSnapshot(stranger, change);
    }).toThrow(/never received/);
  });

  it("a server on the copy gives an Envoy the source's versions", async () => {
    const { source, copy } = relayed();
    const rig: Rig = await startRig({ cache: copy });
    closers.push(() => rig.close());
    publish(source, GROUP, rendered([ALPHA, BETA, GAMMA]));
    const client = new EnvoyLikeClient({ address: rig.address, node: { id: "e1", cluster: GROUP } });
    closers.push(() => {
      client.close();
    });
    client.connect();
    await client.waitForVersions(versionsOf(source, GROUP));
    publish(source, GROUP, rendered([ALPHA]));
    await client.waitForVersions(versionsOf(source, GROUP));
    expect(client.clusters.size).toBe(source.getSnapshot(GROUP)?.types.get(CLUSTER_TYPE_URL)?.resources.size);
  });
});

describe("status relay", () => {
  /** A server recording into a relaying status, replayed into `main` as the thread's messages are. */
  async function replayed(): Promise<{ rig: Rig; server: XdsStatus; main: XdsStatus }> {
    const main = new XdsStatus();
    const replay = new StatusReplay(main);
    const server = new RelayingXdsStatus((calls) => {
      replay.apply(structuredClone(calls));
    });
    const cache = new SnapshotCache({ check: checkEnvoySnapshot });
    const rig = await startRig({ cache, status: server });
    closers.push(() => rig.close());
    publish(cache, GROUP, rendered());
    return { rig, server, main };
  }

  /** Type URL → name → version of GROUP's snapshot, as a client holds it. */
  const heldOf = (cache: SnapshotCache): Map<string, Map<string, string>> =>
    new Map(
      [...(cache.getSnapshot(GROUP)?.types ?? [])].map(([t, s]) => [
        t,
        new Map([...s.resources].map(([n, r]) => [n, r.version])),
      ]),
    );

  const settled = (): Promise<void> => new Promise((r) => setImmediate(r));

  it("reads as the server's own record: streams, nodes, pushes and their ACKs", async () => {
    const { rig, server, main } = await replayed();
    const acks = { server: [] as PushRecord[], main: [] as PushRecord[] };
    server.on("ack", (p) => acks.server.push({ ...p }));
    main.on("ack", (p) => acks.main.push({ ...p }));
    const clients = ["sotw", "delta"].map((protocol, i) => {
      const c = new EnvoyLikeClient({
        address: rig.address,
        node: { id: `e${String(i)}`, cluster: GROUP },
        protocol: protocol as "sotw" | "delta",
      });
      closers.push(() => {
        c.close();
      });
      c.connect();
      return c;
    });
    const holdAll = async (): Promise<void> => {
      const expected = heldOf(rig.cache);
      for (const c of clients) await c.waitFor(() => c.holds(expected), "the snapshot");
    };
    await holdAll();
    publish(rig.cache, GROUP, rendered([ALPHA]));
    await holdAll();
    await settled();
    expect(main.streams()).toEqual(server.streams());
    expect(main.nodes()).toEqual(server.nodes());
    expect(main.history()).toEqual(server.history());
    expect(main.history().filter((p) => p.ackAt !== undefined).length).toBeGreaterThanOrEqual(8);
    expect(acks.main).toEqual(acks.server);
    expect(acks.main.length).toBeGreaterThanOrEqual(8);

    for (const c of clients) c.close();
    await new Promise((r) => setTimeout(r, 200));
    await settled();
    expect(main.streams()).toEqual([]);
    expect(main.nodes()).toEqual(server.nodes());
  });

  it("replays a NACK with its repeats, and announces only the first", async () => {
    const { rig, server, main } = await replayed();
    const nacks: { first: boolean }[] = [];
    main.on("nack", (_p, _n, info) => nacks.push(info));
    const client = new EnvoyLikeClient({
      address: rig.address,
      node: { id: "picky", cluster: GROUP },
      validate: (typeUrl) => (typeUrl === LISTENER_TYPE_URL ? "listener refused" : undefined),
    });
    closers.push(() => {
      client.close();
    });
    client.connect();
    await new Promise<void>((resolve, reject) => {
      const deadline = setTimeout(() => {
        reject(new Error("no NACK recorded"));
      }, 10_000);
      const poll = setInterval(() => {
        if (main.node("picky")?.types.some((t) => t.lastNack !== undefined) === true) {
          clearTimeout(deadline);
          clearInterval(poll);
          resolve();
        }
      }, 20);
    });
    await settled();
    expect(main.nodes()).toEqual(server.nodes());
    const nack = main.node("picky")?.types.find((t) => t.typeUrl === LISTENER_TYPE_URL)?.lastNack;
    expect(nack?.message).toContain("listener refused");
    expect(nacks[0]?.first).toBe(true);
  });

  it("the replayed record keeps an unchanged node's view across batches, as the server's own does", async () => {
    const main = new XdsStatus();
    const replay = new StatusReplay(main);
    const server = new RelayingXdsStatus((calls) => {
      replay.apply(structuredClone(calls));
    });
    const player = new StatusPlayer(server, [LISTENER_TYPE_URL]);
    const events: StatusEvent[] = [
      { op: "open", stream: 0, client: 0 },
      { op: "open", stream: 1, client: 4 },
      { op: "sent", stream: 0, type: 0, version: 0 },
      { op: "sent", stream: 1, type: 0, version: 0 },
    ];
    events.forEach((e, at) => player.play(e, at));
    await settled();
    const [a, c] = main.nodes();
    player.play({ op: "ack", stream: 0, type: 0 }, 10);
    await settled();
    expect(main.nodes()).toEqual(server.nodes());
    const [ackedA, keptC] = main.nodes();
    expect(ackedA).not.toBe(a);
    expect(ackedA?.types[0]?.lastAcked?.version).toBe("v0");
    expect(keptC).toBe(c);
  });
});
