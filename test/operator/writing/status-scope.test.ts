// Which objects a pass computes the status of: each fact an object's status is computed from,
// moved alone, brings exactly the objects it feeds into scope.
import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../../src/kube/rest.js";
import { INFRA_LABEL } from "../../../src/model/children.js";
import type { ObjectRef, Problem, Topology } from "../../../src/model/types.js";
import type { RenderedInfra } from "../../../src/pipeline/outputs.js";
import {
  inStatusScope,
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
    problems: [problem("InfraClusterAttachment", "ns-a", "one", "waiting")],
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
  return statusScope(statusMemory(facts()), raw, statusMemory(facts(over)), now, infras, topologies);
}

const none = { infras: new Set(), objects: new Set(), groups: new Set() };

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
    expect(scopeAfter({ stamp })).toEqual({ ...none, infras: new Set(["ns-b/b"]), groups: new Set(["ns-b/b-dhcp"]) });
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
    expect(scopeAfter({ problems })).toEqual({
      ...none,
      objects: new Set(["InfraClusterAttachment/ns-a/one", "Infra/ns-b/b"]),
    });
    expect(scopeAfter({ problems: [] })).toEqual({ ...none, objects: new Set(["InfraClusterAttachment/ns-a/one"]) });
  });

  it("computes every object when CoreDNS's answers moved", () => {
    expect(scopeAfter({ dnsEpoch: 1 })).toBeUndefined();
  });
});

describe("inStatusScope", () => {
  const scope: StatusScope = {
    infras: new Set(["ns-a/a"]),
    objects: new Set(["InfraClusterAttachment/ns-b/lone"]),
    groups: new Set(["ns-b/b-proxy"]),
  };
  const known = new Map<string, unknown>([
    ["ns-b/b-proxy", 1],
    ["ns-b/b-dhcp", 1],
  ]);
  const cases: [ObjectRef, KubeObject, boolean][] = [
    [{ kind: "Infra", namespace: "ns-a", name: "a" }, {}, true],
    [{ kind: "Infra", namespace: "ns-b", name: "b" }, {}, false],
    [{ kind: "InfraClusterAttachment", namespace: "ns-a", name: "x" }, { spec: { infraRef: { name: "a" } } }, true],
    [{ kind: "InfraClusterAttachment", namespace: "ns-b", name: "x" }, { spec: { infraRef: { name: "b" } } }, false],
    [{ kind: "InfraClusterAttachment", namespace: "ns-b", name: "lone" }, { spec: { infraRef: { name: "b" } } }, true],
    [{ kind: "InfraClusterAttachment", namespace: "ns-b", name: "y" }, { spec: {} }, true],
    [{ kind: "DNSServer", namespace: "ns-a", name: "a-dns" }, { metadata: { labels: { [INFRA_LABEL]: "a" } } }, true],
    [{ kind: "DNSServer", namespace: "ns-b", name: "b-dns" }, { metadata: { labels: { [INFRA_LABEL]: "b" } } }, false],
    [{ kind: "DNSServer", namespace: "ns-b", name: "stray" }, { metadata: { labels: {} } }, true],
    [
      { kind: "ProxyServer", namespace: "ns-b", name: "b-proxy" },
      { metadata: { labels: { [INFRA_LABEL]: "b" } } },
      true,
    ],
    [
      { kind: "DHCPServer", namespace: "ns-b", name: "b-dhcp" },
      { metadata: { labels: { [INFRA_LABEL]: "b" } } },
      false,
    ],
    // A node group the last pass did not know: its answers were never computed.
    [
      { kind: "DHCPServer", namespace: "ns-b", name: "b-dhcp2" },
      { metadata: { labels: { [INFRA_LABEL]: "b" } } },
      true,
    ],
  ];
  it.each(cases)("%o (%o) → %s", (ref, cached, expected) => {
    expect(inStatusScope(scope, known, ref, cached)).toBe(expected);
  });

  it("names the Infra each object's status comes from", () => {
    expect(
      statusOwner({ kind: "InfraClusterAttachment", namespace: "n", name: "x" }, { spec: { infraRef: { name: "i" } } }),
    ).toBe("n/i");
    expect(
      statusOwner({ kind: "ProxyServer", namespace: "n", name: "p" }, { metadata: { labels: { [INFRA_LABEL]: "i" } } }),
    ).toBe("n/i");
  });
});

describe("statusMemory", () => {
  it("asks each node group's stamp once and groups the problems by object", () => {
    const asked: string[] = [];
    const m = statusMemory(
      facts({
        stamp: (g) => {
          asked.push(g);
          return g.length;
        },
        topologies: [...topologies, ...topologies],
      }),
    );
    expect(asked).toEqual(["ns-a/a-proxy", "ns-a/a-dhcp", "ns-b/b-proxy", "ns-b/b-dhcp"]);
    expect([...m.stamps]).toEqual(asked.map((g) => [g, g.length]));
    expect([...m.problems.keys()]).toEqual(["InfraClusterAttachment/ns-a/one"]);
  });
});
