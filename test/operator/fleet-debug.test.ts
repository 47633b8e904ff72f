// `oooi debug nodes` shows the whole fleet (as `istioctl proxy-status` does): two operator replicas,
// each with its own real ADS server and oooi.debug.v1, Envoy stand-ins on both. Debugging through
// either replica lists every node with the replica its stream is on, a NACK on the other replica
// with its text; a replica that shut down takes its nodes out of the listing.
import { Command } from "commander";
import { afterEach, describe, expect, it } from "vitest";
import { registerDebugCommand } from "../../src/cli/commands/debug.js";
import type { DebugIo } from "../../src/cli/debug.js";
import { publishSnapshots } from "../../src/pipeline/snapshots.js";
import { SnapshotCache } from "../../src/xds/cache/index.js";
import { addIntrospection, DebugClient } from "../../src/xds/introspect/index.js";
import { KEA_CONFIG_TYPE_SPEC, KEA_CONFIG_TYPE_URL } from "../../src/dhcp/kea-config-resource.js";
import { LISTENER_TYPE_URL } from "../../src/xds/resource/protos.js";
import { startXdsServer } from "../../src/xds/server/index.js";
import { EnvoyLikeClient } from "../support/envoy/client.js";
import { eventually, type FakeApiServer } from "../support/fake-apiserver/index.js";
import { quietLogger, seededFake, startOperator } from "./support.js";
import { checkEnvoySnapshot } from "../../src/envoy/snapshot.js";

let fake: FakeApiServer | undefined;
const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
  await fake?.stop();
  fake = undefined;
});

const PROXY_GROUP = "clusters/tenant-vlan-proxy";
const FLEET_TIMING = { heartbeatMs: 100, expiryMs: 1_000, minIntervalMs: 100 };
const REASON = "listener kube-6443: bad filter chain";

/** A replica wired as `oooi operator` does: introspection reads the fleet the operator creates later. */
async function replica(f: FakeApiServer, identity: string) {
  const cache = new SnapshotCache({ check: checkEnvoySnapshot });
  cache.registerType(KEA_CONFIG_TYPE_URL, KEA_CONFIG_TYPE_SPEC);
  const xds = await startXdsServer({ cache, listen: "127.0.0.1:0" });
  const started: { op?: ReturnType<typeof startOperator>["op"] } = {};
  addIntrospection(xds.grpcServer, { status: xds.status, cache, fleet: () => started.op?.fleet });
  const r = startOperator(f, {
    identity,
    xds: { status: xds.status, cache },
    fleetTiming: FLEET_TIMING,
    onState: (_s, outputs) => {
      publishSnapshots(cache, outputs, quietLogger);
    },
    closeStreams: () => xds.close(),
  });
  started.op = r.op;
  closers.push(() => r.op.close());
  return { op: r.op, cache, address: `127.0.0.1:${String(xds.port)}` };
}

function envoy(address: string, id: string, validate?: (typeUrl: string) => string | undefined): EnvoyLikeClient {
  const c = new EnvoyLikeClient({ address, node: { id, cluster: PROXY_GROUP }, ...(validate ? { validate } : {}) });
  c.connect();
  closers.push(() => {
    c.close();
  });
  return c;
}

/** `oooi debug nodes ...args` with captured output. */
async function debugNodes(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const got = { code: 0, out: "", err: "" };
  const io: DebugIo = {
    out: (t) => (got.out += t),
    err: (t) => (got.err += t),
    exit: (c) => (got.code = c),
    now: () => Date.now(),
    color: false,
  };
  const program = new Command().name("oooi").exitOverride();
  registerDebugCommand(program, io);
  await program.parseAsync(["debug", "nodes", ...args], { from: "user" });
  return got;
}

describe("oooi debug nodes across replicas", () => {
  it("through either replica: every node with its replica; the other replica's NACK with its text; a stopped replica's nodes go", async () => {
    fake = await seededFake();
    const a = await replica(fake, "replica-a");
    const b = await replica(fake, "replica-b");
    await Promise.all([a.op.ready, b.op.ready]);
    await eventually(() => {
      expect(a.cache.getSnapshot(PROXY_GROUP)).toBeDefined();
      expect(b.cache.getSnapshot(PROXY_GROUP)).toBeDefined();
    });
    const onA = envoy(a.address, "proxy-a");
    const onB = envoy(b.address, "proxy-b");
    envoy(b.address, "proxy-bad", (t) => (t === LISTENER_TYPE_URL ? REASON : undefined));
    await onA.waitFor(() => onA.version(LISTENER_TYPE_URL) !== "", "listeners on a");
    await onB.waitFor(() => onB.version(LISTENER_TYPE_URL) !== "", "listeners on b");
    const lds = b.cache.getSnapshot(PROXY_GROUP)?.types.get(LISTENER_TYPE_URL)?.version ?? "";

    const client = new DebugClient({ address: a.address });
    closers.push(() => {
      client.close();
    });
    // Through a: its own node first, then b's as b reports them (the report needs a write and a watch event).
    await eventually(async () => {
      const fleet = await client.listFleet();
      expect(fleet.replica).toBe("replica-a");
      expect(fleet.nodes.map((n) => `${n.id}@${n.replica}`)).toEqual([
        "proxy-a@replica-a",
        "proxy-b@replica-b",
        "proxy-bad@replica-b",
      ]);
      const bad = fleet.nodes[2]?.types.find((t) => t.type_url === LISTENER_TYPE_URL);
      expect(bad).toMatchObject({ nack_version: lds, nack_message: REASON });
      expect(fleet.replicas).toEqual([
        { name: "replica-a", live: true, nodes: 1 },
        { name: "replica-b", live: true, nodes: 2 },
      ]);
    }, 10_000);
    expect((await client.listFleet({ cluster: "elsewhere/proxy" })).nodes).toEqual([]);

    for (const [address, here] of [
      [a.address, "replica-a"],
      [b.address, "replica-b"],
    ] as const) {
      await eventually(async () => {
        const { code, out, err } = await debugNodes("--xds", address);
        expect({ code, err }).toEqual({ code: 0, err: "" });
        const lines = out.split("\n");
        const header = lines[0] ?? "";
        expect(header.split(/\s+/).slice(0, 6)).toEqual(["NODE", "REPLICA", "CLUSTER", "PEER", "PROTO", "CONNECTED"]);
        const row = (id: string) => lines.find((l) => l.startsWith(`${id} `)) ?? "";
        for (const [id, on] of [
          ["proxy-a", "replica-a"],
          ["proxy-b", "replica-b"],
          ["proxy-bad", "replica-b"],
        ] as const) {
          expect(row(id).slice(header.indexOf("REPLICA")).startsWith(`${on} `)).toBe(true);
          // The answering replica's nodes have a stream there; the others' are as reported.
          const connected = row(id)
            .slice(header.indexOf("CONNECTED"))
            .split(/\s{2,}/)[0];
          expect(connected).toMatch(on === here ? / ago$/ : /^reported$/);
        }
        expect(
          row("proxy-bad")
            .slice(header.indexOf("LDS"))
            .startsWith(`NACK ${lds.slice(0, 8)}`),
        ).toBe(true);
        expect(out).toContain(REASON);
        const other = here === "replica-a" ? "replica-b" : "replica-a";
        expect(out).toContain(`replicas: ${here} (answered, `);
        expect(out).toContain(`, ${other} (${other === "replica-b" ? "2 nodes" : "1 node"})`);
      }, 10_000);
    }

    // b shuts down: through a, its nodes are gone.
    await b.op.close();
    await eventually(async () => {
      const fleet = await client.listFleet();
      expect(fleet.nodes.map((n) => `${n.id}@${n.replica}`)).toEqual(["proxy-a@replica-a"]);
    }, 10_000);
    const { out } = await debugNodes("--xds", a.address, "-o", "json");
    expect((JSON.parse(out) as { id: string; replica: string }[]).map((n) => `${n.id}@${n.replica}`)).toEqual([
      "proxy-a@replica-a",
    ]);
  }, 30_000);
});
