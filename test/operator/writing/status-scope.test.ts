// Which objects a pass computes the status of: each fact an object's status is computed from,
// moved alone, brings exactly the objects it feeds into scope.
import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../../src/kube/rest.js";
import { INFRA_LABEL } from "../../../src/model/children.js";
import type { ObjectRef, Problem, Topology } from "../../../src/model/types.js";
import type { RenderedInfra } from "../../../src/pipeline/outputs.js";
import { renderAll, type StatusEntry } from "../../../src/pipeline/outputs.js";
import { refKey } from "../../../src/model/problems.js";
import { attachment, combine, hostedCluster, infra, NS, VLAN200 } from "../../support/fixtures.js";
import {
  statusEntriesIn,
  statusMemory,
  statusOwner,
  statusScope,
  type StatusFacts,
  type StatusScope,
} from "../../../src/operator/writing/status-scope.js";
import type { RawObjects } from "../../../src/watchers/kube/observed.js";
import { WATCHED_RESOURCES, type ResourceName } from "../../../src/watchers/kube/resources.js";

function rawWith(entries: Partial<Record<ResourceName, Map<string, KubeObject>>> = {}): RawObjects {
  return Object.fromEntries(
    WATCHED_RESOURCES.map((r) => [r.name, entries[r.name] ?? new Map<string, KubeObject>()]),
  ) as unknown as RawObjects;
}

/** Two Infras, each with a proxy and a DHCP node group. */
const topologies = ["ns-a/a", "ns-b/b"].map((key) => {
  const [namespace = "", name = ""] = key.split("/");
  return {
    infra: { namespace, name },
    proxy: { node: `${key}-proxy` },
    dhcp: { name: `${key}-dhcp` },
  } as unknown as Topology;
});
const rendering = (name: string): RenderedInfra => ({ name }) as unknown as RenderedInfra;
const renderings = new Map([
  ["ns-a/a", rendering("a")],
  ["ns-b/b", rendering("b")],
]);
const problem = (kind: string, namespace: string, name: string, message: string): Problem => ({
  object: { kind, namespace, name },
  field: "spec",
  severity: "error",
  reason: "InvalidSpec",
  message,
});

function facts(over: Partial<StatusFacts> = {}): StatusFacts {
  return {
    renderings,
    topologies,
    problems: [[problem("InfraClusterAttachment", "ns-a", "one", "waiting")]],
    stamp: (group) => `${group} v1`,
    dnsEpoch: 0,
    ...over,
  };
}

const raw = rawWith({
  infras: new Map([["ns-a/a", { metadata: { name: "a", namespace: "ns-a" } }]]),
  proxyservers: new Map([["ns-b/b-proxy", { metadata: { name: "b-proxy", namespace: "ns-b" } }]]),
});

/** The scope after the facts and the cached objects moved from the defaults to these. */
function scopeAfter(over: Partial<StatusFacts>, now: RawObjects = raw, infras: ReadonlySet<string> = new Set()) {
  const before = statusMemory(facts());
  return statusScope(before, raw, statusMemory(facts(over), before), now, infras);
}

const none = { infras: new Set(), objects: new Set() };

describe("statusScope", () => {
  it("computes nothing when nothing moved", () => {
    expect(scopeAfter({})).toEqual(none);
  });

  it("computes every object of the Infras the pass looked at", () => {
    expect(scopeAfter({}, raw, new Set(["ns-b/b"]))).toEqual({ ...none, infras: new Set(["ns-b/b"]) });
  });

  it("computes every object of an Infra whose rendering changed, added or gone", () => {
    const moved = new Map([
      ["ns-a/a", rendering("a again")],
      ["ns-c/c", rendering("c")],
    ]);
    expect(scopeAfter({ renderings: moved })).toEqual({ ...none, infras: new Set(["ns-a/a", "ns-b/b", "ns-c/c"]) });
  });

  it("computes a node group whose data plane moved, and the Infra it serves", () => {
    const stamp = (group: string): string => (group === "ns-b/b-dhcp" ? "acked v2" : `${group} v1`);
    expect(scopeAfter({ stamp })).toEqual({ ...none, infras: new Set(["ns-b/b"]) });
  });

  it("computes an object whose cached copy changed or went", () => {
    const now = rawWith({
      infras: new Map([["ns-a/a", { metadata: { name: "a", namespace: "ns-a", resourceVersion: "2" } }]]),
    });
    expect(scopeAfter({}, now)).toEqual({
      ...none,
      objects: new Set(["Infra/ns-a/a", "ProxyServer/ns-b/b-proxy"]),
    });
  });

  it("computes an object whose problems changed, appeared or went", () => {
    const problems = [
      problem("InfraClusterAttachment", "ns-a", "one", "waiting for something else"),
      problem("Infra", "ns-b", "b", "new"),
    ];
    expect(scopeAfter({ problems: [problems] })).toEqual({
      ...none,
      objects: new Set(["InfraClusterAttachment/ns-a/one", "Infra/ns-b/b"]),
    });
    expect(scopeAfter({ problems: [] })).toEqual({ ...none, objects: new Set(["InfraClusterAttachment/ns-a/one"]) });
  });

  it("computes every object when CoreDNS's answers moved", () => {
    expect(scopeAfter({ dnsEpoch: 1 })).toBeUndefined();
  });
});

describe("statusEntriesIn", () => {
  // Two Infras, each with two attachments (one of them refused: its HostedCluster is missing).
  const state = combine(
    {
      infras: [infra("vlan100"), infra("vlan200", VLAN200)],
      attachments: [
        attachment("alpha"),
        attachment("ghost"),
        attachment("beta", { infra: "vlan200" }),
        attachment("gamma", { infra: "vlan200" }),
      ],
    },
    hostedCluster("alpha", 1, ["192.0.2.50"]),
    hostedCluster("beta", 2, ["192.0.3.50"]),
    hostedCluster("gamma", 3, ["192.0.3.51"]),
  );
  const outputs = renderAll(state);
  const keyed = (o: { metadata: { namespace: string; name: string } }) =>
    [`${o.metadata.namespace}/${o.metadata.name}`, o as unknown as KubeObject] as const;
  const cached = rawWith({
    infras: new Map(state.infras.map(keyed)),
    attachments: new Map(state.attachments.map(keyed)),
    proxyservers: new Map([
      [
        `${NS}/vlan200-proxy`,
        { metadata: { name: "vlan200-proxy", namespace: NS, labels: { [INFRA_LABEL]: "vlan200" } } },
      ],
      [`${NS}/vlan100-proxy`, { metadata: { name: "vlan100-proxy", namespace: NS, labels: {} } }],
    ]),
    dnsservers: new Map([
      [`${NS}/vlan200-dns`, { metadata: { name: "vlan200-dns", namespace: NS, labels: { [INFRA_LABEL]: "vlan100" } } }],
    ]),
  });
  /** What Outputs.status holds for these objects. */
  const held = (...keys: string[]) =>
    outputs.status.filter((e) => keys.includes(`${e.kind}/${e.namespace}/${e.name}`)).sort(byKey);
  const byKey = (a: StatusEntry, b: StatusEntry) => (refKey(a) < refKey(b) ? -1 : 1);
  const entries = (scope: StatusScope) =>
    statusEntriesIn(scope, outputs, { renderings: outputs.byInfra }, cached).sort(byKey);

  it("builds an Infra's entries as Outputs.status holds them: its own, its attachments', its children's", () => {
    const mine = held(
      `Infra/${NS}/vlan200`,
      `InfraClusterAttachment/${NS}/beta`,
      `InfraClusterAttachment/${NS}/gamma`,
      `DHCPServer/${NS}/vlan200-dhcp`,
      `DNSServer/${NS}/vlan200-dns`,
      `ProxyServer/${NS}/vlan200-proxy`,
    );
    expect(mine).toHaveLength(6);
    expect(entries({ infras: new Set([`${NS}/vlan200`]), objects: new Set() })).toEqual(mine);
  });

  it("builds the entry of each object in scope, a refused attachment's and a child's whose label lies included", () => {
    const keys = [
      `InfraClusterAttachment/${NS}/ghost`,
      `Infra/${NS}/vlan100`,
      `ProxyServer/${NS}/vlan100-proxy`,
      `DNSServer/${NS}/vlan200-dns`,
    ];
    expect(held(...keys)).toHaveLength(4);
    expect(entries({ infras: new Set(), objects: new Set(keys) })).toEqual(held(...keys));
  });

  it("builds none for an object the cluster no longer holds", () => {
    expect(entries({ infras: new Set(), objects: new Set([`Infra/${NS}/gone`, `DNSServer/${NS}/gone`]) })).toEqual([]);
  });

  it("builds an attachment gone from its Infra's topology since the last pass", () => {
    const before = renderAll(
      combine(
        { infras: [infra("vlan100")], attachments: [attachment("alpha"), attachment("delta")] },
        hostedCluster("alpha", 1, ["192.0.2.50"]),
        hostedCluster("delta", 4, ["192.0.2.51"]),
      ),
    );
    const delta = attachment("delta");
    const withDelta = rawWith({
      infras: new Map(cached.infras),
      attachments: new Map([...cached.attachments, keyed(delta)]),
    });
    const scope = { infras: new Set([`${NS}/vlan100`]), objects: new Set<string>() };
    const built = statusEntriesIn(scope, outputs, { renderings: before.byInfra }, withDelta);
    expect(built.map(refKey)).toContain(`InfraClusterAttachment/${NS}/delta`);
  });
});

describe("statusOwner", () => {
  const cases: [ObjectRef, KubeObject, string | undefined][] = [
    [{ kind: "Infra", namespace: "n", name: "i" }, {}, "n/i"],
    [{ kind: "InfraClusterAttachment", namespace: "n", name: "x" }, { spec: { infraRef: { name: "i" } } }, "n/i"],
    [{ kind: "InfraClusterAttachment", namespace: "n", name: "x" }, { spec: {} }, undefined],
    [{ kind: "ProxyServer", namespace: "n", name: "p" }, { metadata: { labels: { [INFRA_LABEL]: "i" } } }, "n/i"],
    [{ kind: "DNSServer", namespace: "n", name: "d" }, { metadata: { labels: {} } }, undefined],
  ];
  it.each(cases)("%o (%o) → %s", (ref, cached, owner) => {
    expect(statusOwner(ref, cached)).toBe(owner);
  });
});

describe("statusMemory", () => {
  it("holds each node group's stamp and groups the problems by object", () => {
    const m = statusMemory(facts({ stamp: (g) => g.length }));
    const groups = ["ns-a/a-proxy", "ns-a/a-dhcp", "ns-b/b-proxy", "ns-b/b-dhcp"];
    expect([...m.stamps]).toEqual(groups.map((g) => [g, g.length]));
    expect([...m.stampsMoved]).toEqual(["ns-a/a", "ns-b/b"]);
    expect([...m.problems.keys()]).toEqual(["InfraClusterAttachment/ns-a/one"]);
  });

  it("keeps the stamps while none moved; names the Infras of those that did, a stamp that came or went included", () => {
    const first = statusMemory(facts());
    const again = statusMemory(facts(), first);
    expect(again.stamps).toBe(first.stamps);
    expect(again.stampsMoved).toEqual(new Set());
    // ns-b/b's DHCP group answers anew; ns-a/a's proxy has no stamp any more.
    const stamp = (g: string): string | undefined =>
      g === "ns-b/b-dhcp" ? "acked v2" : g === "ns-a/a-proxy" ? undefined : `${g} v1`;
    const moved = statusMemory(facts({ stamp }), again);
    expect(moved.stampsMoved).toEqual(new Set(["ns-a/a", "ns-b/b"]));
    expect(moved.stamps.get("ns-b/b-dhcp")).toBe("acked v2");
    expect(moved.stamps.get("ns-a/a-dhcp")).toBe(first.stamps.get("ns-a/a-dhcp"));
    // Still without a stamp the pass after: nothing moved.
    expect(statusMemory(facts({ stamp }), moved).stampsMoved).toEqual(new Set());
    // A scope asked of a memory made after other stamps than `last`'s: every object.
    expect(statusScope(moved, raw, again, raw, new Set())).toBeUndefined();
  });

  it("keeps the problems grouped while their lists are the same ones; a scope then compares none", () => {
    const lists = [[problem("InfraClusterAttachment", "ns-a", "one", "waiting")], []];
    const first = statusMemory(facts({ problems: lists }));
    const again = statusMemory(facts({ problems: [...lists] }), first);
    expect(again.problems).toBe(first.problems);
    expect(statusScope(first, raw, again, raw, new Set())).toEqual(none);
    // One list another (even with the same content): grouped again, and compared.
    const other = statusMemory(facts({ problems: [lists[0] ?? [], [problem("Infra", "ns-b", "b", "new")]] }), again);
    expect(other.problems).not.toBe(again.problems);
    expect([...other.problems.keys()]).toEqual(["InfraClusterAttachment/ns-a/one", "Infra/ns-b/b"]);
    expect(statusScope(again, raw, other, raw, new Set())).toEqual({
      ...none,
      objects: new Set(["Infra/ns-b/b"]),
    });
  });
});
