// A state rendered through the real pipeline, one entry per DNSServer, and the state edit the
// live-change tests make; no I/O at import, so the reload benchmark (bench/dns/coredns-reload.ts)
// uses it from dist-bench too.
import { renderAll } from "../../../src/pipeline/outputs.js";
import type { ClusterState, Topology } from "../../../src/model/types.js";

/** One DNSServer of an example: its ConfigMap data and the topology it came from. */
export interface RenderedDnsServer {
  readonly name: string;
  readonly files: Readonly<Record<string, string>>;
  readonly topology: Topology;
  readonly vlanCidr: string;
}

export interface RenderedExample {
  readonly state: ClusterState;
  readonly servers: readonly RenderedDnsServer[];
  /** Every file of the rendering, for the next rendering's `previous` (SOA serials). */
  readonly files: ReadonlyMap<string, string>;
}

/** Renders `state` through the real pipeline, continuing the serials of `previous`. */
export function renderState(state: ClusterState, previous?: RenderedExample): RenderedExample {
  const out = renderAll(state, previous === undefined ? {} : { previous: previous.files });
  const servers = out.infras.flatMap((r): RenderedDnsServer[] => {
    const dns = r.topology.dns;
    const cidr = dns?.views[0].sourceCidr;
    if (r.coreDns === undefined || dns === undefined || cidr === undefined) return [];
    return [{ name: dns.name, files: r.coreDns, topology: r.topology, vlanCidr: cidr }];
  });
  return { state, servers, files: out.files };
}

/** `state` with every attachment's apps ingress VIP (the address its apps names resolve to) set to `vip`. */
export function withAppsVip(state: ClusterState, vip: string): ClusterState {
  return {
    ...state,
    attachments: state.attachments.map((a) => {
      const apps = a.status?.appsIngressStatus;
      return apps === undefined
        ? a
        : { ...a, status: { ...a.status, appsIngressStatus: { ...apps, externalIP: vip } } };
    }),
  };
}
