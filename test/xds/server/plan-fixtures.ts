// Snapshots and client states for the suites of src/xds/server/plan.ts: the proxy fixture rendered
// and cached (so versions and references are the cache's own), and TypeStates built by hand.
import { SnapshotCache } from "../../../src/xds/cache/index.js";
import type { CachedResource, Snapshot, TypeSnapshot } from "../../../src/xds/cache/snapshot.js";
import { checkEnvoySnapshot } from "../../../src/envoy/snapshot.js";
import { renderEnvoy } from "../../../src/envoy/render/index.js";
import type { EnvoyResources } from "../../../src/envoy/resources.js";
import type { AddressUpstream, DnsUpstream, ProxyModel } from "../../../src/model/types.js";
import type { Held } from "../../../src/xds/server/memory.js";
import type { TypeState } from "../../../src/xds/server/plan.js";
import { Subscription } from "../../../src/xds/server/subscription.js";
import { proxyModel, sampleEndpoints, type AttachmentSpec } from "../../envoy/proxy-fixture.js";
import { GROUP, publish, rendered } from "./fixtures.js";

/** The cached snapshot of a rendered configuration (a cache of its own). */
export function snapshotOf(resources: EnvoyResources): Snapshot {
  const cache = new SnapshotCache({ check: checkEnvoySnapshot });
  publish(cache, GROUP, resources);
  const snap = cache.getSnapshot(GROUP);
  if (snap === undefined) throw new Error("no snapshot");
  return snap;
}

/** The cached snapshot of some attachments. */
export function snapshotFor(
  attachments: readonly AttachmentSpec[],
  endpointsFor: (name: string) => AddressUpstream["endpoints"] = sampleEndpoints,
): Snapshot {
  return snapshotOf(rendered(attachments, endpointsFor));
}

/**
 * The cached snapshot of some attachments where the upstream `dnsName` is known by hostname only:
 * a LOGICAL_DNS cluster, which has no ClusterLoadAssignment (nothing over EDS).
 */
export function snapshotWithDns(attachments: readonly AttachmentSpec[], dnsName: string): Snapshot {
  const model = proxyModel(attachments, sampleEndpoints);
  const dns: DnsUpstream = {
    kind: "dns",
    name: dnsName,
    hostname: "lb.example.net",
    port: 443,
    connectTimeoutSeconds: 30,
    target: { service: "lb.example.net", namespace: undefined, port: 443 },
  };
  const withDns: ProxyModel = { ...model, upstreams: model.upstreams.map((u) => (u.name === dnsName ? dns : u)) };
  const r = renderEnvoy(withDns);
  if (!r.ok) throw new Error(r.errors.map((e) => e.message).join("\n"));
  return snapshotOf(r.resources);
}

/** One type of a snapshot; throws when the snapshot has none. */
export function typeOf(snap: Snapshot, typeUrl: string): TypeSnapshot {
  const t = snap.types.get(typeUrl);
  if (t === undefined) throw new Error(`no ${typeUrl} in the snapshot`);
  return t;
}

/** What a client holds of these resources, as the test sees it: each at its own version. */
export function holdingAll(resources: Iterable<CachedResource>): Map<string, Held> {
  return new Map([...resources].map((r) => [r.name, { version: r.version, res: r }]));
}

/** A type's state before its first response: holding `held`, nothing sent on this stream yet. */
export function typeState(
  typeUrl: string,
  subscription: Subscription,
  held: ReadonlyMap<string, Held> = new Map(),
): TypeState {
  return {
    typeUrl,
    subscription,
    held,
    acked: held,
    kept: new Map(),
    inflight: undefined,
    lastNonce: "",
    lastVersion: "",
    firstPending: true,
    resyncOnly: false,
    subscriptionChanged: true,
    narrowed: false,
    subscribedAt: 0,
    quietSnap: undefined,
    quietHeld: undefined,
    quietSub: undefined,
    addedSinceQuiet: undefined,
  };
}

/** A SotW first request's subscription (an empty one is the wildcard). */
export const sotw = (names: readonly string[]): Subscription => Subscription.NONE.sotw(names, true, true).subscription;
/** A Delta first request's subscription (an empty one is the wildcard). */
export const delta = (names: readonly string[]): Subscription =>
  Subscription.NONE.delta(names, [], true, true).subscription;

/** The names a map holds, sorted. */
export const keysOf = (m: ReadonlyMap<string, unknown>): string[] => [...m.keys()].sort();
/** The names of resources, sorted. */
export const namesOf = (rs: Iterable<{ readonly name: string }>): string[] => [...rs].map((r) => r.name).sort();
