// Interop with an independent xDS client: @grpc/grpc-js-xds's XdsClient, configured through
// GRPC_XDS_BOOTSTRAP_CONFIG (read once per process, hence this file of its own). It subscribes
// LDS → RDS → CDS → EDS on our server and routes real RPCs to the endpoint we advertise; it
// rejects our TCP-proxy listeners for real, which exercises the NACK path.
import { afterAll, beforeAll, expect, test } from "vitest";
import {
  Client,
  credentials,
  Metadata,
  Server,
  ServerCredentials,
  status as GrpcStatus,
  type sendUnaryData,
  type ServerUnaryCall,
} from "@grpc/grpc-js";
import { register } from "@grpc/grpc-js-xds";
import { SnapshotCache } from "../../../src/xds/cache/index.js";
import {
  CLUSTER_TYPE_URL,
  ENDPOINT_TYPE_URL,
  HTTP_CONNECTION_MANAGER_TYPE_URL,
  LISTENER_TYPE_URL,
  ROUTE_TYPE_URL,
  ROUTER_TYPE_URL,
} from "../../../src/xds/resource/protos.js";
import { startXdsServer, type XdsServer } from "../../../src/xds/server/index.js";
import { ALPHA, rendered } from "./fixtures.js";
import { checkEnvoySnapshot, envoyInput } from "../../../src/envoy/snapshot.js";
import { type ResourceInput } from "../../../src/xds/resource/specs.js";

const GROUP = "grpc-clients/greeter-proxy";
const NODE_ID = "grpc-node-1";
const METHOD = "/oooi.test.Echo/Echo";
const ADS = { ads: {}, resource_api_version: "V3" };

interface Backend {
  readonly server: Server;
  readonly port: number;
}

const backends: Backend[] = [];
let cache: SnapshotCache;
let xds: XdsServer;
let xdsPort = 0;
const channels: Client[] = [];

async function startBackend(label: string): Promise<Backend> {
  const server = new Server();
  const identity = (b: Buffer): Buffer => b;
  server.addService(
    {
      Echo: {
        path: METHOD,
        requestStream: false,
        responseStream: false,
        requestSerialize: identity,
        requestDeserialize: identity,
        responseSerialize: identity,
        responseDeserialize: identity,
      },
    },
    {
      Echo: (call: ServerUnaryCall<Buffer, Buffer>, cb: sendUnaryData<Buffer>) => {
        cb(null, Buffer.from(`${label}:${call.request.toString()}`));
      },
    },
  );
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (err, p) => {
      if (err) reject(err);
      else resolve(p);
    });
  });
  const b = { server, port };
  backends.push(b);
  return b;
}

/** gRPC-shaped resources: an API listener whose HCM loads routes over RDS, an EDS cluster. */
function grpcResources(endpointPort: number): Map<string, ResourceInput[]> {
  const listener = {
    name: "greeter",
    api_listener: {
      api_listener: {
        "@type": HTTP_CONNECTION_MANAGER_TYPE_URL,
        rds: { config_source: ADS, route_config_name: "greeter-routes" },
        http_filters: [{ name: "router", typed_config: { "@type": ROUTER_TYPE_URL } }],
      },
    },
  };
  const routes = {
    name: "greeter-routes",
    virtual_hosts: [
      { name: "greeter", domains: ["*"], routes: [{ match: { prefix: "" }, route: { cluster: "greeter-cluster" } }] },
    ],
  };
  const cluster = {
    name: "greeter-cluster",
    type: "EDS",
    eds_cluster_config: { eds_config: ADS },
    lb_policy: "ROUND_ROBIN",
    connect_timeout: "5s",
  };
  const assignment = {
    cluster_name: "greeter-cluster",
    endpoints: [
      {
        locality: { region: "test", zone: "a" },
        load_balancing_weight: 1,
        lb_endpoints: [
          {
            endpoint: { address: { socket_address: { address: "127.0.0.1", port_value: endpointPort } } },
            load_balancing_weight: 1,
          },
        ],
      },
    ],
  };
  return new Map([
    [LISTENER_TYPE_URL, [{ name: "greeter", resource: listener }]],
    [ROUTE_TYPE_URL, [{ name: "greeter-routes", resource: routes }]],
    [CLUSTER_TYPE_URL, [{ name: "greeter-cluster", resource: cluster }]],
    [ENDPOINT_TYPE_URL, [{ name: "greeter-cluster", resource: assignment }]],
  ]);
}

/** The gRPC resources plus our rendered TCP-proxy configuration in the same snapshot. */
function withTcpProxy(endpointPort: number): Map<string, ResourceInput[]> {
  const out = grpcResources(endpointPort);
  for (const [t, list] of envoyInput(rendered([ALPHA]))) out.set(t, [...(out.get(t) ?? []), ...list]);
  return out;
}

function publish(input: Map<string, ResourceInput[]>): void {
  const r = cache.setSnapshot(GROUP, input);
  if (!r.ok) throw new Error(r.errors.join("\n"));
}

function channel(target: string): Client {
  const c = new Client(target, credentials.createInsecure());
  channels.push(c);
  return c;
}

async function echo(c: Client, text: string, deadlineMs = 5000): Promise<string> {
  const identity = (b: Buffer): Buffer => b;
  return new Promise((resolve, reject) => {
    c.makeUnaryRequest(
      METHOD,
      identity,
      identity,
      Buffer.from(text),
      new Metadata(),
      { deadline: Date.now() + deadlineMs },
      (err, res) => {
        if (err) reject(err);
        else resolve(res?.toString() ?? "");
      },
    );
  });
}

/** Retries until `check` passes: xDS delivery is asynchronous (bounded by the deadline). */
async function eventually(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      /* not yet */
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function typeStatus(typeUrl: string) {
  return xds.status.node(NODE_ID)?.types.find((t) => t.typeUrl === typeUrl);
}

function snapshotVersion(typeUrl: string): string | undefined {
  return cache.getSnapshot(GROUP)?.types.get(typeUrl)?.version;
}

beforeAll(async () => {
  cache = new SnapshotCache({ check: checkEnvoySnapshot });
  xds = await startXdsServer({ cache, listen: "127.0.0.1:0", maxStreamAgeMs: 0 });
  xdsPort = xds.port;
  process.env["GRPC_XDS_BOOTSTRAP_CONFIG"] = JSON.stringify({
    xds_servers: [
      {
        server_uri: `127.0.0.1:${String(xdsPort)}`,
        channel_creds: [{ type: "insecure" }],
        server_features: ["xds_v3"],
      },
    ],
    node: { id: NODE_ID, cluster: GROUP, locality: {} },
  });
  register();
});

afterAll(async () => {
  for (const c of channels) c.close();
  await xds.close();
  for (const b of backends) b.server.forceShutdown();
});

test("grpc-js-xds routes a real RPC through what we advertise, ACKing every type with our versions and nonces", async () => {
  const one = await startBackend("backend-1");
  publish(grpcResources(one.port));
  const greeter = channel("xds:///greeter");
  expect(await echo(greeter, "hello")).toBe("backend-1:hello");
  for (const t of [LISTENER_TYPE_URL, ROUTE_TYPE_URL, CLUSTER_TYPE_URL, ENDPOINT_TYPE_URL]) {
    await eventually(`${t} ACK`, () => typeStatus(t)?.lastAcked?.version === snapshotVersion(t));
    const s = typeStatus(t);
    expect(s?.lastAcked?.nonce, t).toBe(s?.lastSent?.nonce);
    expect(s?.lastNack, t).toBeUndefined();
  }
  const stream = xds.status.streams().find((s) => s.node.id === NODE_ID);
  expect(stream).toMatchObject({ protocol: "sotw", service: "ads", node: { cluster: GROUP } });
  expect(stream?.node.userAgent).toMatch(/grpc/i);
});

test("a new endpoint is picked up by the live stream", async () => {
  const two = await startBackend("backend-2");
  publish(grpcResources(two.port));
  const greeter = channel("xds:///greeter");
  await eventually("traffic on backend-2", async () => (await echo(greeter, "x")) === "backend-2:x");
  await eventually(
    "EDS ACK",
    () => typeStatus(ENDPOINT_TYPE_URL)?.lastAcked?.version === snapshotVersion(ENDPOINT_TYPE_URL),
  );
  // Only EDS changed, so only EDS was pushed again.
  const pushes = xds.status.history().filter((p) => p.nodeId === NODE_ID && p.cause === "change");
  expect(new Set(pushes.map((p) => p.typeUrl))).toEqual(new Set([ENDPOINT_TYPE_URL]));
});

test("the client recovers when our server restarts on the same address", async () => {
  await xds.close();
  xds = await startXdsServer({ cache, listen: `127.0.0.1:${String(xdsPort)}`, maxStreamAgeMs: 0 });
  await eventually("the client to reconnect and ACK", () => {
    const t = typeStatus(LISTENER_TYPE_URL);
    return t?.lastAcked !== undefined && t.lastAcked.nonce === t.lastSent?.nonce;
  });
  // A change made after the restart reaches it.
  const one = backends[0];
  if (!one) throw new Error("no backend");
  publish(grpcResources(one.port));
  const greeter = channel("xds:///greeter");
  await eventually("traffic back on backend-1", async () => (await echo(greeter, "y")) === "backend-1:y");
});

test("our TCP-proxy listener is NACKed for real, recorded with the client's error text, and not re-pushed", async () => {
  const one = backends[0];
  if (!one) throw new Error("no backend");
  publish(withTcpProxy(one.port));
  const tcp = channel("xds:///https-443");
  // It never gets a usable listener: the call cannot be routed.
  await expect(echo(tcp, "z", 1000)).rejects.toMatchObject({
    code: expect.toBeOneOf([GrpcStatus.UNAVAILABLE, GrpcStatus.DEADLINE_EXCEEDED]) as unknown,
  });
  await eventually("the LDS NACK", () => typeStatus(LISTENER_TYPE_URL)?.lastNack !== undefined);
  const nack = typeStatus(LISTENER_TYPE_URL)?.lastNack;
  expect(nack?.message).toMatch(/tcp_proxy\.v3\.TcpProxy/);
  expect(nack?.message).toMatch(/listener_filters populated/);
  expect(nack?.version).toBe(snapshotVersion(LISTENER_TYPE_URL));
  // The valid listener keeps working, and the rejected version went out once.
  const greeter = channel("xds:///greeter");
  expect(await echo(greeter, "still")).toBe("backend-1:still");
  const sent = xds.status
    .history()
    .filter((p) => p.nodeId === NODE_ID && p.typeUrl === LISTENER_TYPE_URL && p.version === nack?.version);
  expect(sent).toHaveLength(1);
  expect(sent[0]?.nackAt).toBeDefined();
});
