// Introspection of the xDS server, on its own gRPC port: CSDS, oooi.debug.v1, grpc.health.v1 and
// server reflection, added to the ADS server with one call.
import type { Server } from "@grpc/grpc-js";
import { ReflectionService } from "@grpc/reflection";
import { HealthImplementation, type ServingStatusMap } from "grpc-health-check";
import type { SnapshotCache } from "../cache/cache.js";
import type { XdsStatusView } from "../client-status.js";
import { addCsds } from "./csds.js";
import { addDebugService, type FleetSource, type ServerVersion } from "./debug-service.js";
import { CSDS_SERVICE, DEBUG_SERVICE, DISCOVERY_SERVICE_NAMES, HEALTH_SERVICE, introspectionProtos } from "./protos.js";

export { ClientStatusReporter, splitAny } from "./csds.js";
export type { ClientConfig, ClientStatusRequest, GenericXdsConfig } from "./csds.js";
export { DebugReporter } from "./debug-service.js";
export type { FleetSource, GetVersionResponse, ServerVersion } from "./debug-service.js";
export { DebugClient, XdsUnreachableError } from "./debug-client.js";
export type { DebugClientOptions } from "./debug-client.js";
export { clientCredentials, readTlsFiles, serverCredentials, serverCredentialsFromFiles } from "../server/tls.js";
export type { ClientTlsOptions, ServerTlsOptions, TlsFiles } from "../server/tls.js";
export { syncState, typeLabel, typeMatches } from "./state.js";
export type { SyncState } from "./state.js";
export { CSDS_SERVICE, DEBUG_SERVICE, DISCOVERY_SERVICE_NAMES, HEALTH_SERVICE } from "./protos.js";

/** What introspection reads: the ADS server's status record and its snapshot cache. */
export interface IntrospectionOptions {
  readonly status: XdsStatusView;
  readonly cache: SnapshotCache;
  /** The operator's fleet for ListFleet, read at each call (it exists only once the operator runs). */
  readonly fleet?: () => FleetSource | undefined;
  /** Which oooi this is, for GetVersion. */
  readonly server?: ServerVersion;
  /** Serve gRPC server reflection (default true). */
  readonly reflection?: boolean;
}

/** Handle on the added services. */
export interface Introspection {
  /** Services answered by grpc.health.v1 ("" is the whole server). */
  readonly services: readonly string[];
  /** Sets every health status: SERVING, or NOT_SERVING while shutting down. */
  setServing(serving: boolean): void;
}

/** Adds CSDS, oooi.debug.v1, grpc.health.v1 (all SERVING) and reflection to the ADS gRPC server. */
export function addIntrospection(server: Server, options: IntrospectionOptions): Introspection {
  const protos = introspectionProtos();
  addCsds(server, options.status, options.cache);
  addDebugService(server, options.status, options.cache, options.fleet, options.server);
  const services = ["", ...DISCOVERY_SERVICE_NAMES, CSDS_SERVICE, DEBUG_SERVICE];
  const serving = (s: "SERVING" | "NOT_SERVING"): ServingStatusMap => Object.fromEntries(services.map((n) => [n, s]));
  const health = new HealthImplementation(serving("SERVING"));
  health.addToServer(server);
  if (options.reflection !== false) {
    const listed = [
      ...DISCOVERY_SERVICE_NAMES,
      CSDS_SERVICE,
      DEBUG_SERVICE,
      HEALTH_SERVICE,
      "grpc.reflection.v1.ServerReflection",
      "grpc.reflection.v1alpha.ServerReflection",
    ];
    new ReflectionService(protos.all, { services: listed }).addToServer(server);
  }
  return {
    services,
    setServing: (on) => {
      for (const [name, s] of Object.entries(serving(on ? "SERVING" : "NOT_SERVING"))) health.setStatus(name, s);
    },
  };
}
