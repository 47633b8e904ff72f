// Where a renderer or consistency problem lives in the ProxyServer a proxy is published as: the
// child's spec.backends lists the model's backends in the same order (model/children.ts), each
// upstream's timeout and target sit on the backends that forward to it. Pure.
import type { Backend, ProxyModel, Upstream } from "../../model/types.js";

/** The Envoy resources a consistency finding names, most specific last; every key optional. */
export interface ResourceAt {
  readonly listener?: string;
  readonly routeConfig?: string;
  readonly cluster?: string;
  /** A filter chain (on 443/6443 named after its backend). */
  readonly chain?: string;
  /** A virtual host (on 80 named after its backend). */
  readonly virtualHost?: string;
  /** An SNI name of the chain or a domain of the virtual host. */
  readonly serverName?: string;
}

/** Field paths into the proxy's ProxyServer, for Problem.field. */
export interface ProxyFields {
  /** `spec.backends[i]`, or `spec.backends[i].<sub>`. */
  backend(b: Backend, sub?: string): string;
  /** `spec.backends[i].<sub>` of the first backend forwarding to the upstream. */
  upstream(u: Upstream, sub: string): string;
  /** The most specific field a consistency finding points at. */
  at(at: ResourceAt): string;
}

/** The list every backend (and so every rendered resource) comes from: the fallback field. */
export const BACKENDS_FIELD = "spec.backends";

export function proxyFields(proxy: ProxyModel): ProxyFields {
  // Built on the first problem only: a consistent proxy never pays for the indexes.
  let byName: Map<string, number> | undefined;
  let byUpstream: Map<string, number> | undefined;
  const indexes = (): { byName: Map<string, number>; byUpstream: Map<string, number> } => {
    if (byName === undefined || byUpstream === undefined) {
      byName = new Map();
      byUpstream = new Map();
      for (const [i, b] of proxy.backends.entries()) {
        if (!byName.has(b.name)) byName.set(b.name, i);
        if (!byUpstream.has(b.upstream)) byUpstream.set(b.upstream, i);
      }
    }
    return { byName, byUpstream };
  };
  const path = (i: number | undefined, sub?: string): string =>
    i === undefined ? BACKENDS_FIELD : `${BACKENDS_FIELD}[${String(i)}]${sub === undefined ? "" : `.${sub}`}`;
  const serverNameSub = (i: number, name: string): string | undefined => {
    const names = proxy.backends[i]?.serverNames ?? [];
    const k = names.findIndex((n) => n.toLowerCase() === name.toLowerCase());
    return k < 0 ? undefined : k === 0 ? "hostname" : `alternateHostnames[${String(k - 1)}]`;
  };
  const fields: ProxyFields = {
    backend: (b, sub) => path(indexes().byName.get(b.name), sub),
    upstream: (u, sub) => {
      const i = indexes().byUpstream.get(u.name);
      return i === undefined ? BACKENDS_FIELD : path(i, sub);
    },
    at: (at) => {
      const owner = at.virtualHost ?? at.chain;
      const i = owner === undefined ? undefined : indexes().byName.get(owner);
      if (i !== undefined) return path(i, at.serverName === undefined ? undefined : serverNameSub(i, at.serverName));
      const u = at.cluster === undefined ? undefined : indexes().byUpstream.get(at.cluster);
      return path(u);
    },
  };
  return fields;
}
