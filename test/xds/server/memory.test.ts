// NodeMemory (src/xds/server/memory.ts): what a node last held per type, across its reconnects.
// One row per behaviour; the sharing rows are issue 16's (one Remembered per state, not per slot).
import { describe, expect, test } from "vitest";
import type { Held } from "../../../src/xds/server/memory.js";
import { NodeMemory } from "../../../src/xds/server/memory.js";

const EDS = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";
const CDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster";

function held(...names: string[]): ReadonlyMap<string, Held> {
  return new Map(names.map((n) => [n, { version: `v-${n}`, res: undefined }]));
}

describe("NodeMemory", () => {
  test("an ACK of what was sent is one remembered state, listed once among the candidates", () => {
    const memory = new NodeMemory();
    const sent = held("a", "b");
    memory.remember("envoy-1", EDS, "v1", sent, "sent");
    memory.remember("envoy-1", EDS, "v1", sent, "acked");
    memory.remember("envoy-1", EDS, "v1", sent, "kept");
    expect(memory.candidates("envoy-1", EDS)).toHaveLength(1);
    expect(memory.recall("envoy-1", EDS, "v1")?.held).toBe(sent);
  });

  test("a newer send while the ACK is older keeps both states apart", () => {
    const memory = new NodeMemory();
    const v1 = held("a");
    const v2 = held("a", "b");
    memory.remember("envoy-1", EDS, "v1", v1, "sent");
    memory.remember("envoy-1", EDS, "v1", v1, "acked");
    memory.remember("envoy-1", EDS, "v2", v2, "sent");
    expect(memory.candidates("envoy-1", EDS).map((r) => r.version)).toEqual(["v1", "v2"]);
    expect(memory.recall("envoy-1", EDS, "v1")?.held).toBe(v1);
    expect(memory.recall("envoy-1", EDS, "v2")?.held).toBe(v2);
    expect(memory.recall("envoy-1", EDS, "v3")).toBeUndefined();
  });

  test("the same version with different content is not merged", () => {
    const memory = new NodeMemory();
    memory.remember("envoy-1", EDS, "v1", held("a"), "sent");
    memory.remember("envoy-1", EDS, "v1", held("b"), "acked");
    expect(memory.candidates("envoy-1", EDS)).toHaveLength(2);
    // recall prefers the ACKed state.
    expect([...(memory.recall("envoy-1", EDS, "v1")?.held.keys() ?? [])]).toEqual(["b"]);
  });

  test("types of one node are kept apart", () => {
    const memory = new NodeMemory();
    memory.remember("envoy-1", EDS, "e1", held("a"), "acked");
    memory.remember("envoy-1", CDS, "c1", held("x"), "acked");
    expect(memory.recall("envoy-1", EDS, "c1")).toBeUndefined();
    expect(memory.recall("envoy-1", CDS, "c1")?.held.has("x")).toBe(true);
  });

  test("past maxNodes the least recently updated node is forgotten, with all its types", () => {
    const memory = new NodeMemory(2);
    memory.remember("old", EDS, "v", held("a"), "acked");
    memory.remember("old", CDS, "v", held("a"), "acked");
    memory.remember("mid", EDS, "v", held("a"), "acked");
    memory.remember("old", EDS, "v", held("a"), "sent"); // touched: now the newest
    memory.remember("new", EDS, "v", held("a"), "acked");
    expect(memory.candidates("mid", EDS)).toEqual([]);
    expect(memory.candidates("old", CDS)).toHaveLength(1);
    expect(memory.candidates("new", EDS)).toHaveLength(1);
  });
});
