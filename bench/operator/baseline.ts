// The baseline: the pure part of the operator's change→push path for the same cluster, with no
// API server, no watch and no reconcile — as ClusterWatcher.snapshot does, copy the changed map and
// buildObserved after the previous snapshot (so it carries the keyed change); as runOperator does,
// renderAll continuing from the previous outputs with those changes and no DNS file map (the
// cluster's DNS ConfigMaps hold what it rendered); publishSnapshots into a SnapshotCache, passing
// the previous publish as `oooi operator` does. What the operator's measured
// latency adds on top of this is the watch path (HTTP chunk → reflector → throttle) plus whatever
// else occupies its one event loop (reconcile passes, status writes, the xDS server).
import { renderAll, type Outputs } from "../../src/pipeline/outputs.js";
import { publishSnapshots } from "../../src/pipeline/snapshots.js";
import { DEFAULT_HOOKS_DIRECTORY } from "../../src/dhcp/render/index.js";
import { buildObserved, type DecodeCache, type Observed, type RawObjects } from "../../src/watchers/kube/observed.js";
import { WATCHED_RESOURCES, type ResourceName } from "../../src/watchers/kube/resources.js";
import type { KubeObject } from "../../src/kube/rest.js";
import { KEA_CONFIG_TYPE_SPEC, KEA_CONFIG_TYPE_URL } from "../../src/dhcp/kea-config-resource.js";
import { SnapshotCache } from "../../src/xds/cache/index.js";
import { clusterObjects, freshAddress, machineObject, type Scale } from "./scale.js";
import { monoMs, seeded } from "./stats.js";
import { checkEnvoySnapshot } from "../../src/envoy/snapshot.js";

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

/** Untimed changes before the timed ones. */
const WARM_UP = 5;

/** Runs `changes` Machine address changes through the pure path (after an untimed render and WARM_UP changes). */
export function purePath(scale: Scale, changes: number, seed = 7): PureTimings {
  const raw = new Map<ResourceName, Map<string, KubeObject>>(WATCHED_RESOURCES.map((r) => [r.name, new Map()]));
  for (const o of clusterObjects(scale)) {
    const kind = o["kind"];
    const r = typeof kind === "string" ? RESOURCE_OF[kind] : undefined;
    if (r !== undefined) raw.get(r)?.set(keyOf(o), o);
  }
  const cache = new SnapshotCache({ check: checkEnvoySnapshot });
  cache.registerType(KEA_CONFIG_TYPE_URL, KEA_CONFIG_TYPE_SPEC);
  let changed = 0;
  cache.subscribe(() => {
    changed++;
  });
  const decodeCache: DecodeCache = new WeakMap();
  const quiet = { error: () => undefined };
  let seq = 0;
  let previous: Outputs | undefined;
  let observed: Observed | undefined;
  const pass = (
    dirty: ReadonlyMap<ResourceName, ReadonlySet<string>>,
  ): { observe: number; render: number; publish: number } => {
    const t0 = monoMs();
    const copy = Object.fromEntries(
      [...raw].map(([k, v]) => [k, observed === undefined || dirty.has(k) ? new Map(v) : observed.raw[k]]),
    ) as unknown as RawObjects;
    const obs = buildObserved(copy, ++seq, decodeCache, observed === undefined ? undefined : { observed, dirty });
    const t1 = monoMs();
    const outputs = renderAll(obs.state, {
      kea: { hooksDirectory: DEFAULT_HOOKS_DIRECTORY },
      now: Date.now(),
      ...(previous === undefined ? {} : { reuse: previous, lastGood: previous.lastGood, changes: obs.changes }),
    });
    const t2 = monoMs();
    publishSnapshots(cache, outputs, quiet, previous);
    const t3 = monoMs();
    previous = outputs;
    observed = obs;
    return { observe: t1 - t0, render: t2 - t1, publish: t3 - t2 };
  };
  pass(new Map());
  const out: PureTimings = { observe: [], renderAll: [], publish: [], total: [], groupsChanged: [] };
  const pick = seeded(seed);
  const used = new Map<number, number>();
  // The first WARM_UP changes are not timed: the operator measured has run hundreds of renderings by then.
  for (let n = -WARM_UP; n < changes; n++) {
    const i = pick(scale.infras);
    const a = pick(scale.attachments);
    const m = pick(scale.machines);
    const fresh = used.get(i) ?? 0;
    used.set(i, fresh + 1);
    const o = machineObject(i, a, m, freshAddress(i, fresh), scale.realistic) as KubeObject;
    raw.get("machines")?.set(keyOf(o), o);
    changed = 0;
    const t = pass(new Map([["machines", new Set([keyOf(o)])]]));
    if (n < 0) continue;
    out.observe.push(t.observe);
    out.renderAll.push(t.render);
    out.publish.push(t.publish);
    out.total.push(t.observe + t.render + t.publish);
    out.groupsChanged.push(changed);
  }
  return out;
}
