// prettyJson is JSON.stringify(value, null, 2), byte for byte: on random JSON values, on rendered
// resources, and on the same objects written again at another depth (the text is kept per object).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { prettyJson } from "../../src/envoy/render/json-text.js";
import { rendered } from "../xds/server/fixtures.js";

describe("prettyJson", () => {
  it("writes what JSON.stringify(value, null, 2) writes", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), (value) => {
        expect(prettyJson(value)).toBe(JSON.stringify(value, null, 2));
        // The same objects again, nested deeper: the kept text is for one indentation only.
        expect(prettyJson({ a: [value, { b: value }] })).toBe(JSON.stringify({ a: [value, { b: value }] }, null, 2));
      }),
      { seed: 1619, numRuns: 500 },
    );
  });

  it("leaves out undefined and functions as JSON.stringify does, and writes them as null in arrays", () => {
    const value = { a: undefined, b: [undefined, () => 1, 2], c: { d: undefined }, e: Number.NaN, f: "x\ny" };
    expect(prettyJson(value)).toBe(JSON.stringify(value, null, 2));
    expect(prettyJson([])).toBe("[]");
    expect(prettyJson({})).toBe("{}");
  });

  it("writes what a value's toJSON returns, indented where it stands, as JSON.stringify does", () => {
    const custom = { toJSON: () => ({ x: [1, { y: "z" }] }) };
    const value = { at: new Date(0), nested: [custom, { deeper: custom }] };
    expect(prettyJson(value)).toBe(JSON.stringify(value, null, 2));
    expect(prettyJson(custom)).toBe(JSON.stringify(custom, null, 2));
  });

  it("writes a rendered proxy as JSON.stringify does, first and again after a change to one part", () => {
    const resources = rendered();
    expect(prettyJson(resources)).toBe(JSON.stringify(resources, null, 2));
    const next = { ...resources, clusters: [...resources.clusters, { name: "new", type: "EDS" }] };
    expect(prettyJson(next)).toBe(JSON.stringify(next, null, 2));
    expect(prettyJson({ listeners: next.listeners })).toBe(JSON.stringify({ listeners: next.listeners }, null, 2));
  });
});
