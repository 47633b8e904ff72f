// XdsStatus keeps each node's view (NodeStatus) until something about that node is written: a
// reader gets the very object of an unchanged node, a new one after any write to it (open, sent,
// ACK, NACK, close), and a view it holds never changes under it. After any sequence of writes its
// nodes() equal those of a status fed the same writes and read only at the end.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { clientKey, XdsStatus, type NodeStatus } from "../../src/xds/client-status.js";
import { StatusPlayer, statusEventArb, type StatusEvent } from "../support/xds-status-events.js";

const TYPES = [
  "type.googleapis.com/envoy.config.listener.v3.Listener",
  "type.googleapis.com/envoy.config.cluster.v3.Cluster",
];
const [LDS = "", CDS = ""] = TYPES;

/** Node a (stream s0) and node b (stream s1), each sent LDS v0; a also has a second stream s2 open when `second`. */
function twoNodes(second = false): XdsStatus {
  const status = new XdsStatus();
  const player = new StatusPlayer(status, TYPES);
  const events: StatusEvent[] = [
    { op: "open", stream: 0, client: 0 },
    { op: "open", stream: 1, client: 2 },
    { op: "sent", stream: 0, type: 0, version: 0 },
    { op: "sent", stream: 1, type: 0, version: 0 },
    ...(second ? [{ op: "open", stream: 2, client: 0 } as const] : []),
  ];
  for (const [at, e] of events.entries()) player.play(e, at);
  return status;
}

const nodeA = (status: XdsStatus): NodeStatus | undefined => status.node("a", "ns/one");
const nodeB = (status: XdsStatus): NodeStatus | undefined => status.node("b");

const sent = { version: "v1", nonce: "n9", at: 100, resources: 1, removed: 0, bytes: 10 };
const nack = { version: "v0", nonce: "n0", at: 100, code: 3, message: "no" };
/** A write to node a; `setup` runs before the views are taken, `second` opens a second stream of a first. */
const WRITES: readonly {
  name: string;
  write: (s: XdsStatus) => void;
  setup?: (s: XdsStatus) => void;
  second?: boolean;
}[] = [
  { name: "a response sent", write: (s) => s.recordSent("s0", "ns/one", LDS, sent, "change", 100) },
  { name: "a first response of another type", write: (s) => s.recordSent("s0", "ns/one", CDS, sent, "change", 100) },
  {
    name: "an ACK",
    write: (s) => {
      s.recordAck("s0", undefined, { version: "v0", nonce: "n0", at: 100 }, LDS);
    },
  },
  {
    name: "a NACK",
    write: (s) => {
      s.recordNack("s0", undefined, nack, LDS);
    },
  },
  {
    name: "a repeated NACK (only its count and time move)",
    setup: (s) => {
      s.recordNack("s0", undefined, nack, LDS);
    },
    write: (s) => {
      s.recordNack("s0", undefined, { ...nack, at: 101 }, LDS);
    },
  },
  {
    name: "another stream of the node opens",
    write: (s) => {
      s.recordOpen(
        {
          streamId: "s9",
          node: { id: "a", cluster: "ns/one", userAgent: "envoy" },
          peer: "ipv4:127.0.0.1:2",
          protocol: "delta",
          service: "ads",
          connectedAt: 100,
        },
        () => undefined,
      );
    },
  },
  {
    name: "its only stream closes",
    write: (s) => {
      s.recordClose("s0", 100);
    },
  },
  {
    name: "one of its two streams closes",
    write: (s) => {
      s.recordClose("s2", 100);
    },
    second: true,
  },
];

describe("XdsStatus node views", () => {
  it("hands out the very same views while nothing is written, in a list of its own each time", () => {
    const status = twoNodes();
    const first = status.nodes();
    const again = status.nodes();
    expect(again).not.toBe(first);
    expect(again).toHaveLength(2);
    again.forEach((v, i) => {
      expect(v).toBe(first[i]);
    });
    expect(nodeA(status)).toBe(first[0]);
    // A caller reordering its list does not reorder the next one.
    first.reverse();
    expect(status.nodes().map((n) => n.node.id)).toEqual(["a", "b"]);
  });

  it.each(WRITES)("$name: a new view of that node, the old one as it was, the other node's kept", (row) => {
    const status = twoNodes(row.second);
    row.setup?.(status);
    const [a, b] = [nodeA(status), nodeB(status)];
    const text = JSON.stringify(a);
    row.write(status);
    const after = nodeA(status);
    expect(after).not.toBe(a);
    expect(JSON.stringify(a), "a view never changes under its reader").toBe(text);
    expect(nodeB(status)).toBe(b);
    expect(status.nodes()).toContain(after);
    expect(status.nodes()).toContain(b);
  });

  it("a write to a stream that is gone changes no view", () => {
    const status = twoNodes();
    const before = status.nodes();
    status.recordAck("gone", undefined, { version: "v0", nonce: "n0", at: 100 }, LDS);
    status.recordSent("gone", "ns/one", LDS, sent, "change", 100);
    status.recordClose("gone", 100);
    status.nodes().forEach((v, i) => {
      expect(v).toBe(before[i]);
    });
  });

  it("after any writes, lists what a status fed the same writes lists, a held view never moves, an unwritten node keeps its view", () => {
    fc.assert(
      fc.property(fc.array(statusEventArb(4, TYPES.length), { minLength: 1, maxLength: 60 }), (events) => {
        const status = new XdsStatus({ maxIdleNodes: 2 });
        const player = new StatusPlayer(status, TYPES);
        let held = new Map<string, { view: NodeStatus; text: string }>();
        for (const [at, e] of events.entries()) {
          const written = player.play(e, at);
          const fresh = new XdsStatus({ maxIdleNodes: 2 });
          const twin = new StatusPlayer(fresh, TYPES);
          for (const [j, earlier] of events.slice(0, at + 1).entries()) twin.play(earlier, j);
          const views = status.nodes();
          expect(views).toEqual(fresh.nodes());
          for (const { view, text } of held.values()) expect(JSON.stringify(view)).toBe(text);
          for (const view of views) {
            const key = clientKey(view.identity, view.node);
            if (key !== written && held.has(key)) expect(view, key).toBe(held.get(key)?.view);
            expect(status.node(view.node.id, view.node.cluster)).toEqual(fresh.node(view.node.id, view.node.cluster));
          }
          held = new Map(views.map((v) => [clientKey(v.identity, v.node), { view: v, text: JSON.stringify(v) }]));
        }
      }),
      { seed: 30, numRuns: 150 },
    );
  });
});
