// A rendering that skipped snapshots (the render loop took the latest of several, or the reconcile
// pass asked for one of its own) continues from the changes the watcher remembers
// (Observed.changesSince): its outputs must be those of comparing the whole state, and the
// changes of every skipped snapshot must reach it, not only the last one's.
import { describe, expect, it } from "vitest";
import { OperatorRendering } from "../../src/operator/inputs/rendering.js";
import type { Outputs } from "../../src/pipeline/outputs.js";
import { ManualClock } from "../support/manual-clock.js";
import { buildObserved, ChangeHistory, type Observed } from "../../src/watchers/kube/observed.js";
import { WATCHED_RESOURCES, type ResourceName } from "../../src/watchers/kube/resources.js";
import type { KubeObject } from "../../src/kube/rest.js";
import { attachment, combine, hostedCluster, infra, machine, NS } from "../support/fixtures.js";

type Raw = Record<ResourceName, Map<string, KubeObject>>;
const key = (o: KubeObject): string => `${o.metadata?.namespace ?? ""}/${o.metadata?.name ?? ""}`;

/** Snapshots built one after another, as ClusterWatcher builds them (keyed changes, a history). */
class Snapshots {
  readonly history = new ChangeHistory();
  #raw: Raw;
  #last: Observed | undefined;

  constructor(objects: Partial<Record<ResourceName, readonly object[]>>) {
    this.#raw = Object.fromEntries(
      WATCHED_RESOURCES.map((r) => [
        r.name,
        new Map((objects[r.name] ?? []).map((o) => [key(o as KubeObject), o as KubeObject])),
      ]),
    ) as Raw;
  }

  next(resource: ResourceName, o: object): Observed {
    const changed = new Map(this.#raw[resource]);
    changed.set(key(o as KubeObject), o as KubeObject);
    this.#raw = { ...this.#raw, [resource]: changed };
    return this.take(new Map([[resource, new Set([key(o as KubeObject)])]]));
  }

  take(dirty = new Map<ResourceName, ReadonlySet<string>>()): Observed {
    const last = this.#last;
    const built = buildObserved(
      this.#raw,
      (last?.seq ?? 0) + 1,
      new WeakMap(),
      last === undefined ? undefined : { observed: last, dirty },
    );
    this.history.add(built.seq, built.changes);
    const history = this.history;
    this.#last = { ...built, changesSince: (seq) => history.since(seq, built.seq) };
    return this.#last;
  }
}

const NO_DHCP = { infraComponents: { dhcp: { enabled: false } } } as const;

const rendering = (): OperatorRendering =>
  new OperatorRendering({ kea: {}, dnsFiles: () => new Map(), clock: new ManualClock() });

/** What a rendering serves: every file and the status of every object. */
const served = (o: Outputs) => ({ files: Object.fromEntries(o.files), status: o.status });

describe("a rendering after skipped snapshots", () => {
  const two = combine(
    // Without DHCP, the Machines' addresses are the workers' (with it, the leases are).
    { infras: [infra("vlan100", NO_DHCP), infra("vlan200", NO_DHCP)] },
    { attachments: [attachment("alpha", { infra: "vlan100" }), attachment("beta", { infra: "vlan200" })] },
    hostedCluster("alpha", 1, ["192.0.2.10"]),
    hostedCluster("beta", 2, ["192.0.2.20"]),
  );
  const start = (): Snapshots =>
    new Snapshots({
      infras: two.infras,
      attachments: two.attachments,
      namespaces: [...two.namespaces],
      services: [...two.services],
      nodepools: [...two.nodePools],
      machines: [...two.machines],
    });

  it("serves what comparing the whole state serves, with every skipped change in it", () => {
    const snaps = start();
    const first = snaps.take();
    const moved = snaps.next("machines", machine(`${NS}-alpha`, "alpha-worker-0", "alpha-workers", ["192.0.2.11"]));
    const last = snaps.next("machines", machine(`${NS}-beta`, "beta-worker-0", "beta-workers", ["192.0.2.21"]));
    expect(moved.seq).toBe(first.seq + 1);

    const skipping = rendering();
    skipping.render(first);
    const after = skipping.render(last);

    const comparing = rendering();
    comparing.render(first);
    const whole = comparing.render({ ...last, changesSince: () => undefined });

    expect(served(after)).toEqual(served(whole));
    // Both workers' moves are served: the skipped snapshot's too.
    const text = [...after.files.values()].join("\n");
    expect(text).toContain("192.0.2.11");
    expect(text).toContain("192.0.2.21");
    expect(text).not.toContain("192.0.2.10");
  });
});
