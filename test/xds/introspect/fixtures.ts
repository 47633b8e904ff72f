// Shared setup of the introspection suites: an ADS server with introspection added, clients of
// CSDS, health and reflection built from the same protos a stranger's tooling would load, and a
// poll helper for state that settles asynchronously.
import {
  credentials,
  makeClientConstructor,
  type ChannelCredentials,
  type Client,
  type ClientDuplexStream,
  type ServiceError,
} from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { service as healthService } from "grpc-health-check";
import { createRequire } from "node:module";
import path from "node:path";
import { addIntrospection, type Introspection } from "../../../src/xds/introspect/index.js";
import { CSDS_SERVICE, introspectionProtos } from "../../../src/xds/introspect/protos.js";
import type { XdsServerOptions } from "../../../src/xds/server/index.js";
import { EnvoyLikeClient, type EnvoyLikeOptions } from "../../support/envoy/client.js";
import { startRig, type Rig } from "../server/fixtures.js";

/** A server rig with introspection on its gRPC server. */
export interface IntrospectRig extends Rig {
  readonly introspection: Introspection;
}

/** Starts an ADS server on 127.0.0.1:0 and adds introspection with one call, as the CLI does. */
export async function startIntrospectRig(options: Partial<XdsServerOptions> = {}): Promise<IntrospectRig> {
  const rig = await startRig(options);
  const introspection = addIntrospection(rig.server.grpcServer, { status: rig.server.status, cache: rig.cache });
  return { ...rig, introspection };
}

/** Envoy-like clients opened by a test, closed in afterEach. */
export const openClients: EnvoyLikeClient[] = [];
/** gRPC clients opened by a test, closed in afterEach. */
export const openGrpc: Client[] = [];

/** Connects an Envoy-like client (closed by closeAll). */
export function envoy(
  address: string,
  id: string,
  cluster: string,
  options: Partial<EnvoyLikeOptions> = {},
): EnvoyLikeClient {
  const c = new EnvoyLikeClient({ address, node: { id, cluster }, ...options });
  openClients.push(c);
  c.connect();
  return c;
}

/** Closes every client a test opened. */
export function closeAll(): void {
  for (const c of openClients.splice(0)) c.close();
  for (const c of openGrpc.splice(0)) c.close();
}

type UnaryFn = (req: object, cb: (err: ServiceError | null, res?: unknown) => void) => void;

function unary<T>(client: Client, method: string, req: object): Promise<T> {
  const fn = (client as unknown as Record<string, UnaryFn>)[method];
  if (!fn) throw new Error(`no method ${method}`);
  return new Promise<T>((resolve, reject) => {
    fn.call(client, req, (err, res) => {
      if (err) reject(err);
      else resolve(res as T);
    });
  });
}

/** A decoded CSDS GenericXdsConfig (proto-loader: snake_case, enums as names). */
export interface CsdsEntry {
  type_url: string;
  name: string;
  version_info: string;
  config_status: string;
  client_status: string;
  xds_config?: { type_url: string; value: Buffer };
  error_state?: { details: string; version_info: string; failed_configuration?: { type_url: string; value: Buffer } };
}

/** A decoded CSDS ClientConfig. */
export interface CsdsClientConfig {
  node: { id: string; cluster: string };
  generic_xds_configs?: CsdsEntry[];
}

/** Calls CSDS FetchClientStatus on `address`. */
export async function fetchClientStatus(
  address: string,
  req: object = {},
  creds: ChannelCredentials = credentials.createInsecure(),
): Promise<CsdsClientConfig[]> {
  const Ctor = makeClientConstructor(introspectionProtos().csds, CSDS_SERVICE);
  const client = new Ctor(address, creds);
  openGrpc.push(client);
  const res = await unary<{ config?: CsdsClientConfig[] }>(client, "FetchClientStatus", req);
  return res.config ?? [];
}

/** grpc.health.v1 Check on `address`. */
export async function healthCheck(
  address: string,
  serviceName = "",
  creds: ChannelCredentials = credentials.createInsecure(),
): Promise<string> {
  const Ctor = makeClientConstructor(healthService, "grpc.health.v1.Health");
  const client = new Ctor(address, creds);
  openGrpc.push(client);
  return (await unary<{ status: string }>(client, "Check", { service: serviceName })).status;
}

const require = createRequire(import.meta.url);

/** One server reflection (v1) exchange: the response to `request`. */
export async function reflect(
  address: string,
  request: object,
  creds: ChannelCredentials = credentials.createInsecure(),
): Promise<Record<string, unknown>> {
  const dir = path.join(path.dirname(require.resolve("@grpc/reflection/package.json")), "build", "proto");
  const def = loadSync("grpc/reflection/v1/reflection.proto", { includeDirs: [dir], keepCase: true, oneofs: true });
  const svc = def["grpc.reflection.v1.ServerReflection"];
  if (!svc || "format" in svc) throw new Error("no reflection service");
  const Ctor = makeClientConstructor(svc, "grpc.reflection.v1.ServerReflection");
  const client = new Ctor(address, creds);
  openGrpc.push(client);
  const call = (
    client as unknown as { ServerReflectionInfo: () => ClientDuplexStream<object, Record<string, unknown>> }
  ).ServerReflectionInfo();
  return new Promise((resolve, reject) => {
    call.on("data", (res: Record<string, unknown>) => {
      resolve(res);
      call.end();
    });
    call.on("error", reject);
    call.write(request);
  });
}

/** Polls `check` until it returns a value (not undefined) or fails after 10 s. */
export async function eventually<T>(check: () => T | undefined | Promise<T | undefined>, what: string): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
