// How one attachment is served, projected out of renderAll's outputs: its Envoy filter chains,
// clusters, endpoints and virtual hosts, and every DNS record under its domain, per view. Two
// projections are equal exactly when that hosted cluster is served the same way.
import type { Outputs } from "../../src/pipeline/outputs.js";

interface Named {
  readonly name?: string;
  readonly cluster_name?: string;
}
interface ListenerJson {
  readonly name: string;
  readonly filter_chains?: readonly Named[];
}
interface RouteJson {
  readonly virtual_hosts?: readonly Named[];
}

export function servedAs(outputs: Outputs, attachment: { namespace: string; name: string }): unknown {
  const prefix = `${attachment.namespace}/${attachment.name}/`;
  const out: Record<string, unknown> = {};
  for (const r of outputs.infras) {
    const a = r.topology.attachments.find(
      (x) => x.ref.namespace === attachment.namespace && x.ref.name === attachment.name,
    );
    if (a === undefined || !a.served) continue;
    const ownCluster = (name: string | undefined) =>
      name !== undefined &&
      (name.startsWith(`${a.controlPlaneNamespace}/`) || name.startsWith("vip/")) &&
      (r.topology.proxy?.backends.some(
        (b) => b.attachment === `${attachment.namespace}/${attachment.name}` && b.upstream === name,
      ) ??
        false);
    const env = r.envoy;
    out[`${r.topology.infra.namespace}/${r.topology.infra.name}`] = {
      chains: (env?.listeners ?? []).map((l) => {
        const listener = l as ListenerJson;
        return [listener.name, (listener.filter_chains ?? []).filter((c) => c.name?.startsWith(prefix) === true)];
      }),
      clusters: (env?.clusters ?? []).filter((c) => ownCluster((c as Named).name)),
      endpoints: (env?.endpoints ?? []).filter((e) => ownCluster((e as Named).cluster_name)),
      routes: (env?.routes ?? []).flatMap((rt) =>
        ((rt as RouteJson).virtual_hosts ?? []).filter((v) => v.name?.startsWith(prefix) === true),
      ),
      dns: r.topology.dns?.views.map((v) => [
        v.name,
        v.zones.flatMap((z) => z.records).filter((rec) => rec.name === a.domain || rec.name.endsWith(`.${a.domain}`)),
      ]),
      workers: a.workerAddresses,
    };
  }
  return out;
}
