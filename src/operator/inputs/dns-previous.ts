// The DNS files the operator's next rendering continues from: each DNS ConfigMap's data as the
// cluster holds it (Reconciler.dnsFiles) and, for a DNS child whose ConfigMap is not observed yet,
// the last rendering's own — so SOA serials continue from the cluster across restarts and leader
// changes, and a pending ConfigMap does not make its Infra render again on every watch event. Pure.
import type { Outputs, RenderedInfra } from "../../pipeline/outputs.js";
import { changedKeys } from "../../util/overlay-map.js";

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
  last: Pick<Outputs, "infras" | "byInfra"> | undefined,
  holds: ClusterHolds,
): ReadonlyMap<string, string> | undefined {
  if (last !== undefined && holds.holds(cluster, last)) return undefined;
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
const held = new WeakMap<object, object>();

function sameData(data: Readonly<Record<string, string>>, files: Readonly<Record<string, string>>): boolean {
  if (data === files || held.get(data) === files) return true;
  const keys = Object.keys(files);
  if (Object.keys(data).length !== keys.length || keys.some((k) => data[k] !== files[k])) return false;
  held.set(data, files);
  return true;
}

/**
 * Whether every DNS ConfigMap with data holds exactly what the last rendering rendered for it (one
 * it did not render holds nothing), answered from what changed since the last question (issue 30,
 * target 4): the ConfigMaps whose data changed and those of the Infras whose rendering changed are
 * looked at again, not every Infra's on every rendering.
 */
export class ClusterHolds {
  #memo:
    | {
        cluster: ClusterDnsFiles;
        renderings: ReadonlyMap<string, RenderedInfra>;
        /** ConfigMap "<namespace>/<name>" → the files the rendering of its Infra rendered for it. */
        readonly rendered: Map<string, Readonly<Record<string, string>>>;
        /** ConfigMaps with data that is not what was rendered for them. */
        readonly differ: Set<string>;
      }
    | undefined;

  holds(cluster: ClusterDnsFiles, last: Pick<Outputs, "byInfra">): boolean {
    let memo = this.#memo;
    if (memo === undefined) {
      memo = { cluster: new Map(), renderings: new Map(), rendered: new Map(), differ: new Set() };
      this.#memo = memo;
    }
    const look = new Set<string>();
    for (const infra of changedKeys(memo.renderings, last.byInfra)) {
      const before = dnsOf(memo.renderings.get(infra));
      if (before !== undefined) {
        memo.rendered.delete(before[0]);
        look.add(before[0]);
      }
      const after = dnsOf(last.byInfra.get(infra));
      if (after !== undefined) {
        memo.rendered.set(...after);
        look.add(after[0]);
      }
    }
    for (const key of changedKeys(memo.cluster, cluster)) look.add(key);
    for (const key of look) {
      const data = cluster.get(key);
      const files = memo.rendered.get(key);
      if (data === undefined || isEmpty(data) || (files !== undefined && sameData(data, files)))
        memo.differ.delete(key);
      else memo.differ.add(key);
    }
    memo.cluster = cluster;
    memo.renderings = last.byInfra;
    return memo.differ.size === 0;
  }
}

/** The DNS ConfigMap a rendering renders ("<namespace>/<name>") and its files. */
function dnsOf(r: RenderedInfra | undefined): [string, Readonly<Record<string, string>>] | undefined {
  const dns = r?.topology.children.dns;
  if (dns === undefined || r?.coreDns === undefined) return undefined;
  return [`${dns.metadata.namespace}/${dns.metadata.name}`, r.coreDns];
}

function isEmpty(data: Readonly<Record<string, string>>): boolean {
  // The first key answers: no array of every key (one per zone file) per ConfigMap per snapshot.
  for (const key in data) if (Object.hasOwn(data, key)) return false;
  return true;
}
