import { describe, expect, it } from "vitest";
import type { NodeStatus, TypeStatus } from "../../src/xds/client-status.js";
import {
  clientTypesHealth,
  computeHealth,
  healthText,
  typeFacts,
  typeHealth,
  type HealthState,
} from "../../src/xds/health.js";

const CDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
const LDS = "type.googleapis.com/envoy.config.listener.v3.Listener";

const sent = (version: string, nonce: string) => ({ version, nonce, at: 1, resources: 1, removed: 0, bytes: 1 });
const ack = (version: string, nonce: string) => ({ version, nonce, at: 2 });
const nack = (version: string, nonce: string) => ({
  version,
  nonce,
  at: 2,
  code: 3,
  message: "too many clusters",
  repeats: 1,
});

function type(typeUrl: string, s?: [string, string], a?: [string, string], n?: [string, string]): TypeStatus {
  return {
    typeUrl,
    lastSent: s && sent(...s),
    lastAcked: a && ack(...a),
    lastNack: n && nack(...n),
  };
}

describe("typeHealth", () => {
  const cases: [string, TypeStatus, string | undefined, boolean, HealthState, string | undefined][] = [
    ["nothing sent", type(LDS), "v2", false, "NOT_SENT", undefined],
    ["ACKed the current version", type(LDS, ["v2", "n2"], ["v2", "n2"]), "v2", false, "SYNCED", undefined],
    [
      "group without a version: ACK of the latest is enough",
      type(LDS, ["v2", "n2"], ["v2", "n2"]),
      undefined,
      false,
      "SYNCED",
      undefined,
    ],
    ["sent, not answered", type(LDS, ["v2", "n2"], ["v1", "n1"]), "v2", false, "BEHIND", "awaiting-ack"],
    [
      "ACKed an older version, newer not sent yet",
      type(LDS, ["v1", "n1"], ["v1", "n1"]),
      "v2",
      false,
      "BEHIND",
      "not-yet-sent",
    ],
    [
      "held back after a NACK of another type",
      type(LDS, ["v1", "n1"], ["v1", "n1"]),
      "v2",
      true,
      "BEHIND",
      "held-back-after-nack",
    ],
    ["latest response NACKed", type(CDS, ["v2", "n2"], ["v1", "n1"], ["v2", "n2"]), "v2", true, "ERROR", undefined],
    [
      "an old NACK, since ACKed the current",
      type(CDS, ["v3", "n3"], ["v3", "n3"], ["v2", "n2"]),
      "v3",
      false,
      "SYNCED",
      undefined,
    ],
  ];
  it.each(cases)("%s", (_, t, current, nacked, state, reason) => {
    const h = typeHealth(typeFacts(t), current, nacked);
    expect([h.state, h.reason]).toEqual([state, reason]);
    if (state === "ERROR") expect(h.nack).toBe("too many clusters");
  });
});

describe("computeHealth", () => {
  const node = (id: string, group: string, types: TypeStatus[], connectedStreams = 1): NodeStatus => ({
    node: { id, cluster: group, userAgent: "envoy" },
    identity: "none",
    connectedStreams,
    lastSeen: 0,
    types,
  });
  const versions = new Map([
    [
      "ns/proxy",
      new Map([
        [CDS, "c2"],
        [LDS, "l2"],
      ]),
    ],
  ]);
  const current = (g: string) => versions.get(g);

  it("counts behind, error and unknown groups with the nearest known name", () => {
    const h = computeHealth(
      [
        node("ok", "ns/proxy", [type(CDS, ["c2", "a"], ["c2", "a"]), type(LDS, ["l2", "b"], ["l2", "b"])]),
        node("nacker", "ns/proxy", [
          type(CDS, ["c2", "c"], ["c1", "x"], ["c2", "c"]),
          type(LDS, ["l1", "d"], ["l1", "d"]),
        ]),
        node("slow", "ns/proxy", [type(CDS, ["c2", "e"], ["c1", "y"])]),
        node("typo", "ns/porxy", []),
        node("gone", "ns/proxy", [type(CDS, ["c1", "f"], ["c1", "f"])], 0),
      ],
      current,
      ["ns/proxy"],
    );
    expect([h.behind, h.error]).toEqual([1, 1]);
    expect(h.unknownGroups).toEqual([{ group: "ns/porxy", nearest: "ns/proxy" }]);
    expect(h.headline).toBe("1 proxy behind · 1 in error · unknown group ns/porxy (did you mean ns/proxy?)");
    const nacker = h.clients.find((c) => c.id === "nacker");
    expect(nacker?.types.map((t) => [t.state, t.reason, t.current, t.acked])).toEqual([
      ["ERROR", undefined, "c2", "c1"],
      ["BEHIND", "held-back-after-nack", "l2", "l1"],
    ]);
  });

  it("has an empty headline when every connected client ACKed its group's current versions", () => {
    const h = computeHealth([node("ok", "ns/proxy", [type(CDS, ["c2", "a"], ["c2", "a"])])], current, ["ns/proxy"]);
    expect([h.behind, h.error, h.unknownGroups.length, h.headline]).toEqual([0, 0, 0, ""]);
  });
});

describe("healthText", () => {
  it("names each type not SYNCED with the words of the page and debug nodes, and nothing for a synced client", () => {
    const nacker = clientTypesHealth(
      [typeFacts(type(CDS, ["c2", "c"], ["c1", "x"], ["c2", "c"])), typeFacts(type(LDS, ["l1", "d"], ["l1", "d"]))],
      new Map([
        [CDS, "c2"],
        [LDS, "l2"],
      ]),
    );
    expect(healthText("nacker", nacker)).toBe(
      "nacker: cds ERROR (too many clusters), lds BEHIND l1→l2 (held-back-after-nack)",
    );
    const slow = clientTypesHealth([typeFacts(type(CDS, ["c2", "e"]))], new Map([[CDS, "c2"]]));
    expect(healthText("slow", slow)).toBe("slow: cds BEHIND none→c2 (awaiting-ack)");
    const ok = clientTypesHealth([typeFacts(type(CDS, ["c2", "a"], ["c2", "a"]))], new Map([[CDS, "c2"]]));
    expect(healthText("ok", ok)).toBeUndefined();
  });
});
