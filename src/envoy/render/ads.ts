// Where Envoy fetches dynamic resources from: always the ADS stream it already has.
import type { ConfigSource } from "./envoy-types.js";

/** ConfigSource JSON pointing at the ADS stream, v3 resources (used by EDS and RDS references). */
export function adsConfigSource(): ConfigSource {
  return { ads: {}, resource_api_version: "V3" };
}
