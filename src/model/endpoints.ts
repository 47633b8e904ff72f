// Endpoint names: a HostedCluster (as observed, or undefined) and the attachment's domain → the
// hostname and port workers dial for api, oauth, ignition and konnectivity, and where each came
// from. HyperShift tells its nodes these names (kubeconfig, ignition user data, konnectivity agent),
// so oooi must answer and route exactly them (docs/reference.md#endpoint-names). Pure.
import type { HostedCluster, ServicePublishingStrategy } from "../api/external.js";
import { parseIPv4 } from "./ipv4.js";
import { dnsName } from "./names.js";

export type EndpointName = "api" | "oauth" | "ignition" | "konnectivity";

export const CONVENTION = "convention";

export interface PublishedEndpoint {
  readonly name: EndpointName;
  /** Lower case, no trailing dot. */
  readonly hostname: string;
  readonly port: 443 | 6443;
  /** "HostedCluster <field path>" or "convention". */
  readonly source: string;
}

/** A value the HostedCluster states that oooi cannot serve, and why; the next source is used. */
export interface SkippedEndpoint {
  readonly field: string;
  readonly message: string;
  /** What is published instead. */
  readonly used: PublishedEndpoint;
}

export interface ResolvedEndpoints {
  /** api, oauth, ignition, konnectivity, in that order. */
  readonly endpoints: readonly PublishedEndpoint[];
  readonly skipped: readonly SkippedEndpoint[];
}

/** One stated value: a host and a port (undefined: not stated), read from `field`. */
interface Candidate {
  readonly field: string;
  readonly host: string | undefined;
  readonly port: number | undefined;
}

/** HyperShift's service names in spec.services[].service. */
const SERVICE: Readonly<Record<EndpointName, string>> = {
  api: "APIServer",
  oauth: "OAuthServer",
  ignition: "Ignition",
  konnectivity: "Konnectivity",
};

/** The conventional port, and the port of a LoadBalancer-published service (HyperShift's Service ports). */
const PORTS: Readonly<Record<EndpointName, { readonly convention: 443 | 6443; readonly loadBalancer: number }>> = {
  api: { convention: 6443, loadBalancer: 6443 },
  oauth: { convention: 443, loadBalancer: 443 },
  ignition: { convention: 443, loadBalancer: 443 },
  konnectivity: { convention: 443, loadBalancer: 8091 },
};

/**
 * Per endpoint, the first usable of: the HostedCluster's status (what HyperShift handed its
 * nodes), its spec.services[] publishing strategy (a Route's or LoadBalancer's hostname), and the
 * convention `<name>.<domain>`. Usable: a DNS name (not an IP: nodes dial an IP directly) on 443
 * or 6443. Nothing is guessed: a Route without a hostname names nothing here.
 */
export function resolveEndpoints(hc: HostedCluster | undefined, domain: string): ResolvedEndpoints {
  const endpoints: PublishedEndpoint[] = [];
  const skipped: SkippedEndpoint[] = [];
  for (const name of ["api", "oauth", "ignition", "konnectivity"] as const) {
    const refused: { field: string; message: string }[] = [];
    let chosen: PublishedEndpoint | undefined;
    for (const c of candidates(hc, name)) {
      if (c.host === undefined || c.host === "") continue;
      const checked = check(c.host, c.port);
      if (typeof checked === "string") {
        refused.push({ field: c.field, message: checked });
        continue;
      }
      chosen = { name, ...checked, source: `HostedCluster ${c.field}` };
      break;
    }
    const used = chosen ?? conventionEndpoint(name, domain);
    endpoints.push(used);
    for (const r of refused) skipped.push({ ...r, used });
  }
  return { endpoints, skipped };
}

/** `<name>.<domain>` on the endpoint's conventional port. */
export function conventionEndpoint(name: EndpointName, domain: string): PublishedEndpoint {
  return { name, hostname: `${name}.${domain}`, port: PORTS[name].convention, source: CONVENTION };
}

/**
 * What the HostedCluster states for one endpoint, in order. serve reads it from a manifest
 * unchecked: a value of another type than HyperShift's counts as not stated.
 */
function candidates(hc: HostedCluster | undefined, name: EndpointName): Candidate[] {
  const status = hc?.status;
  const out: Candidate[] = [];
  if (name === "api") {
    const e = status?.controlPlaneEndpoint;
    out.push({ field: "status.controlPlaneEndpoint", host: text(e?.host), port: number(e?.port) });
  } else if (name === "oauth") {
    out.push(fromUrl("status.oauthCallbackURLTemplate", text(status?.oauthCallbackURLTemplate)));
  } else if (name === "ignition") {
    out.push(fromHostPort("status.ignitionEndpoint", text(status?.ignitionEndpoint), 443));
  }
  const services: unknown = hc?.spec?.services;
  const entry: unknown = Array.isArray(services)
    ? (services as unknown[]).find((s) => isObject(s) && s["service"] === SERVICE[name])
    : undefined;
  const stated = isObject(entry) ? entry["servicePublishingStrategy"] : undefined;
  const strategy = isObject(stated) ? (stated as ServicePublishingStrategy) : undefined;
  const at = `spec.services[${SERVICE[name]}].servicePublishingStrategy`;
  if (strategy?.type === "Route")
    out.push({ field: `${at}.route.hostname`, host: text(strategy.route?.hostname), port: 443 });
  if (strategy?.type === "LoadBalancer")
    out.push({
      field: `${at}.loadBalancer.hostname`,
      host: text(strategy.loadBalancer?.hostname),
      port: PORTS[name].loadBalancer,
    });
  return out;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null;
const text = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const number = (v: unknown): number | undefined => (typeof v === "number" ? v : undefined);

/** "https://host[:port]/…" (the OAuth callback template): its host and port, 443 by default. */
function fromUrl(field: string, text: string | undefined): Candidate {
  if (text === undefined) return { field, host: undefined, port: undefined };
  try {
    const url = new URL(text);
    return { field, host: url.hostname, port: url.port === "" ? 443 : Number(url.port) };
  } catch {
    return { field, host: text, port: undefined };
  }
}

/** "host" or "host:port" (status.ignitionEndpoint: a Route's host, or NodePort's address:port). */
function fromHostPort(field: string, text: string | undefined, port: number): Candidate {
  if (text === undefined) return { field, host: undefined, port: undefined };
  const colon = text.lastIndexOf(":");
  if (colon < 0) return { field, host: text, port };
  const stated = Number(text.slice(colon + 1));
  return { field, host: text.slice(0, colon), port: Number.isInteger(stated) ? stated : undefined };
}

/** The name and port to serve, or why they cannot be served. */
function check(host: string, port: number | undefined): { hostname: string; port: 443 | 6443 } | string {
  const shown = JSON.stringify(host);
  if (parseIPv4(host) !== undefined)
    return `${shown} is an address, not a name: nodes dial it directly, so the proxy cannot answer or route it`;
  const hostname = dnsName(host);
  if (hostname === undefined) return `${shown} is not a DNS name`;
  if (port !== 443 && port !== 6443)
    return `${shown} is published on port ${String(port ?? "(none)")}; the proxy serves only 443 and 6443`;
  return { hostname, port };
}
