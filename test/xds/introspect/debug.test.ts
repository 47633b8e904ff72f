// oooi.debug.v1 through its client, and `oooi debug nodes|config|pushes` as a user sees them.
import { createServer } from "node:net";
import { Command } from "commander";
import { afterEach, describe, expect, test } from "vitest";
import { parse as parseYaml } from "yaml";
import { registerDebugCommand } from "../../../src/cli/commands/debug.js";
import type { DebugIo } from "../../../src/cli/debug.js";
import { DebugClient, XdsUnreachableError } from "../../../src/xds/introspect/debug-client.js";
import { jsonFromStruct, LOADER_VALUE_KEYS } from "../../../src/xds/resource/struct.js";
import { CLUSTER_TYPE_URL, LISTENER_TYPE_URL } from "../../../src/xds/resource/protos.js";
import { ALPHA, BETA, GROUP, publish, rendered, versionsOf } from "../server/fixtures.js";
import { closeAll, envoy, eventually, startIntrospectRig, type IntrospectRig } from "./fixtures.js";

let rig: IntrospectRig | undefined;
const debugClients: DebugClient[] = [];
afterEach(async () => {
  closeAll();
  for (const c of debugClients.splice(0)) c.close();
  await rig?.close();
  rig = undefined;
});

const REASON = "Error adding/updating listener(s) kube-6443: overlapping matchers (test)";

/** Two Envoys of GROUP (SotW and Delta), synced; then a change the SotW one rejects. */
async function scenario(): Promise<{ r: IntrospectRig; client: DebugClient }> {
  const r = await startIntrospectRig();
  rig = r;
  publish(r.cache, GROUP, rendered([ALPHA]));
  const good = envoy(r.address, "envoy-delta", GROUP, { protocol: "delta" });
  const picky = envoy(r.address, "envoy-sotw", GROUP);
  await Promise.all([good, picky].map((c) => c.waitForVersions(versionsOf(r.cache, GROUP))));
  picky.validate = (t) => (t === LISTENER_TYPE_URL ? REASON : undefined);
  publish(r.cache, GROUP, rendered([ALPHA, BETA]));
  await good.waitForVersions(versionsOf(r.cache, GROUP));
  const client = new DebugClient({ address: r.address });
  debugClients.push(client);
  // Settled: the Delta client ACKed the new LDS and the SotW one NACKed it.
  await eventually(async () => {
    const nodes = await client.listNodes();
    const lds = (id: string) =>
      nodes.find((n) => n.id === id)?.streams[0]?.types.find((t) => t.type_url === LISTENER_TYPE_URL)?.status;
    return lds("envoy-delta") === "SYNC_STATUS_SYNCED" && lds("envoy-sotw") === "SYNC_STATUS_ERROR" ? true : undefined;
  }, "LDS synced on one node and rejected on the other");
  return { r, client };
}

/** Runs `oooi debug ...args` with captured output. */
async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  let code = 0;
  const io: DebugIo = {
    out: (t) => {
      out += t;
    },
    err: (t) => {
      err += t;
    },
    exit: (c) => {
      code = c;
    },
    now: () => Date.now(),
    color: false,
  };
  const program = new Command().name("oooi").exitOverride();
  registerDebugCommand(program, io);
  await program.parseAsync(["debug", ...args], { from: "user" });
  return { code, out, err };
}

describe("oooi.debug.v1", () => {
  test("ListNodes: streams, protocol, peer and per-type state, NACK text included", async () => {
    const { r, client } = await scenario();
    const nodes = await client.listNodes();
    expect(nodes.map((n) => n.id)).toEqual(["envoy-delta", "envoy-sotw"]);
    const [delta, sotw] = nodes;
    expect(delta?.cluster).toBe(GROUP);
    expect(delta?.streams).toHaveLength(1);
    expect(delta?.streams[0]?.protocol).toBe("PROTOCOL_DELTA");
    expect(sotw?.streams[0]?.protocol).toBe("PROTOCOL_SOTW");
    expect(sotw?.streams[0]?.peer).toMatch(/^(ipv4:)?127\.0\.0\.1:\d+$/);
    expect(sotw?.streams[0]?.service).toBe("ads");
    const lds = sotw?.streams[0]?.types.find((t) => t.type_url === LISTENER_TYPE_URL);
    const newLds = r.cache.getSnapshot(GROUP)?.types.get(LISTENER_TYPE_URL)?.version;
    expect(lds?.status).toBe("SYNC_STATUS_ERROR");
    expect(lds?.sent_version).toBe(newLds);
    expect(lds?.acked_version).not.toBe(newLds);
    expect(lds?.last_nack?.message).toBe(REASON);
    expect(lds?.last_nack?.version).toBe(newLds);
    const cds = sotw?.streams[0]?.types.find((t) => t.type_url === CLUSTER_TYPE_URL);
    expect(cds?.status).toBe("SYNC_STATUS_SYNCED");
    expect(delta?.streams[0]?.types.find((t) => t.type_url === LISTENER_TYPE_URL)?.acked_version).toBe(newLds);

    expect(await client.listNodes({ cluster: "elsewhere/proxy" })).toEqual([]);
    // Not an operator replica: no fleet to list (the operator's is tested in test/operator/fleet-debug.test.ts).
    expect(await client.listFleet()).toEqual({ replica: "", replicas: [], nodes: [] });
    closeAll(); // both Envoys disconnect
    await eventually(async () => ((await client.listNodes()).length === 0 ? true : undefined), "nodes gone");
    const remembered = await client.listNodes({ include_disconnected: true });
    expect(remembered.map((n) => n.id)).toEqual(["envoy-delta", "envoy-sotw"]);
    expect(remembered.every((n) => n.streams.length === 0)).toBe(true);
    // The last acknowledged version survives the disconnect.
    expect(remembered[0]?.types.find((t) => t.type_url === LISTENER_TYPE_URL)?.acked_version).toBe(newLds);
  });

  test("GetNodeConfig: the resources acknowledged and sent, as the JSON the cache was given", async () => {
    const { r, client } = await scenario();
    const before = rendered([ALPHA]);
    const after = rendered([ALPHA, BETA]);
    const byName = (list: readonly object[]) => new Map(list.map((x) => [(x as { name: string }).name, x]));

    const sotw = await client.nodeConfig({ node_id: "envoy-sotw", type_urls: [LISTENER_TYPE_URL] });
    expect(sotw.node.id).toBe("envoy-sotw");
    expect(sotw.configs).toHaveLength(1);
    const lds = sotw.configs[0];
    expect(lds?.state?.status).toBe("SYNC_STATUS_ERROR");
    // It still runs the listeners it acknowledged; the rejected ones are what was sent.
    const acked = byName(before.listeners);
    expect(lds?.acked.map((x) => x.name).sort()).toEqual([...acked.keys()].sort());
    for (const x of lds?.acked ?? []) expect(jsonFromStruct(x.config, LOADER_VALUE_KEYS)).toEqual(acked.get(x.name));
    const sent = byName(after.listeners);
    expect(lds?.sent.map((x) => x.name).sort()).toEqual([...sent.keys()].sort());
    for (const x of lds?.sent ?? []) expect(jsonFromStruct(x.config, LOADER_VALUE_KEYS)).toEqual(sent.get(x.name));

    const delta = await client.nodeConfig({ node_id: "envoy-delta" });
    const types = delta.configs.map((c) => c.state?.type_url);
    expect(types).toContain(LISTENER_TYPE_URL);
    expect(types).toContain(CLUSTER_TYPE_URL);
    const clusters = delta.configs.find((c) => c.state?.type_url === CLUSTER_TYPE_URL);
    expect(clusters?.acked.map((x) => x.name).sort()).toEqual(
      after.clusters.map((c) => (c as { name: string }).name).sort(),
    );
    expect(r.cache.getSnapshot(GROUP)).toBeDefined();

    await expect(client.nodeConfig({ node_id: "nobody" })).rejects.toThrow(/not known/);
  });

  test("PushHistory: causes, change→sent and change→ACK latencies, NACKs, no probe types", async () => {
    const { client } = await scenario();
    const all = await client.pushHistory();
    expect(all.every((p) => !p.type_url.includes("EnvoyLikeBarrier"))).toBe(true);
    const changes = all.filter((p) => p.cause === "PUSH_CAUSE_CHANGE" && p.type_url === LISTENER_TYPE_URL);
    expect(changes.map((p) => p.node_id).sort()).toEqual(["envoy-delta", "envoy-sotw"]);
    const ok = changes.find((p) => p.node_id === "envoy-delta");
    const rejected = changes.find((p) => p.node_id === "envoy-sotw");
    expect(ok?.change_to_ack).not.toBeNull();
    expect(ok?.ack_time).not.toBeNull();
    expect(ok?.bytes).toBeGreaterThan(0);
    expect(rejected?.nack_time).not.toBeNull();
    expect(rejected?.change_to_ack).toBeNull();
    expect(rejected?.change_to_sent).not.toBeNull();
    expect(all.some((p) => p.cause === "PUSH_CAUSE_SUBSCRIPTION")).toBe(true);

    const mine = await client.pushHistory({ node_id: "envoy-sotw", type_url: LISTENER_TYPE_URL });
    expect(mine.every((p) => p.node_id === "envoy-sotw" && p.type_url === LISTENER_TYPE_URL)).toBe(true);
    const last = await client.pushHistory({ limit: 1 });
    expect(last).toEqual(all.slice(-1));
  });

  test("an unreachable server is a readable error", async () => {
    const port = await freePort();
    const client = new DebugClient({ address: `127.0.0.1:${port}`, timeoutMs: 3000 });
    debugClients.push(client);
    await expect(client.listNodes()).rejects.toBeInstanceOf(XdsUnreachableError);
  });
});

describe("oooi debug", () => {
  test("nodes prints an aligned table with shortened versions and the NACK reason", async () => {
    const { r } = await scenario();
    const { code, out, err } = await cli("nodes", "--xds", r.address);
    expect(err).toBe("");
    expect(code).toBe(0);
    const lines = out.split("\n");
    const header = lines[0] ?? "";
    expect(header.split(/\s+/)).toEqual(["NODE", "CLUSTER", "PEER", "PROTO", "CONNECTED", "CDS", "EDS", "LDS", "RDS"]);
    const rows = lines.slice(1, 3);
    expect(rows[0]).toMatch(/^envoy-delta\s/);
    expect(rows[1]).toMatch(/^envoy-sotw\s/);
    // Columns line up: every row has its cluster and protocol under their headings.
    for (const [row, proto] of [
      [rows[0] ?? "", "delta"],
      [rows[1] ?? "", "sotw"],
    ] as const) {
      expect(row.indexOf(GROUP)).toBe(header.indexOf("CLUSTER"));
      expect(row.slice(header.indexOf("PROTO")).startsWith(proto)).toBe(true);
      expect(row.slice(header.indexOf("PEER")).startsWith("127.0.0.1:")).toBe(true);
    }
    const newLds = r.cache.getSnapshot(GROUP)?.types.get(LISTENER_TYPE_URL)?.version ?? "";
    const cds = r.cache.getSnapshot(GROUP)?.types.get(CLUSTER_TYPE_URL)?.version ?? "";
    expect(rows[0]?.slice(header.indexOf("LDS")).startsWith(newLds.slice(0, 8))).toBe(true);
    expect(rows[1]?.slice(header.indexOf("LDS")).startsWith(`NACK ${newLds.slice(0, 8)}`)).toBe(true);
    expect(rows[1]?.slice(header.indexOf("CDS")).startsWith(`${cds.slice(0, 8)} `)).toBe(true);
    expect(out).not.toContain(newLds); // versions are shortened
    expect(out).toContain("2 nodes, 2 streams; 1 rejected type (NACK)");
    expect(out).toContain(`envoy-sotw lds ${newLds.slice(0, 8)}`);
    expect(out).toContain(REASON);
    expect(out).not.toContain("\u001b["); // no colour when not asked
  });

  test("config prints a node's configuration as YAML or JSON, filtered by type", async () => {
    const { r } = await scenario();
    const yaml = await cli("config", "envoy-delta", "--xds", r.address, "--type", "cds");
    expect(yaml.code).toBe(0);
    const doc = parseYaml(yaml.out) as {
      node: string;
      cluster: string;
      types: { type: string; status: string; resources: { name: string; config: object }[] }[];
    };
    expect(doc.node).toBe("envoy-delta");
    expect(doc.cluster).toBe(GROUP);
    expect(doc.types.map((t) => t.type)).toEqual(["cds"]);
    expect(doc.types[0]?.status).toBe("SYNCED");
    const clusters = [...rendered([ALPHA, BETA]).clusters].sort((a, b) =>
      (a as { name: string }).name < (b as { name: string }).name ? -1 : 1,
    );
    expect(doc.types[0]?.resources.map((x) => x.config)).toEqual(clusters);

    const json = await cli("config", "envoy-sotw", "--xds", r.address, "-t", "Listener", "-o", "json");
    expect(json.code).toBe(0);
    const d = JSON.parse(json.out) as {
      types: {
        type: string;
        status: string;
        last_nack?: { message: string };
        resources: unknown[];
        sent?: unknown[];
      }[];
    };
    expect(d.types).toHaveLength(1);
    expect(d.types[0]?.status).toBe("ERROR");
    expect(d.types[0]?.last_nack?.message).toBe(REASON);
    expect(d.types[0]?.sent?.length).toBe(rendered([ALPHA, BETA]).listeners.length);

    const missing = await cli("config", "ghost", "--xds", r.address);
    expect(missing.code).toBe(1);
    expect(missing.err).toBe(
      'oooi debug: node "ghost" is not known to this xDS server\n' +
        "known node ids: envoy-delta, envoy-sotw (see `oooi debug nodes`)\n",
    );
    // A node group where a node id belongs: its nodes are named.
    const group = await cli("config", GROUP, "--xds", r.address);
    expect(group.code).toBe(1);
    expect(group.err).toContain(
      `${GROUP} is a node group (node.cluster), not a node id; its nodes: envoy-delta, envoy-sotw\n`,
    );
    const noType = await cli("config", "envoy-sotw", "--xds", r.address, "--type", "KeaConfig");
    expect(noType.code).toBe(1);
    expect(noType.err).toContain("holds no type matching");
  });

  test("pushes prints the history with latencies", async () => {
    const { r } = await scenario();
    const { code, out } = await cli("pushes", "--xds", r.address, "--node", "envoy-sotw", "--type", "lds");
    expect(code).toBe(0);
    const lines = out.trimEnd().split("\n");
    expect(lines[0]?.split(/\s{2,}/)).toEqual([
      "SENT",
      "NODE",
      "TYPE",
      "CAUSE",
      "VERSION",
      "RES",
      "BYTES",
      "CHANGE→SENT",
      "CHANGE→ACK",
    ]);
    expect(lines.slice(1).every((l) => /\benvoy-sotw\s+lds\b/.test(l))).toBe(true);
    expect(lines.at(-1)).toMatch(/\bchange\b.*\bNACK$/);
  });

  test("an unreachable server gets one line, no stack trace, exit 1", async () => {
    const port = await freePort();
    const { code, out, err } = await cli("nodes", "--xds", `127.0.0.1:${port}`, "--timeout", "3000");
    expect(code).toBe(1);
    expect(out).toBe("");
    expect(err).toContain(`oooi debug: cannot reach the xDS server at 127.0.0.1:${port}`);
    expect(err).not.toMatch(/\n\s+at /);
  });

  test("--help explains the subcommands", () => {
    const program = new Command().name("oooi");
    const debug = registerDebugCommand(program);
    const help = debug.helpInformation();
    expect(help).toContain("oooi debug nodes");
    expect(help).toContain("oooi debug config NODE");
    const nodes = debug.commands.find((c) => c.name() === "nodes")?.helpInformation() ?? "";
    expect(nodes).toContain("--xds <host:port>");
    expect(nodes).toContain("127.0.0.1:18000");
    expect(nodes).toContain("--tls-ca <file>");
  });
});

/** A loopback port nothing listens on. */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((resolve) =>
    s.close(() => {
      resolve();
    }),
  );
  return port;
}
