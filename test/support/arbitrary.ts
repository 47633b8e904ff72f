// fast-check generators of whole cluster states: schema-valid, semantically anything.
import fc from "fast-check";
import type { Infra, InfraClusterAttachment } from "../../src/api/schema.js";
import type { ClusterState } from "../../src/model/types.js";
import { formatIPv4 } from "../../src/model/ipv4.js";
import {
  attachment,
  combine,
  controlPlaneServices,
  infra,
  machine,
  namespace,
  nodePool,
  NS,
  service,
  vmi,
} from "./fixtures.js";

/** An address inside 10.<a>.0.0/16-ish space, mostly inside the VLAN, sometimes not. */
const octet = fc.integer({ min: 0, max: 255 });

export interface Scenario {
  readonly state: ClusterState;
  readonly vlan: string;
  /** Hosted-cluster name → worker addresses it was given (may overlap others on purpose). */
  readonly workers: ReadonlyMap<string, readonly string[]>;
}

/**
 * One Infra on 10.<x>.<y>.0/24 with up to five attachments, random workers (some shared,
 * some outside the VLAN), random apps ingress status and internalProxyService variants;
 * sometimes a second Infra and conflicting attachments.
 */
export const scenario: fc.Arbitrary<Scenario> = fc
  .record({
    x: fc.integer({ min: 1, max: 254 }),
    clusters: fc.uniqueArray(fc.constantFrom("alpha", "beta", "gamma", "delta", "eps"), { maxLength: 5 }),
    workerOctets: fc.array(fc.uniqueArray(fc.integer({ min: 5, max: 99 }), { maxLength: 8 }), {
      minLength: 5,
      maxLength: 5,
    }),
    strayWorker: fc.boolean(),
    internal: fc.constantFrom("unset", "ip", "service", "missing-service", "headless"),
    apps: fc.array(fc.constantFrom("none", "ready-ip", "ready-hostname", "pending"), { minLength: 5, maxLength: 5 }),
    duplicateDomain: fc.boolean(),
    unknownClients: fc.constantFrom("deny" as const, "pool" as const),
    vmiOctets: fc.uniqueArray(octet, { maxLength: 6 }),
  })
  .map((r) => {
    const vlan = `10.${r.x}.7`;
    const internal =
      r.internal === "unset" ? undefined : r.internal === "ip" ? "172.30.9.9" : "proxy-int.proxies.svc.cluster.local";
    const inf = infra("shared", {
      networkConfig: { cidr: `${vlan}.0/24`, gateway: `${vlan}.1` },
      infraComponents: {
        dhcp: {
          serverIP: `${vlan}.2`,
          rangeStart: `${vlan}.150`,
          rangeEnd: `${vlan}.199`,
          unknownClients: r.unknownClients,
        },
        dns: { serverIP: `${vlan}.3` },
        proxy: { serverIP: `${vlan}.4`, internalProxyService: internal as string },
      },
    });
    const withoutInternal: Infra = internal === undefined ? stripInternal(inf) : inf;
    const workers = new Map<string, string[]>();
    const parts: Partial<ClusterState>[] = [{ infras: [withoutInternal] }];
    if (r.internal === "service") parts.push({ services: [service("proxies", "proxy-int", "172.30.9.10", [443])] });
    if (r.internal === "headless") parts.push({ services: [service("proxies", "proxy-int", "None", [443])] });
    r.clusters.forEach((name, i) => {
      const cp = `${NS}-${name}`;
      const addrs = (r.workerOctets[i] ?? []).map((o) => `${vlan}.${o}`);
      if (r.strayWorker && i === 0) addrs.push(formatIPv4(((10 << 24) | ((r.x ^ 1) << 16) | (7 << 8) | 9) >>> 0));
      workers.set(name, addrs);
      const appsState = r.apps[i] ?? "none";
      const status: InfraClusterAttachment["status"] =
        appsState === "ready-ip"
          ? { appsIngressStatus: { phase: "Ready", externalIP: `${vlan}.${210 + i}` } }
          : appsState === "ready-hostname"
            ? { appsIngressStatus: { phase: "Ready", externalHostname: `lb-${name}.example.net` } }
            : appsState === "pending"
              ? { appsIngressStatus: { phase: "Pending", reason: "WaitingForExternalIP" } }
              : undefined;
      const cluster = r.duplicateDomain && i === 1 ? (r.clusters[0] ?? name) : name;
      parts.push({
        attachments: [
          attachment(name, {
            infra: "shared",
            cluster,
            spec: { appsIngress: { enabled: appsState !== "none" } },
            ...(status === undefined ? {} : { status }),
          }),
        ],
        namespaces: [namespace(cp)],
        services: controlPlaneServices(cp, i + 1),
        nodePools: [nodePool(name)],
        machines: addrs.map((a, j) => machine(cp, `${name}-${j}`, `${name}-workers`, [a])),
      });
    });
    parts.push({
      vmis: r.vmiOctets.map((o, i) =>
        vmi(
          NS,
          `vm-${i}`,
          `02:00:00:00:01:${i.toString(16).padStart(2, "0")}`,
          o % 3 === 0 ? undefined : `${vlan}.${o}`,
        ),
      ),
    });
    return { state: combine(...parts), vlan: `${vlan}.0/24`, workers };
  });

function stripInternal(i: Infra): Infra {
  const proxy = { ...i.spec.infraComponents?.proxy };
  delete proxy.internalProxyService;
  return { ...i, spec: { ...i.spec, infraComponents: { ...i.spec.infraComponents, proxy } } };
}
