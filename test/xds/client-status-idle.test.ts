// The health view keeps disconnected nodes (their last ACKed versions) up to maxIdleNodes, the least
// recently connected forgotten first; a connected node is never forgotten, and a node that connects
// again is not idle. Counted as nodes connect and leave, so a close costs no walk of every node.
import { describe, expect, it } from "vitest";
import { XdsStatus } from "../../src/xds/client-status.js";

const open = (s: XdsStatus, stream: string, id: string, at: number): void => {
  s.recordOpen(
    {
      streamId: stream,
      node: { id, cluster: "ns/group", userAgent: "envoy" },
      peer: "ipv4:127.0.0.1:1",
      protocol: "sotw",
      service: "ads",
      connectedAt: at,
    },
    () => undefined,
  );
};
const listed = (s: XdsStatus) => s.nodes().map((n) => `${n.node.id}:${String(n.connectedStreams)}`);

describe("XdsStatus maxIdleNodes", () => {
  it("forgets the least recently connected idle nodes past the bound, never a connected one", () => {
    const s = new XdsStatus({ maxIdleNodes: 2 });
    open(s, "keep", "a-connected", 0);
    for (const [i, id] of ["b", "c", "d"].entries()) {
      open(s, `s-${id}`, id, i + 1);
      s.recordClose(`s-${id}`, i + 1);
    }
    expect(listed(s)).toEqual(["a-connected:1", "c:0", "d:0"]);
    // c connects again (no longer idle, and now the most recently connected), then e comes and goes.
    open(s, "s-c2", "c", 10);
    open(s, "s-e", "e", 11);
    s.recordClose("s-e", 12);
    expect(listed(s)).toEqual(["a-connected:1", "c:1", "d:0", "e:0"]);
    s.recordClose("s-c2", 13);
    expect(listed(s)).toEqual(["a-connected:1", "c:0", "e:0"]);
    s.recordClose("keep", 14);
    expect(listed(s)).toEqual(["c:0", "e:0"]);
  });

  it("a node with two streams stays connected until both close", () => {
    const s = new XdsStatus({ maxIdleNodes: 0 });
    open(s, "s1", "x", 0);
    open(s, "s2", "x", 1);
    s.recordClose("s1", 2);
    expect(listed(s)).toEqual(["x:1"]);
    s.recordClose("s2", 3);
    expect(listed(s)).toEqual([]);
  });
});
