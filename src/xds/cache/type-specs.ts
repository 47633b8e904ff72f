// The Envoy LDS, CDS, EDS and RDS types as the cache encodes them: by their proto, a Listener chain
// by chain (splice.ts), each named by its own name field.
import { encodeResource } from "../resource/protos.js";
import { asString, get } from "../resource/json.js";
import { ENVOY_NAME_FIELD, type ResourceTypeSpec } from "../resource/specs.js";
import { CLUSTER_TYPE_URL, ENDPOINT_TYPE_URL, LISTENER_TYPE_URL, ROUTE_TYPE_URL } from "../resource/type-urls.js";
import { encodeListener } from "./splice.js";

function envoySpec(typeUrl: string, legacyWildcard: boolean): ResourceTypeSpec {
  const nameField = ENVOY_NAME_FIELD.get(typeUrl) ?? "name";
  return {
    encode: (resource) => encodeResource(typeUrl, resource),
    nameOf: (resource) => asString(get(resource, nameField)),
    legacyWildcard,
  };
}

/** Specs of the Envoy LDS, CDS, EDS and RDS resource types. */
export function envoyTypeSpecs(): Map<string, ResourceTypeSpec> {
  return new Map([
    [LISTENER_TYPE_URL, { ...envoySpec(LISTENER_TYPE_URL, true), encodeReusing: encodeListener }],
    [CLUSTER_TYPE_URL, envoySpec(CLUSTER_TYPE_URL, true)],
    [ENDPOINT_TYPE_URL, envoySpec(ENDPOINT_TYPE_URL, false)],
    [ROUTE_TYPE_URL, envoySpec(ROUTE_TYPE_URL, false)],
  ]);
}
