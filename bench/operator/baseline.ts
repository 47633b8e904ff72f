// The baseline: the pure part of the operator's change→push path for the same cluster, with no
// API server, no watch and no reconcile — copy the watched maps (as ClusterWatcher.snapshot does),
// buildObserved, renderAll (reusing the previous outputs, as runOperator does), publishSnapshots
// into a SnapshotCache. What the operator's measured
// latency adds on top of this is the watch path (HTTP chunk → reflector → throttle) plus whatever
// else occupies its one event loop (reconcile passes, status writes, the xDS server).
import { renderAll, type Outputs } from "../../src/pipeline/outputs.js";
import { publishSnapshots } from "../../src/pipeline/snapshots.js";
import { DEFAULT_HOOKS_DIRECTORY } from "../../src/dhcp/render/index.js";
import { buildObserved, type DecodeCache, type RawObjects } from "../../src/watchers/kube/observed.js";
import { WATCHED_RESOURCES, type ResourceName } from "../../src/watchers/kube/resources.js";
import type { KubeObject } from "../../src/watchers/kube/rest.js";
import { KEA_CONFIG_TYPE_SPEC, KEA_CONFIG_TYPE_URL } from "../../src/xds/kea-config.js";
import { SnapshotCache } from "../../src/xds/cache/index.js";
import { clusterObjects, freshAddress, machineObject, type Scale } from "./scale.js";
import { monoMs, seeded } from "./stats.js";

const RESOURCE_OF: Readonly<Record<string, ResourceName>> = {
  Infra: "infras",
  InfraClusterAttachment: "attachments",
  HostedCluster: "hostedclusters",
  NodePool: "nodepools",
  Machine: "machines",
  NetworkAttachmentDefinition: "networkattachments",
  Service: "services",
  Namespace: "namespaces",
};

/** Timings (ms) of the pure path for one Machine address change each. */
export interface PureTimings {
  /** Map copies + buildObserved. */
  readonly observe: number[];
  readonly renderAll: number[];
  readonly publish: number[];
  /** The three together: change in the maps → new snapshot in the cache. */
  readonly total: number[];
  /** Groups whose snapshot changed per change (1 expected: the Infra's proxy). */
  readonly groupsChanged: number[];
}

const keyOf = (o: KubeObject): string => `${o.metadata?.namespace ?? ""}/${o.metadata?.name ?? ""}`;

/** Runs `changes` Machine address changes through the pure path (after one untimed warm-up render). */
export function purePath(scale: Scale, changes: number, seed = 7): PureTimings {
  const raw = new Map<ResourceName, Map<string, KubeObject>>(WATCHED_RESOURCES.map((r) => [r.name, new Map()]));
  for (const o of clusterObjects(scale)) {
    const kind = o["kind"];
    const r = typeof kind === "string" ? RESOURCE_OF[kind] : undefined;
    if (r !== undefined) raw.get(r)?.set(keyOf(o), o);
  }
  const cache = new SnapshotCache();
  cache.registerType(KEA_CONFIG_TYPE_URL, KEA_CONFIG_TYPE_SPEC);
  let changed = 0;
  cache.subscribe(() => {
    changed++;
  });
  const decodeCache: DecodeCache = new WeakMap();
  const quiet = { error: () => undefined };
  let seq = 0;
  let previous: Outputs | undefined;
  const pass = (): { observe: number; render: number; publish: number } => {
    const t0 = monoMs();
    const copy = Object.fromEntries([...raw].map(([k, v]) => [k, new Map(v)])) as unknown as RawObjects;
    const obs = buildObserved(copy, ++seq, decodeCache);
    const t1 = monoMs();
    // As the operator renders: DNS history and the previous outputs to reuse unchanged proxies from.
    const outputs = renderAll(obs.state, {
      kea: { hooksDirectory: DEFAULT_HOOKS_DIRECTORY },
      ...(previous === undefined ? {} : { previous: previous.files, reuse: previous }),
    });
    const t2 = monoMs();
    publishSnapshots(cache, outputs, quiet);
    const t3 = monoMs();
    previous = outputs;
    return { observe: t1 - t0, render: t2 - t1, publish: t3 - t2 };
  };
  pass();
  const out: PureTimings = { observe: [], renderAll: [], publish: [], total: [], groupsChanged: [] };
  const pick = seeded(seed);
  const used = new Map<number, number>();
  for (let n = 0; n < changes; n++) {
    const i = pick(scale.infras);
    const a = pick(scale.attachments);
    const m = pick(scale.machines);
    const fresh = used.get(i) ?? 0;
    used.set(i, fresh + 1);
    const o = machineObject(i, a, m, freshAddress(i, fresh), scale.realistic) as KubeObject;
    raw.get("machines")?.set(keyOf(o), o);
    changed = 0;
    const t = pass();
    out.observe.push(t.observe);
    out.renderAll.push(t.render);
    out.publish.push(t.publish);
    out.total.push(t.observe + t.render + t.publish);
    out.groupsChanged.push(changed);
  }
  return out;
}
