// The DNS files the operator's next rendering continues from: each DNS ConfigMap's data as the
// cluster holds it (Reconciler.dnsFiles) and, for a DNS child whose ConfigMap is not observed yet,
// the last rendering's own — so SOA serials continue from the cluster across restarts and leader
// changes, and a pending ConfigMap does not make its Infra render again on every watch event. Pure.
import type { Outputs } from "../../pipeline/outputs.js";

/** Per DNS ConfigMap "<namespace>/<name>" (named as its DNSServer child), the data the cluster holds. */
export type ClusterDnsFiles = ReadonlyMap<string, Readonly<Record<string, string>>>;

/**
 * renderAll's `previous` after the rendering `last`. Undefined when that map would hold exactly the
 * last rendering's own DNS files — every rendered DNS child's ConfigMap holds what it rendered (or
 * is not observed) and no other DNS ConfigMap holds data: renderAll then continues from `last`'s
 * files (RenderOptions.previous), the same rendering without a map of every file per watch event.
 * Otherwise every file ("<namespace>/<ConfigMap>/<key>") → its content.
 */
export function dnsPrevious(
  cluster: ClusterDnsFiles,
  last: Pick<Outputs, "infras"> | undefined,
): ReadonlyMap<string, string> | undefined {
  if (last !== undefined && rendersWhatClusterHolds(cluster, last)) return undefined;
  const flat = new Map<string, string>();
  for (const [dir, data] of cluster) for (const [k, text] of Object.entries(data)) flat.set(`${dir}/${k}`, text);
  return withRenderedDns(flat, last);
}

/**
 * The DNS files to continue from, plus the last rendering's own for every DNS child whose ConfigMap
 * is not observed (not created yet, or deleted): it continues from what it rendered, so an Infra
 * whose ConfigMap is pending keeps its rendering instead of being rendered again on every watch
 * event (renderAll reuses a topology's rendering only while its DNS files are what it continues from).
 */
export function withRenderedDns(
  observed: ReadonlyMap<string, string>,
  last: Pick<Outputs, "infras"> | undefined,
): ReadonlyMap<string, string> {
  let out: Map<string, string> | undefined;
  for (const r of last?.infras ?? []) {
    const dns = r.topology.children.dns;
    if (dns === undefined || r.coreDns === undefined) continue;
    const dir = `${dns.metadata.namespace}/${dns.metadata.name}/`;
    const files = Object.entries(r.coreDns);
    if (files.some(([k]) => observed.has(dir + k))) continue;
    out ??= new Map(observed);
    for (const [k, text] of files) out.set(dir + k, text);
  }
  return out ?? observed;
}

/** ConfigMap data found to hold exactly a rendering's files (both immutable): compared once. */
const holds = new WeakMap<object, object>();

function rendersWhatClusterHolds(cluster: ClusterDnsFiles, last: Pick<Outputs, "infras">): boolean {
  let matched = 0;
  for (const r of last.infras) {
    const dns = r.topology.children.dns;
    if (dns === undefined || r.coreDns === undefined) continue;
    const data = cluster.get(`${dns.metadata.namespace}/${dns.metadata.name}`);
    // Not observed (or empty): withRenderedDns would add exactly the rendering's files.
    if (data === undefined || isEmpty(data)) continue;
    if (!sameData(data, r.coreDns)) return false;
    matched++;
  }
  // Any other ConfigMap with data would be in the map (a DNS child the last rendering has not).
  let withData = 0;
  for (const data of cluster.values()) if (!isEmpty(data)) withData++;
  return withData === matched;
}

function sameData(data: Readonly<Record<string, string>>, files: Readonly<Record<string, string>>): boolean {
  if (data === files || holds.get(data) === files) return true;
  const keys = Object.keys(files);
  if (Object.keys(data).length !== keys.length || keys.some((k) => data[k] !== files[k])) return false;
  holds.set(data, files);
  return true;
}

function isEmpty(data: Readonly<Record<string, string>>): boolean {
  // The first key answers: no array of every key (one per zone file) per ConfigMap per snapshot.
  for (const key in data) if (Object.hasOwn(data, key)) return false;
  return true;
}
