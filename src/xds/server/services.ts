// gRPC service definitions of the xDS discovery services, built from the Envoy protos (method
// paths from the loaded schema) with our own serializers: requests decoded by the real types,
// responses assembled from cached bytes.
import type { MethodDefinition } from "@grpc/grpc-js";
import protobuf from "protobufjs";
import { envoyProtoRoot } from "../resource/protos.js";
import { CLUSTER_TYPE_URL, ENDPOINT_TYPE_URL, LISTENER_TYPE_URL, ROUTE_TYPE_URL } from "../resource/type-urls.js";
import {
  decodeDeltaRequest,
  decodeSotwRequest,
  serializeResponse,
  type DeltaRequest,
  type SotwRequest,
  type WireResponse,
} from "./codec.js";

/** One discovery service: its gRPC name, short label, fixed type URL (undefined for ADS) and methods. */
export interface DiscoveryService {
  readonly name: string;
  /** "ads", "lds", "cds", "eds" or "rds". */
  readonly label: string;
  readonly typeUrl: string | undefined;
  readonly sotwMethod: string;
  readonly deltaMethod: string;
}

/** The services the ADS server implements, each with a SotW and a Delta streaming method. */
export const DISCOVERY_SERVICES: readonly DiscoveryService[] = [
  {
    name: "envoy.service.discovery.v3.AggregatedDiscoveryService",
    label: "ads",
    typeUrl: undefined,
    sotwMethod: "StreamAggregatedResources",
    deltaMethod: "DeltaAggregatedResources",
  },
  {
    name: "envoy.service.listener.v3.ListenerDiscoveryService",
    label: "lds",
    typeUrl: LISTENER_TYPE_URL,
    sotwMethod: "StreamListeners",
    deltaMethod: "DeltaListeners",
  },
  {
    name: "envoy.service.cluster.v3.ClusterDiscoveryService",
    label: "cds",
    typeUrl: CLUSTER_TYPE_URL,
    sotwMethod: "StreamClusters",
    deltaMethod: "DeltaClusters",
  },
  {
    name: "envoy.service.endpoint.v3.EndpointDiscoveryService",
    label: "eds",
    typeUrl: ENDPOINT_TYPE_URL,
    sotwMethod: "StreamEndpoints",
    deltaMethod: "DeltaEndpoints",
  },
  {
    name: "envoy.service.route.v3.RouteDiscoveryService",
    label: "rds",
    typeUrl: ROUTE_TYPE_URL,
    sotwMethod: "StreamRoutes",
    deltaMethod: "DeltaRoutes",
  },
];

const SERVICE_FILES = [
  "envoy/service/listener/v3/lds.proto",
  "envoy/service/cluster/v3/cds.proto",
  "envoy/service/endpoint/v3/eds.proto",
  "envoy/service/route/v3/rds.proto",
];

let loaded = false;

/** The protobuf service `name`, loading the per-type service protos into the shared root once. */
function lookupService(name: string): protobuf.Service {
  const root = envoyProtoRoot();
  if (!loaded) {
    root.loadSync(SERVICE_FILES, { keepCase: true });
    root.resolveAll();
    loaded = true;
  }
  const found = root.lookup("." + name);
  if (!(found instanceof protobuf.Service)) throw new Error(`service ${name} is not in the Envoy protos`);
  return found;
}

function path(service: protobuf.Service, method: string): string {
  if (!Object.hasOwn(service.methods, method)) throw new Error(`${service.fullName} has no method ${method}`);
  return `/${service.fullName.slice(1)}/${method}`;
}

function unsupported(): never {
  throw new Error("the xDS server only serializes responses and deserializes requests");
}

/** grpc-js method definitions of one service (bidi streams), keyed by method name. */
export function methodDefinitions(s: DiscoveryService): {
  sotw: MethodDefinition<SotwRequest, WireResponse>;
  delta: MethodDefinition<DeltaRequest, WireResponse>;
} {
  const service = lookupService(s.name);
  const common = {
    requestStream: true,
    responseStream: true,
    responseSerialize: serializeResponse,
    responseDeserialize: unsupported,
    requestSerialize: unsupported,
  } as const;
  return {
    sotw: { ...common, path: path(service, s.sotwMethod), requestDeserialize: (b: Buffer) => decodeSotwRequest(b) },
    delta: { ...common, path: path(service, s.deltaMethod), requestDeserialize: (b: Buffer) => decodeDeltaRequest(b) },
  };
}
