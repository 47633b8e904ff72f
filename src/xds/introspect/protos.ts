// Service definitions for introspection, loaded at runtime with proto-loader: the Envoy CSDS and
// discovery services from the pinned @grpc/grpc-js-xds package's deps/ folder, grpc.health.v1 and
// server reflection from their npm packages, and oooi.debug.v1 from this repository's proto/
// folder. Nothing is copied or generated. Loaded once per process, on first use.
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { loadSync, type Options, type PackageDefinition, type ServiceDefinition } from "@grpc/proto-loader";
import { protoPath as healthProtoPath } from "grpc-health-check";

const require = createRequire(import.meta.url);

/** CSDS's gRPC service name. */
export const CSDS_SERVICE = "envoy.service.status.v3.ClientStatusDiscoveryService";
/** oooi's debug service name. */
export const DEBUG_SERVICE = "oooi.debug.v1.DebugService";
/** gRPC health checking service name. */
export const HEALTH_SERVICE = "grpc.health.v1.Health";

/** The discovery services the ADS server mounts (listed by reflection and health). */
export const DISCOVERY_SERVICE_NAMES: readonly string[] = [
  "envoy.service.discovery.v3.AggregatedDiscoveryService",
  "envoy.service.listener.v3.ListenerDiscoveryService",
  "envoy.service.cluster.v3.ClusterDiscoveryService",
  "envoy.service.endpoint.v3.EndpointDiscoveryService",
  "envoy.service.route.v3.RouteDiscoveryService",
];

const ENVOY_FILES = [
  "envoy/service/discovery/v3/ads.proto",
  "envoy/service/listener/v3/lds.proto",
  "envoy/service/cluster/v3/cds.proto",
  "envoy/service/endpoint/v3/eds.proto",
  "envoy/service/route/v3/rds.proto",
  "envoy/service/status/v3/csds.proto",
];

/** How CSDS messages look in JS: snake_case, 64-bit integers and enums as strings, oneof names set. */
const ENVOY_OPTIONS: Options = { keepCase: true, longs: String, enums: String, defaults: false, oneofs: true };
/** How oooi.debug.v1 messages look in JS: snake_case, numbers, enum names, defaults filled in. */
const DEBUG_OPTIONS: Options = { keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true };

/** Include directories of the Envoy, xds, udpa, validate and googleapis protos in @grpc/grpc-js-xds. */
export function envoyIncludeDirs(): string[] {
  const deps = path.join(path.dirname(require.resolve("@grpc/grpc-js-xds/package.json")), "deps");
  return ["envoy-api", "xds", "googleapis", "protoc-gen-validate"].map((d) => path.join(deps, d));
}

import { oooiProtoDir } from "../../util/proto-dir.js";
export { oooiProtoDir };

/** Loaded definitions: services by name, and everything together for reflection. */
export interface IntrospectionProtos {
  readonly csds: ServiceDefinition;
  readonly debug: ServiceDefinition;
  /** Every file of the services the xDS port serves, for server reflection. */
  readonly all: PackageDefinition;
}

let cached: IntrospectionProtos | undefined;

/** Loads (once) the CSDS, debug, health and reflection definitions. */
export function introspectionProtos(): IntrospectionProtos {
  if (cached) return cached;
  const envoy = loadSync(ENVOY_FILES, { ...ENVOY_OPTIONS, includeDirs: envoyIncludeDirs() });
  const debug = loadDebugDefinition();
  const health = loadSync(healthProtoPath, ENVOY_OPTIONS);
  const reflectionDir = path.join(path.dirname(require.resolve("@grpc/reflection/package.json")), "build", "proto");
  const reflection = loadSync(["grpc/reflection/v1/reflection.proto", "grpc/reflection/v1alpha/reflection.proto"], {
    ...ENVOY_OPTIONS,
    includeDirs: [reflectionDir],
  });
  cached = {
    csds: service(envoy, CSDS_SERVICE),
    debug: service(debug, DEBUG_SERVICE),
    all: { ...reflection, ...health, ...envoy, ...debug },
  };
  return cached;
}

/** The oooi.debug.v1 package alone (what `oooi debug` needs as a client). */
export function loadDebugDefinition(): PackageDefinition {
  const dir = oooiProtoDir();
  const file = "oooi/debug/v1/debug.proto";
  if (!fs.existsSync(path.join(dir, file))) {
    throw new Error(`${file} not found under ${dir} (the proto/ folder must sit next to dist/, or set OOOI_PROTO_DIR)`);
  }
  return loadSync(file, { ...DEBUG_OPTIONS, includeDirs: [dir] });
}

/** A service of a package definition; throws if the protos lack it. */
export function service(pkg: PackageDefinition, name: string): ServiceDefinition {
  const def = pkg[name];
  if (def === undefined || "format" in def || "type" in def)
    throw new Error(`${name} is not a service in the loaded protos`);
  return def;
}
