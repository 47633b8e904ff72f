// A generated Envoy bootstrap checked against the real envoy.config.bootstrap.v3.Bootstrap proto
// (the pinned @grpc/grpc-js-xds deps): the project's strict JSON bridge throws on an unknown field
// or an Any whose type is not loaded, and the bytes decode back to the same JSON.
import { decodeResource, encodeResource, envoyProtoRoot } from "../../src/xds/resource/protos.js";

export const BOOTSTRAP_TYPE = "type.googleapis.com/envoy.config.bootstrap.v3.Bootstrap";

let loaded = false;

/** Loads the Bootstrap proto and the extensions a bootstrap's typed_config may name. */
function loadBootstrapProtos(): void {
  if (loaded) return;
  // src/xds/resource/protos.ts loads only what the ADS server serves; the bootstrap and its extensions come
  // from the same folder.
  const root = envoyProtoRoot();
  root.loadSync(
    [
      "envoy/config/bootstrap/v3/bootstrap.proto",
      "envoy/extensions/upstreams/http/v3/http_protocol_options.proto",
      "envoy/extensions/transport_sockets/tls/v3/tls.proto",
      "envoy/extensions/transport_sockets/tls/v3/secret.proto",
    ],
    { keepCase: true },
  );
  root.resolveAll();
  loaded = true;
}

/** The bootstrap's proto bytes; throws naming the field the schema does not have. */
export function encodeBootstrap(json: object): Uint8Array {
  loadBootstrapProtos();
  return encodeResource(BOOTSTRAP_TYPE, json);
}

/** The bootstrap as Envoy would read it back: encoded strictly, then decoded. */
export function roundTripBootstrap(json: object): Record<string, unknown> {
  return decodeResource(BOOTSTRAP_TYPE, encodeBootstrap(json));
}

const DISCOVERY_RESPONSE = "type.googleapis.com/envoy.service.discovery.v3.DiscoveryResponse";

/** An SDS file (a DiscoveryResponse, as Envoy reads a path_config_source) encoded strictly and read back. */
export function roundTripSdsFile(json: object): Record<string, unknown> {
  loadBootstrapProtos();
  return decodeResource(DISCOVERY_RESPONSE, encodeResource(DISCOVERY_RESPONSE, json));
}
