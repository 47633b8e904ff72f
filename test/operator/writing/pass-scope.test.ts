// A reconcile pass that looks only at what changed since the pass before (src/operator/writing/
// pass-scope.ts) must decide what a pass over every object decides. Two Reconcilers run side by
// side on two fake API servers seeded alike — one walks everything on every pass (fullPassMs 0),
// the other never again after its first — while the same careless and hostile edits land on both
// between passes: children deleted or hand-edited, a label removed, a stray object wearing our
// labels, a worker moving, an Infra edited, an attachment deleted, a write refused. After every pass
// both clusters must hold the same objects, and the scoped side must have made passes that looked
// only at what changed.
import { afterEach, describe, expect, it } from "vitest";
import fc from "fast-check";
import { KubeRest, type KubeObject } from "../../../src/kube/rest.js";
import { Metrics } from "../../../src/metrics/index.js";
import { INFRA_LABEL, type DesiredObject } from "../../../src/operator/desired/objects.js";
import type { DesiredState } from "../../../src/operator/desired/index.js";
import { DesiredKeys, passScope, type PassMemory } from "../../../src/operator/writing/pass-scope.js";
import { keaSccBindingName } from "../../../src/operator/desired/scc.js";
import { APPLIED_HASH_ANNOTATION as APPLIED_HASH } from "../../../src/operator/writing/applied.js";
import { operatorSettings } from "../../../src/operator/desired/settings.js";
import { OperatorRendering } from "../../../src/operator/inputs/rendering.js";
import { OPERATOR_METRICS, type OperatorMetrics } from "../../../src/operator/process/metrics.js";
import { Reconciler } from "../../../src/operator/writing/reconcile.js";
import { ensureCa, type OperatorCa } from "../../../src/pki/store.js";
import { MANAGED_BY, MANAGED_BY_LABEL } from "../../../src/api/labels.js";
import {
  buildObserved,
  type DecodeCache,
  type Observed,
  type RawObjects,
} from "../../../src/watchers/kube/observed.js";
import { WATCHED_RESOURCES, type ResourceName } from "../../../src/watchers/kube/resources.js";
import { SnapshotMap } from "../../../src/watchers/kube/snapshot-map.js";
import { kubeConfigFor, type FakeApiServer } from "../../support/fake-apiserver/index.js";
import type { JsonObject, ResourceKind } from "../../support/fake-apiserver/types.js";
import { ManualClock } from "../../support/manual-clock.js";
import {
  counter,
  FakeDataPlane,
  leaderReconciler,
  markDeploymentsAvailable,
  seededFake,
  storedList,
} from "../support.js";

/** A second Infra, in its own namespace and VLAN, with no attachment: an Infra a change elsewhere must not disturb. */
const SECOND_INFRA: readonly JsonObject[] = [
  {
    apiVersion: "k8s.cni.cncf.io/v1",
    kind: "NetworkAttachmentDefinition",
    metadata: { name: "vlan200", namespace: "default" },
    spec: {
      config: JSON.stringify({ cniVersion: "0.3.1", name: "vlan200", type: "bridge", bridge: "br-vlan200", vlan: 200 }),
    },
  },
  {
    apiVersion: "hostedcluster.densityops.com/v1alpha1",
    kind: "Infra",
    metadata: { name: "tenant-b", namespace: "default" },
    spec: {
      networkConfig: {
        cidr: "127.0.9.0/24",
        gateway: "127.0.9.1",
        networkAttachmentDefinition: "vlan200",
        dnsServers: ["127.0.0.53"],
      },
      infraComponents: {
        dhcp: { serverIP: "127.0.9.2", rangeStart: "127.0.9.100", rangeEnd: "127.0.9.199", leaseTime: "1h" },
        dns: { serverIP: "127.0.9.3" },
        proxy: { serverIP: "127.0.9.4" },
      },
    },
  },
];

/** Metadata the API server sets, which differs between the two fakes however alike their objects. */
const SERVER_SET = new Set(["resourceVersion", "uid", "creationTimestamp", "managedFields"]);

/** Every stored object of a kind, as the watch would list it. */
function listed(fake: FakeApiServer, kind: ResourceKind): KubeObject[] {
  return fake.store.list(kind, undefined, {}).items;
}

/** One side: a fake API server, a watch stand-in building snapshots from it, a rendering and a Reconciler. */
class Side {
  readonly metrics: OperatorMetrics = new Metrics().recorder(OPERATOR_METRICS);
  /** What the data planes answer, each node group steered by the edits. */
  readonly dataPlane = new FakeDataPlane();
  readonly reconciler: Reconciler;
  readonly #rendering: OperatorRendering;
  #views = new Map<ResourceName, SnapshotMap<KubeObject>>();
  #live = new Map<ResourceName, Map<string, KubeObject>>();
  #observed: Observed | undefined;
  readonly #decoded: DecodeCache = new WeakMap();

  constructor(
    readonly fake: FakeApiServer,
    fullPassMs: number,
    readonly clock = new ManualClock(),
    pki?: OperatorCa,
  ) {
    this.reconciler = leaderReconciler(fake.url, {
      ...(pki === undefined ? {} : { pki }),
      // Kea's SCC bound by the operator: a RoleBinding it cannot watch, checked by a read when it must write.
      settings: operatorSettings({ namespace: "oooi-system", keaScc: "bind" }),
      dataPlane: this.dataPlane,
      clock,
      metrics: this.metrics,
      fullPassMs,
      // The side that walks everything computes its statuses in slices of 3 (many turns a pass).
      ...(fullPassMs === 0 ? { statusSlice: 3 } : {}),
    });
    this.#rendering = new OperatorRendering({
      kea: {},
      dnsFiles: (o) => this.reconciler.dnsFiles(o),
      clock: this.clock,
    });
  }

  /**
   * What a watch would have delivered by now, as the reflectors build it: an object whose
   * resourceVersion did not move keeps its identity, and each view shares the one before.
   */
  snapshot(): Observed {
    const dirty = new Map<ResourceName, ReadonlySet<string>>();
    const raw = {} as Record<ResourceName, SnapshotMap<KubeObject>>;
    for (const r of WATCHED_RESOURCES) {
      const kind = this.fake.store.kindByGvk(r.group === "" ? r.version : `${r.group}/${r.version}`, r.kind);
      const before = this.#live.get(r.name) ?? new Map<string, KubeObject>();
      const live = new Map<string, KubeObject>();
      const changed = new Set<string>();
      const [labelKey, labelValue] = (r.labelSelector ?? "").split("=");
      for (const o of kind === undefined ? [] : listed(this.fake, kind)) {
        if (labelKey !== undefined && labelKey !== "" && o.metadata?.labels?.[labelKey] !== labelValue) continue;
        const key = `${o.metadata?.namespace ?? ""}/${o.metadata?.name ?? ""}`;
        const was = before.get(key);
        if (was?.metadata?.resourceVersion === o.metadata?.resourceVersion && was !== undefined) live.set(key, was);
        else {
          live.set(key, r.project(o));
          changed.add(key);
        }
      }
      for (const key of before.keys()) if (!live.has(key)) changed.add(key);
      this.#live.set(r.name, live);
      const view = this.#views.get(r.name);
      const next = view === undefined ? SnapshotMap.copy(live) : view.next(live, changed);
      this.#views.set(r.name, next);
      raw[r.name] = next;
      dirty.set(r.name, changed);
    }
    const previous = this.#observed;
    this.#observed = buildObserved(
      raw,
      (previous?.seq ?? 0) + 1,
      this.#decoded,
      previous === undefined ? undefined : { observed: previous, dirty },
    );
    return this.#observed;
  }

  /** One pass over what the watch holds now; a refused write shows as a thrown error, as in the pass loop. */
  async pass(): Promise<string> {
    const observed = this.snapshot();
    try {
      const r = await this.reconciler.reconcile(observed, this.#rendering.render(observed));
      return `applied ${String(r.applied)}, deleted ${String(r.deleted)}, finalizers ${String(r.finalizers)}, statuses ${String(r.statuses)}`;
    } catch (e) {
      return `failed: ${(e as Error).message}`;
    }
  }

  /** The oooi_object_ready series, sorted. */
  async ready(): Promise<string[]> {
    return (await this.metrics.render())
      .split("\n")
      .filter((l) => l.startsWith("oooi_object_ready{"))
      .sort();
  }

  /**
   * The cluster as the operator left it, comparable across the two fakes: uids named after their
   * objects, server-set versions and times left out.
   */
  cluster(): unknown {
    const objects: KubeObject[] = [];
    for (const kind of this.fake.store.kinds()) {
      if (kind.kind === "Event" || kind.kind === "Lease") continue;
      objects.push(...listed(this.fake, kind));
    }
    const uids = new Map(
      objects.map((o) => [
        o.metadata?.uid ?? "",
        `${String(o["kind"])}/${o.metadata?.namespace ?? ""}/${o.metadata?.name ?? ""}`,
      ]),
    );
    const text = JSON.stringify(
      objects.map((o) => {
        const metadata = Object.fromEntries(
          Object.entries(o.metadata ?? {})
            .filter(([k]) => !SERVER_SET.has(k))
            // Stamped by each fake's own clock: that it is set is what both must agree on.
            .map(([k, v]) => [k, k === "deletionTimestamp" ? "set" : v]),
        ) as { annotations?: Record<string, string> };
        // The applied hash covers the owner's uid: equal content (uids named) is what is compared.
        const annotations = Object.entries(metadata.annotations ?? {}).filter(([k]) => k !== APPLIED_HASH);
        return { ...o, metadata: { ...metadata, annotations: Object.fromEntries(annotations) } };
      }),
    );
    return JSON.parse(
      text.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, (u) => uids.get(u) ?? u),
    );
  }
}

type Tenant = "tenant-vlan" | "tenant-b";
const tenants = fc.constantFrom<Tenant>("tenant-vlan", "tenant-b");
const namespaceOf = (t: Tenant): string => (t === "tenant-b" ? "default" : "clusters");

/** An edit a user (or another controller) makes between two passes, on both clusters alike. */
type Edit =
  | { readonly op: "delete-child" | "edit-child" | "unlabel-child"; readonly pick: number }
  | { readonly op: "stray"; readonly n: number; readonly infra: Tenant }
  | { readonly op: "move-worker"; readonly pick: number; readonly octet: number }
  | { readonly op: "edit-infra"; readonly octet: number }
  | { readonly op: "break-infra" | "mend-infra"; readonly infra: Tenant }
  | { readonly op: "internal-clients"; readonly on: boolean }
  | { readonly op: "second-infra"; readonly on: boolean }
  | { readonly op: "foreign-rolebinding"; readonly on: boolean; readonly infra: Tenant }
  | { readonly op: "delete-attachment"; readonly pick: number }
  | { readonly op: "refuse-next-write"; readonly code: 500 | 403 }
  | { readonly op: "deployments-available" }
  | { readonly op: "nack"; readonly infra: Tenant; readonly plane: "proxy" | "dhcp"; readonly on: boolean }
  | { readonly op: "data-planes-synced"; readonly on: boolean }
  | { readonly op: "clobber-status"; readonly pick: number }
  | { readonly op: "nothing" };

const edits: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({ op: fc.constantFrom("delete-child", "edit-child", "unlabel-child"), pick: fc.nat() }),
  fc.record({ op: fc.constant("stray"), n: fc.nat(3), infra: tenants }),
  fc.record({ op: fc.constant("move-worker"), pick: fc.nat(), octet: fc.integer({ min: 10, max: 90 }) }),
  fc.record({ op: fc.constant("edit-infra"), octet: fc.integer({ min: 4, max: 9 }) }),
  fc.record({ op: fc.constantFrom("break-infra", "mend-infra"), infra: tenants }),
  fc.record({ op: fc.constant("internal-clients"), on: fc.boolean() }),
  fc.record({ op: fc.constant("second-infra"), on: fc.boolean() }),
  fc.record({ op: fc.constant("foreign-rolebinding"), on: fc.boolean(), infra: tenants }),
  fc.record({ op: fc.constant("delete-attachment"), pick: fc.nat() }),
  // 403: the namespace lacks the operator's RoleBinding, which the status then names.
  fc.record({ op: fc.constant("refuse-next-write"), code: fc.constantFrom(500 as const, 403 as const) }),
  fc.constant({ op: "deployments-available" } as const),
  fc.record({ op: fc.constant("nack"), infra: tenants, plane: fc.constantFrom("proxy", "dhcp"), on: fc.boolean() }),
  fc.record({ op: fc.constant("data-planes-synced"), on: fc.boolean() }),
  fc.record({ op: fc.constant("clobber-status"), pick: fc.nat() }),
  fc.constant({ op: "nothing" } as const),
);

/** "<kind>/<namespace>/<name>" of a stored object. */
const refOf = (o: KubeObject): string =>
  `${String(o["kind"])}/${o.metadata?.namespace ?? ""}/${o.metadata?.name ?? ""}`;

/** The objects the operator manages with their kinds, in a stable order. */
function managed(fake: FakeApiServer): [ResourceKind, KubeObject][] {
  const out: [ResourceKind, KubeObject, string][] = [];
  for (const kind of fake.store.kinds())
    for (const o of listed(fake, kind))
      if (o.metadata?.labels?.[MANAGED_BY_LABEL] === MANAGED_BY && o.metadata.deletionTimestamp === undefined)
        out.push([kind, o, `${kind.kind}/${o.metadata.namespace ?? ""}/${o.metadata.name ?? ""}`]);
  return out.sort((a, b) => (a[2] < b[2] ? -1 : a[2] > b[2] ? 1 : 0)).map(([k, o]) => [k, o]);
}

function edit({ fake, dataPlane }: Side, e: Edit): void {
  switch (e.op) {
    case "nack": {
      const group = `${namespaceOf(e.infra)}/${e.infra}-${e.plane}`;
      dataPlane.update((d) => {
        if (e.on) d.nacks.set(group, `node-1: rejected by the ${e.plane}`);
        else d.nacks.delete(group);
      });
      return;
    }
    case "clobber-status": {
      // Another writer empties the status of one of the objects the operator writes a status on.
      const withStatus = fake.store
        .kinds()
        .filter((k) => k.group === "hostedcluster.densityops.com")
        .flatMap((k) => listed(fake, k).map((o) => ({ ...o, apiVersion: `${k.group}/${k.version}`, kind: k.kind })))
        .sort((a, b) => (refOf(a) < refOf(b) ? -1 : refOf(a) > refOf(b) ? 1 : 0));
      const o = withStatus[e.pick % Math.max(1, withStatus.length)];
      if (o !== undefined) fake.seed({ ...o, status: { conditions: [] } } as unknown as JsonObject);
      return;
    }
    case "data-planes-synced":
      dataPlane.update((d) => {
        d.syncedAll = e.on;
      });
      return;
    case "delete-child":
    case "edit-child":
    case "unlabel-child": {
      const all = managed(fake);
      const [kind, found] = all[e.pick % Math.max(1, all.length)] ?? [];
      if (kind === undefined || found === undefined) return;
      const o = {
        ...found,
        apiVersion: kind.group === "" ? kind.version : `${kind.group}/${kind.version}`,
        kind: kind.kind,
      };
      const { namespace = "", name = "" } = o.metadata ?? {};
      if (e.op === "delete-child") fake.store.delete(kind, namespace, name, {});
      else if (e.op === "edit-child") {
        const annotations = { ...o.metadata?.annotations, "edited-by": "hand" };
        const labels = { ...o.metadata?.labels, "edited-by": "hand" };
        fake.seed({ ...o, metadata: { ...o.metadata, annotations, labels }, spec: {} });
      } else {
        const labels = Object.fromEntries(Object.entries(o.metadata?.labels ?? {}).filter(([k]) => k !== INFRA_LABEL));
        fake.seed({ ...o, metadata: { ...o.metadata, labels } });
      }
      return;
    }
    case "stray": {
      const namespace = namespaceOf(e.infra);
      fake.seed({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: {
          name: `stray-${String(e.n)}`,
          namespace,
          labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [INFRA_LABEL]: e.infra },
        },
        data: { left: "behind" },
      });
      return;
    }
    case "move-worker": {
      const machines = storedList(fake, "cluster.x-k8s.io/v1beta1", "Machine");
      const m = machines[e.pick % Math.max(1, machines.length)];
      if (m === undefined) return;
      const status = {
        ...(m["status"] as JsonObject | undefined),
        addresses: [{ type: "InternalIP", address: `127.0.8.${String(e.octet)}` }],
      };
      fake.seed({ ...m, status });
      return;
    }
    case "edit-infra": {
      const [infra] = storedList(fake, "hostedcluster.densityops.com/v1alpha1", "Infra", "default");
      if (infra === undefined) return;
      const spec = structuredClone(infra["spec"]) as { infraComponents: { proxy: { serverIP: string } } };
      spec.infraComponents.proxy.serverIP = `127.0.9.${String(e.octet)}`;
      fake.seed({ ...infra, spec });
      return;
    }
    case "break-infra":
    case "mend-infra": {
      const [infra] = storedList(fake, "hostedcluster.densityops.com/v1alpha1", "Infra", namespaceOf(e.infra));
      if (infra === undefined) return;
      const spec = structuredClone(infra["spec"]) as { networkConfig: { gateway: string } };
      const subnet = e.infra === "tenant-b" ? "127.0.9" : "127.0.8";
      spec.networkConfig.gateway = e.op === "break-infra" ? "10.0.0.1" : `${subnet}.1`;
      fake.seed({ ...infra, spec });
      return;
    }
    case "second-infra": {
      // tenant-b deleted (its children go with it, by owner) or declared again.
      const kind = fake.store.kindByGvk("hostedcluster.densityops.com/v1alpha1", "Infra");
      const infra = SECOND_INFRA[1];
      if (kind === undefined || infra === undefined) return;
      const there = fake.store.has(kind, "default", "tenant-b");
      if (e.on && !there) fake.seed(infra);
      if (!e.on && there) fake.store.delete(kind, "default", "tenant-b", {});
      return;
    }
    case "internal-clients": {
      // A Namespace relabelled: the proxy's NetworkPolicy selects by this label itself, so nothing the
      // operator writes follows — a change to a resource no pass scopes by.
      const label = "hostedcluster.densityops.com/internal-client";
      const ns = (storedList(fake, "v1", "Namespace") as JsonObject[]).find(
        (n) => (n["metadata"] as { name?: string }).name === "clusters-beta",
      );
      if (ns === undefined) return;
      const metadata = ns["metadata"] as { labels?: Record<string, string> };
      const labels = Object.fromEntries(Object.entries(metadata.labels ?? {}).filter(([k]) => k !== label));
      fake.seed({
        ...ns,
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { ...metadata, labels: e.on ? { ...labels, [label]: "true" } : labels },
      });
      return;
    }
    case "foreign-rolebinding": {
      // Someone else's RoleBinding under the name the operator would give Kea's: left alone, reported on the Infra.
      const name = keaSccBindingName(e.infra);
      const namespace = namespaceOf(e.infra);
      const kind = fake.store.kindByGvk("rbac.authorization.k8s.io/v1", "RoleBinding");
      if (kind === undefined) return;
      const ours = fake.store.has(kind, namespace, name)
        ? (fake.store.get(kind, namespace, name).metadata as { labels?: Record<string, string> } | undefined)?.labels?.[
            MANAGED_BY_LABEL
          ] === MANAGED_BY
        : false;
      if (!e.on) {
        if (fake.store.has(kind, namespace, name) && !ours) fake.store.delete(kind, namespace, name, {});
        return;
      }
      fake.seed({
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name, namespace },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "view" },
        subjects: [{ kind: "User", name: "someone" }],
      });
      return;
    }
    case "delete-attachment": {
      const attachments = storedList(fake, "hostedcluster.densityops.com/v1alpha1", "InfraClusterAttachment");
      const a = attachments[e.pick % Math.max(1, attachments.length)];
      const kind = fake.store.kindByGvk("hostedcluster.densityops.com/v1alpha1", "InfraClusterAttachment");
      if (a === undefined || kind === undefined) return;
      const m = (a.metadata ?? {}) as { namespace?: string; name?: string };
      fake.store.delete(kind, m.namespace ?? "", m.name ?? "", {});
      return;
    }
    case "refuse-next-write":
      fake.failNext(1, { match: { verb: ["patch", "delete"] }, code: e.code });
      return;
    case "deployments-available":
      markDeploymentsAvailable(fake);
      return;
    case "nothing":
      return;
  }
}

const sides: Side[] = [];
afterEach(async () => {
  await Promise.all(sides.splice(0).map((s) => s.fake.stop()));
});

async function pair(): Promise<[Side, Side]> {
  const make = async (fullPassMs: number): Promise<Side> => {
    const fake = await seededFake();
    for (const o of SECOND_INFRA) fake.seed(o);
    const side = new Side(fake, fullPassMs);
    sides.push(side);
    return side;
  };
  return [await make(0), await make(Number.POSITIVE_INFINITY)];
}

describe("a reconcile pass scoped to what changed", () => {
  it("leaves the cluster as a pass over every object does, after every edit", async () => {
    let scoped = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(edits, { minLength: 1, maxLength: 25 }), async (script) => {
        const [full, changed] = await pair();
        try {
          expect(await changed.pass()).toBe(await full.pass());
          expect(changed.cluster()).toEqual(full.cluster());
          for (const [i, e] of script.entries()) {
            edit(full, e);
            edit(changed, e);
            const said = await full.pass();
            expect(await changed.pass(), `pass after edit ${String(i)} (${e.op})`).toBe(said);
            expect(changed.cluster(), `cluster after edit ${String(i)} (${e.op})`).toEqual(full.cluster());
            expect(await changed.ready(), `oooi_object_ready after edit ${String(i)} (${e.op})`).toEqual(
              await full.ready(),
            );
          }
          scoped += await counter(changed.metrics, "oooi_reconcile_scope_total", 'scope="changed"');
        } finally {
          await Promise.all(sides.splice(0).map((s) => s.fake.stop()));
        }
      }),
      {
        numRuns: 60,
        examples: [
          // Another writer empties each status in turn: the pass sees the cached copy change.
          [Array.from({ length: 10 }, (_, pick) => ({ op: "clobber-status", pick }) as const)],
          // An object's Infra label removed, then the object deleted: no label says whose it was, but
          // the Infra that desires it looks again.
          [
            [
              { op: "delete-attachment", pick: 0 },
              { op: "unlabel-child", pick: 1604074438 },
              { op: "delete-child", pick: 472338899 },
            ],
          ],
          // A stray object wearing an Infra's labels while that Infra is gone: pruned once it is back.
          [
            [
              { op: "second-infra", on: false },
              { op: "stray", n: 0, infra: "tenant-b" },
              { op: "second-infra", on: true },
            ],
          ],
          // Someone else's RoleBinding already there when the Infra is declared again: the conflict is
          // found on every pass (the Infra stays unsettled), so its status keeps saying so.
          [
            [
              { op: "second-infra", on: false },
              { op: "foreign-rolebinding", on: true, infra: "tenant-b" },
              { op: "second-infra", on: true },
              { op: "deployments-available" },
              { op: "nothing" },
              { op: "foreign-rolebinding", on: false, infra: "tenant-b" },
              { op: "nothing" },
            ],
          ],
        ],
      },
    );
    expect(scoped, "passes that looked only at what changed").toBeGreaterThan(0);
  }, 240_000);

  it("drops an object's oooi_object_ready once it is gone, and sets it again once it is back", async () => {
    for (const side of await pair()) {
      const series = async (): Promise<string[]> =>
        (await side.ready()).filter((l) => l.startsWith('oooi_object_ready{kind="Infra",namespace="default"'));
      await side.pass();
      const before = await series();
      expect(before).toHaveLength(1);
      edit(side, { op: "second-infra", on: false });
      await side.pass();
      expect(await series()).toEqual([]);
      edit(side, { op: "second-infra", on: true });
      await side.pass();
      expect(await series()).toEqual(before);
    }
  });
});

/** A desired object of `infra` ("<namespace>/<name>"). */
function object(kind: string, namespace: string, name: string, infra?: string): DesiredObject {
  return {
    apiVersion: "v1",
    kind,
    metadata: { name, namespace, labels: infra === undefined ? {} : { [INFRA_LABEL]: infra } },
  };
}

function rawWith(entries: Partial<Record<ResourceName, Map<string, KubeObject>>> = {}): RawObjects {
  return Object.fromEntries(
    WATCHED_RESOURCES.map((r) => [r.name, entries[r.name] ?? new Map<string, KubeObject>()]),
  ) as unknown as RawObjects;
}

const desiredOf = (
  infras: Record<string, readonly DesiredObject[]>,
  crossNamespace: readonly DesiredObject[] = [],
): DesiredState => ({
  infras: Object.entries(infras).map(([key, objects]) => {
    const [namespace = "", name = ""] = key.split("/");
    return { infra: { kind: "Infra", namespace, name }, objects };
  }),
  crossNamespace,
  problems: [],
});

describe("a full pass", () => {
  it("reads each client certificate Secret on a full pass only, or when its Infra changed", async () => {
    const fake = await seededFake();
    for (const o of SECOND_INFRA) fake.seed(o);
    const clock = new ManualClock();
    const pki = await ensureCa(new KubeRest(kubeConfigFor(fake.url)), "oooi-system", clock.now());
    const side = new Side(fake, 30_000, clock, pki);
    sides.push(side);
    const reads = (): number => fake.requests.count({ verb: "get", resource: "secrets" });
    const counted = async (): Promise<number> => {
      const before = reads();
      await side.pass();
      return reads() - before;
    };
    /** Passes until one writes nothing: the writes of each come back as changes to the next. */
    const settle = async (): Promise<void> => {
      for (let i = 0; i < 5; i++)
        if ((await side.pass()).startsWith("applied 0, deleted 0, finalizers 0, statuses 0")) return;
      throw new Error("did not settle");
    };
    // Two Infras, each with a ProxyServer and a DHCPServer.
    expect(await counted(), "the first pass is full").toBe(4);
    await settle();
    expect(await counted(), "nothing changed").toBe(0);
    edit(side, { op: "edit-infra", octet: 7 });
    expect(await counted(), "tenant-b changed").toBe(2);
    await settle();
    expect(await counted(), "nothing changed").toBe(0);
    clock.advance(30_000);
    expect(await counted(), "30 s after the last full pass").toBe(4);
    expect(await counted(), "nothing changed").toBe(0);
    // A pass that failed leaves no memory: the next one walks everything.
    edit(side, { op: "edit-infra", octet: 8 });
    fake.failNext(1, { match: { verb: "patch" } });
    expect(await side.pass()).toMatch(/^failed/);
    expect(await counted(), "after a failed pass").toBe(4);
  });
});

describe("DesiredKeys", () => {
  it("holds the key of every desired object, however Infras' objects come, change and go", () => {
    const keys = new DesiredKeys();
    const one = [object("ConfigMap", "ns", "x", "a"), object("Service", "ns", "y", "a")];
    const two = [object("ConfigMap", "ns", "x", "b")];
    const has = (desired: DesiredState): string[] => {
      keys.update(desired);
      return ["ConfigMap/ns/x", "Service/ns/y"].filter((key) => keys.has(key));
    };
    expect(has(desiredOf({ "ns/a": one }))).toEqual(["ConfigMap/ns/x", "Service/ns/y"]);
    // Two Infras desiring one key (their objects' names start with the Infra's, so it should not
    // happen): the key is not lost while either still desires it, whichever leaves first.
    expect(has(desiredOf({ "ns/a": one, "ns/b": two }))).toEqual(["ConfigMap/ns/x", "Service/ns/y"]);
    expect(has(desiredOf({ "ns/a": one }))).toEqual(["ConfigMap/ns/x", "Service/ns/y"]);
    expect(keys.owners("ConfigMap/ns/x")).toEqual(["ns/a"]);
    expect(has(desiredOf({ "ns/a": one, "ns/b": two }))).toEqual(["ConfigMap/ns/x", "Service/ns/y"]);
    expect(keys.owners("ConfigMap/ns/x")).toEqual(["ns/a", "ns/b"]);
    expect(has(desiredOf({ "ns/b": two }))).toEqual(["ConfigMap/ns/x"]);
    expect(has(desiredOf({ "ns/b": [] }))).toEqual([]);
    expect(has(desiredOf({}, [object("Service", "ns", "y")]))).toEqual(["Service/ns/y"]);
  });

  it("patched at the Infras whose objects moved, answers as one updated with the last state alone", () => {
    // Keys whose string order is not their (namespace, name) order: "n-b/x" < "n/x".
    const infraKeys = ["n/x", "n-b/x", "n/y", "o/a"];
    /** Each Infra's objects in variant v (0: none desired); the same variant is the same array. */
    const variants = new Map<string, readonly DesiredObject[]>();
    const objectsOf = (key: string, v: number): readonly DesiredObject[] => {
      const id = `${key} ${v}`;
      let objects = variants.get(id);
      if (objects === undefined) {
        const [namespace = "", name = ""] = key.split("/");
        // Variant 3 desires the ConfigMap of variant 1 under its Infra's neighbour's name: two owners of one key.
        objects =
          v === 3
            ? [object("ConfigMap", "shared", "same", name)]
            : [
                object("ConfigMap", namespace, `${name}-dns`, name),
                ...(v === 2 ? [object("Service", namespace, `${name}-proxy`, name)] : []),
              ];
        variants.set(id, objects);
      }
      return objects;
    };
    const cross = [[], [object("NetworkPolicy", "cp", "allow-infrastructure")]] as const;
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.array(fc.nat(3), { minLength: 4, maxLength: 4 }), fc.nat(1)), {
          minLength: 1,
          maxLength: 20,
        }),
        (steps) => {
          const keys = new DesiredKeys();
          const infras = new Map<string, DesiredState["infras"][number]>();
          let last: { readonly of: readonly number[]; readonly desired: DesiredState } | undefined;
          for (const [vs, c] of steps) {
            // An Infra whose variant is unchanged keeps its very DesiredInfra, as desiredState does.
            const list = infraKeys
              .map((key, i) => ({ key, v: vs[i] ?? 0 }))
              .filter(({ v }) => v !== 0)
              .map(({ key, v }) => {
                const id = `${key} ${v}`;
                let d = infras.get(id);
                if (d === undefined) {
                  const [namespace = "", name = ""] = key.split("/");
                  d = { infra: { kind: "Infra", namespace, name }, objects: objectsOf(key, v) };
                  infras.set(id, d);
                }
                return d;
              })
              .sort((x, y) => {
                const [a, b] = [`${x.infra.namespace}/${x.infra.name}`, `${y.infra.namespace}/${y.infra.name}`];
                return a < b ? -1 : a > b ? 1 : 0;
              });
            const desired: DesiredState = { infras: list, crossNamespace: cross[c === 0 ? 0 : 1], problems: [] };
            const moved = keys.update(desired);
            const fresh = new DesiredKeys();
            fresh.update(desired);
            const every = [...variants.values(), ...cross]
              .flat()
              .map((o) => `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`);
            for (const key of every) {
              expect(keys.has(key), key).toBe(fresh.has(key));
              expect([...keys.owners(key)].sort(), key).toEqual([...fresh.owners(key)].sort());
            }
            // Exactly the Infras whose objects moved (and the cross-namespace objects) are named.
            const before = last?.of ?? [0, 0, 0, 0];
            const want = infraKeys.filter((_, i) => (before[i] ?? 0) !== (vs[i] ?? 0));
            expect([...moved.changed].filter((k) => k !== "").sort()).toEqual(want.sort());
            expect(moved.servableMoved).toBe(
              infraKeys.some((_, i) => ((before[i] ?? 0) === 0) !== ((vs[i] ?? 0) === 0)),
            );
            last = { of: vs, desired };
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("passScope", () => {
  const a = [object("ConfigMap", "ns-a", "a-dns", "a"), object("Service", "ns-a", "a-proxy", "a")];
  const b = [object("ConfigMap", "ns-b", "b-dns", "b")];
  const cross = [object("NetworkPolicy", "cp", "allow-infrastructure")];
  /** passScope after the desired objects moved from `before` to `desired`. */
  function scopeOf(
    last: PassMemory,
    raw: RawObjects,
    desired: DesiredState,
    held: ReadonlySet<string>,
    before: DesiredState = desiredOf({ "ns-a/a": a, "ns-b/b": b }, cross),
  ) {
    const keys = new DesiredKeys();
    keys.update(before);
    return passScope(last, raw, keys.update(desired), keys, held);
  }
  const memory = (over: Partial<PassMemory> = {}): PassMemory => ({
    raw: rawWith(),
    held: new Set(),
    unsettled: new Set(),
    status: undefined,
    ...over,
  });

  it("looks at nothing when nothing changed", () => {
    const s = scopeOf(memory(), rawWith(), desiredOf({ "ns-a/a": a, "ns-b/b": b }, cross), new Set());
    expect(s).toEqual({ infras: new Set(), crossNamespace: false, prune: [], attachments: new Set() });
  });

  it("looks at an Infra whose desired objects changed alone, and prunes what it no longer desires", () => {
    const fewer = [a[0] as DesiredObject];
    const s = scopeOf(memory(), rawWith(), desiredOf({ "ns-a/a": fewer, "ns-b/b": b }, cross), new Set());
    expect([...s.infras]).toEqual(["ns-a/a"]);
    expect(s.prune).toEqual([["services", "ns-a/a-proxy"]]);
  });

  it("prunes an object no longer desired while another kind keeps its name", () => {
    const renamed = [object("ConfigMap", "ns-a", "a-dns", "a"), object("Service", "ns-a", "a-dns", "a")];
    const s = scopeOf(memory(), rawWith(), desiredOf({ "ns-a/a": renamed, "ns-b/b": b }, cross), new Set());
    expect(s.prune).toEqual([["services", "ns-a/a-proxy"]]);
    // The ConfigMap dropped, the Service of the same name kept: the ConfigMap alone may be pruned —
    // also when it was deleted meanwhile (a changed object and one no longer desired: looked at once).
    const dropped = (raw: RawObjects) =>
      scopeOf(
        memory({ raw }),
        rawWith(),
        desiredOf({ "ns-a/a": [object("Service", "ns-a", "a-dns", "a")], "ns-b/b": b }, cross),
        new Set(),
        desiredOf({ "ns-a/a": renamed, "ns-b/b": b }, cross),
      ).prune;
    expect(dropped(rawWith())).toEqual([["configmaps", "ns-a/a-dns"]]);
    const deleted = rawWith({
      configmaps: new Map([["ns-a/a-dns", { metadata: { name: "a-dns", namespace: "ns-a" } }]]),
    });
    expect(dropped(deleted)).toEqual([["configmaps", "ns-a/a-dns"]]);
  });

  it("looks at the Infra that desires a changed live object, whatever its labels say; a stray is only pruned", () => {
    const was = { metadata: { name: "b-dns", namespace: "ns-b", labels: { [INFRA_LABEL]: "b" } } };
    const unlabelled = { metadata: { name: "b-dns", namespace: "ns-b", labels: {} } };
    const stray = { metadata: { name: "x", namespace: "ns-b", labels: { [INFRA_LABEL]: "b" } } };
    const desired = desiredOf({ "ns-a/a": a, "ns-b/b": b }, cross);
    const before = memory({ raw: rawWith({ configmaps: new Map([["ns-b/b-dns", was]]) }) });
    for (const now of [new Map([["ns-b/b-dns", unlabelled]]), new Map<string, KubeObject>()]) {
      const s = scopeOf(before, rawWith({ configmaps: now }), desired, new Set());
      expect([...s.infras]).toEqual(["ns-b/b"]);
      expect(s.prune).toEqual([["configmaps", "ns-b/b-dns"]]);
    }
    const s = scopeOf(memory(), rawWith({ configmaps: new Map([["ns-b/x", stray]]) }), desired, new Set());
    expect([...s.infras]).toEqual([]);
    expect(s.prune).toEqual([["configmaps", "ns-b/x"]]);
    const policy = { metadata: { name: "allow-infrastructure", namespace: "cp" } };
    const edited = scopeOf(
      memory(),
      rawWith({ networkpolicies: new Map([["cp/allow-infrastructure", policy]]) }),
      desired,
      new Set(),
    );
    expect(edited.crossNamespace).toBe(true);
  });

  it("prunes among every live object when an Infra gains or loses its desired state, even as another does the opposite", () => {
    const desired = desiredOf({ "ns-a/a": a, "ns-c/c": [] }, cross);
    expect(scopeOf(memory(), rawWith(), desired, new Set()).prune).toBeUndefined();
    expect(scopeOf(memory(), rawWith(), desiredOf({ "ns-a/a": a }, cross), new Set()).prune).toBeUndefined();
  });

  it("looks at the cross-namespace objects when they, or the attachments they are held for, changed", () => {
    const desired = desiredOf({ "ns-a/a": a, "ns-b/b": b }, cross);
    const held = scopeOf(memory(), rawWith(), desired, new Set(["cp/beta"]));
    expect(held.crossNamespace).toBe(true);
    expect(held.prune).toBeUndefined();
    const released = scopeOf(memory({ held: new Set(["cp/beta"]) }), rawWith(), desired, new Set());
    expect(released.crossNamespace).toBe(true);
    expect(
      scopeOf(memory({ held: new Set(["cp/beta"]) }), rawWith(), desired, new Set(["cp/beta"])).crossNamespace,
    ).toBe(false);
    const other = scopeOf(memory(), rawWith(), desiredOf({ "ns-a/a": a, "ns-b/b": b }, []), new Set());
    expect(other.crossNamespace).toBe(true);
    expect(other.prune).toEqual([["networkpolicies", "cp/allow-infrastructure"]]);
  });

  it("looks again at an Infra the last pass found a problem on", () => {
    const s = scopeOf(
      memory({ unsettled: new Set(["ns-b/b"]) }),
      rawWith(),
      desiredOf({ "ns-a/a": a, "ns-b/b": b }, cross),
      new Set(),
    );
    expect([...s.infras]).toEqual(["ns-b/b"]);
  });
});
