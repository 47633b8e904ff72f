// Where Envoy fetches dynamic resources from: always the ADS stream it already has.

/** ConfigSource JSON pointing at the ADS stream, v3 resources (used by EDS and RDS references). */
export function adsConfigSource(): object {
  return { ads: {}, resource_api_version: "V3" };
}
