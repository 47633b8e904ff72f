// Test bench for the dhcp-agent: the real ADS engine (XdsEngine over a SnapshotCache with the
// KeaConfig type registered) on a loopback gRPC server that also records every DiscoveryRequest
// it decodes, and a fake applier whose answers the test gives.
import { Server, ServerCredentials, ServerInterceptingCall, type ServerInterceptor } from "@grpc/grpc-js";
import type { ApplyResult, KeaConfig } from "../../../src/dhcp/applier.js";
import type { AgentApplier } from "../../../src/dhcp/agent/index.js";
import { SnapshotCache } from "../../../src/xds/cache/index.js";
import { KEA_CONFIG_TYPE_SPEC, KEA_CONFIG_TYPE_URL, keaConfigResource } from "../../../src/dhcp/kea-config-resource.js";
import type { SotwRequest } from "../../../src/xds/server/codec.js";
import { XdsEngine } from "../../../src/xds/server/index.js";
import { XdsStatus } from "../../../src/xds/client-status.js";
import { checkEnvoySnapshot } from "../../../src/envoy/snapshot.js";

/** Polls `check` until true; fails naming `what` after `timeoutMs`. */
export async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** A SnapshotCache that serves KeaConfig. */
export function keaCache(): SnapshotCache {
  const cache = new SnapshotCache({ check: checkEnvoySnapshot });
  cache.registerType(KEA_CONFIG_TYPE_URL, KEA_CONFIG_TYPE_SPEC);
  return cache;
}

/** Sets group `name`'s snapshot to one KeaConfig; returns the type's new version. */
export function publish(cache: SnapshotCache, name: string, dhcp4: object): string {
  const set = cache.setSnapshot(name, new Map([[KEA_CONFIG_TYPE_URL, [keaConfigResource(name, { Dhcp4: dhcp4 })]]]));
  if (!set.ok) throw new Error(set.errors.join("; "));
  const version = set.snapshot.types.get(KEA_CONFIG_TYPE_URL)?.version;
  if (version === undefined) throw new Error("no KeaConfig version");
  return version;
}

/** A running tapped xDS server. */
export interface TappedXds {
  readonly port: number;
  readonly address: string;
  readonly status: XdsStatus;
  /** Every DiscoveryRequest the server decoded, in arrival order, across servers sharing `requests`. */
  readonly requests: SotwRequest[];
  streamCount(): number;
  /** Fails every stream with UNAVAILABLE and stops listening. */
  close(): Promise<void>;
}

/** Options of startTappedXds. */
export interface TappedXdsOptions {
  readonly cache: SnapshotCache;
  /** 0 (default) disables the maximum stream age. */
  readonly maxStreamAgeMs?: number;
  /** Reuse a status record / request log / port (a "restarted" server). */
  readonly status?: XdsStatus;
  readonly requests?: SotwRequest[];
  readonly port?: number;
}

/** Starts the ADS engine on 127.0.0.1 with a request tap. */
export async function startTappedXds(o: TappedXdsOptions): Promise<TappedXds> {
  const status = o.status ?? new XdsStatus();
  const requests = o.requests ?? [];
  const engine = new XdsEngine({
    cache: o.cache,
    status,
    maxStreamAgeMs: o.maxStreamAgeMs ?? 0,
    maxStreamAgeJitter: 0,
  });
  const tap: ServerInterceptor = (_method, call) =>
    new ServerInterceptingCall(call, {
      start: (next) => {
        next({
          onReceiveMessage: (message, pass) => {
            requests.push(message as SotwRequest);
            pass(message);
          },
        });
      },
    });
  const server = new Server({ interceptors: [tap] });
  engine.addTo(server);
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`127.0.0.1:${String(o.port ?? 0)}`, ServerCredentials.createInsecure(), (err, p) => {
      if (err) reject(err);
      else resolve(p);
    });
  });
  return {
    port,
    address: `127.0.0.1:${String(port)}`,
    status,
    requests,
    streamCount: () => engine.streamCount(),
    close: async () => {
      engine.close();
      await new Promise<void>((resolve) => {
        server.tryShutdown(() => {
          resolve();
        });
        setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 500).unref();
      });
    },
  };
}

/** One apply() the fake applier received. */
export interface FakeCall {
  readonly config: KeaConfig;
  readonly resolve: (r: ApplyResult) => void;
  result: ApplyResult | undefined;
}

/** An applier that records each config and answers as told: automatically, or when the test resolves it. */
export class FakeApplier implements AgentApplier {
  readonly calls: FakeCall[] = [];
  /** When set, every apply() is answered at once with this function's result. */
  auto: ((config: KeaConfig) => ApplyResult) | undefined = () => ({
    status: "applied",
    hash: "h",
    persisted: true,
    setAt: 0,
  });

  apply(config: KeaConfig): Promise<ApplyResult> {
    return new Promise((resolve) => {
      const call: FakeCall = {
        config,
        result: undefined,
        resolve: (r) => {
          call.result = r;
          resolve(r);
        },
      };
      this.calls.push(call);
      if (this.auto) call.resolve(this.auto(config));
    });
  }
}

/** The "valid-lifetime" a test config carries (distinguishes versions). */
export function lifetimeOf(config: KeaConfig | undefined): unknown {
  return (config?.Dhcp4 as Record<string, unknown> | undefined)?.["valid-lifetime"];
}
