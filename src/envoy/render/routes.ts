// RDS: the plain-HTTP listener's route table, one virtual host per apps-http backend (Host
// `*.apps.D` → that cluster's apps ingress VIP).
import type { RouteConfiguration } from "./envoy-types.js";
import type { Backend } from "../../model/types.js";
import { compareText, sortByKey } from "../../xds/resource/json.js";

/** Name of the RouteConfiguration the http-80 listener loads over RDS. */
export const HTTP_ROUTE_CONFIG_NAME = "http-80";

/** RouteConfiguration JSON for the port-80 backends; none when there are no such backends. */
export function renderRoutes(backends: readonly Backend[]): RouteConfiguration[] {
  const http = sortByKey(
    backends.filter((b) => b.port === 80),
    (b) => b.name,
  );
  if (http.length === 0) return [];
  return [
    {
      name: HTTP_ROUTE_CONFIG_NAME,
      // "Host: x.apps.D:80" must match "*.apps.D" as the router would.
      ignore_port_in_host_matching: true,
      virtual_hosts: http.map((b) => ({
        name: b.name,
        // Envoy requires at least one domain; a backend without names takes every Host.
        domains: b.serverNames.length > 0 ? [...new Set(b.serverNames)].sort(compareText) : ["*"],
        // timeout 0s: no route timeout (Envoy's default 15 s would cut long responses and streams).
        routes: [{ match: { prefix: "/" }, route: { cluster: b.upstream, timeout: "0s" } }],
      })),
    },
  ];
}
