// The claims of an incremental build as one map (src/model/claims-view.ts): lookups find the
// claim's Infra, and a diff of two views compares only the Infras whose claims changed.
import { describe, expect, it } from "vitest";
import { changedClaims, ClaimsView } from "../../src/model/claims-view.js";

const a = new Map([
  ["domain:ns/a:x.example.com", "ns/x"],
  ["worker:ns/a:192.0.2.10", "ns/x"],
  ["hostedCluster:clusters/x", "ns/x"],
]);
const b = new Map([["domain:ns/b:y.example.com", "ns/y"]]);
const view = new ClaimsView(
  new Map([
    ["ns/a", a],
    ["ns/b", b],
  ]),
  new Map([["hostedCluster:clusters/x", "ns/a"]]),
);

describe("claims view", () => {
  it("reads like the Map build() returns", () => {
    expect(view.get("worker:ns/a:192.0.2.10")).toBe("ns/x");
    expect(view.get("hostedCluster:clusters/x")).toBe("ns/x");
    expect(view.get("hostedCluster:clusters/nobody")).toBeUndefined();
    expect(view.has("domain:ns/b:y.example.com")).toBe(true);
    expect(view.has("domain:ns/a:y.example.com")).toBe(false);
    expect(view.size).toBe(4);
    expect(new Map(view)).toEqual(new Map([...a, ...b]));
  });

  it("a diff of two views names exactly the claims that changed, also when one moves to another Infra", () => {
    const a2 = new Map(a);
    a2.delete("hostedCluster:clusters/x");
    a2.set("worker:ns/a:192.0.2.10", "ns/z");
    const b2 = new Map([...b, ["hostedCluster:clusters/x", "ns/y"]]);
    const next = new ClaimsView(
      new Map([
        ["ns/a", a2],
        ["ns/b", b2],
      ]),
      new Map([["hostedCluster:clusters/x", "ns/b"]]),
    );
    expect([...changedClaims(view, next)].sort()).toEqual(["hostedCluster:clusters/x", "worker:ns/a:192.0.2.10"]);
    expect([...changedClaims(view, new Map(view))]).toEqual([]);
    expect([...changedClaims(new Map(view), next)].sort()).toEqual([
      "hostedCluster:clusters/x",
      "worker:ns/a:192.0.2.10",
    ]);
    expect(changedClaims(view, view).size).toBe(0);
  });
});
