// The claims of an incremental build as one map (src/model/incremental/claims-view.ts): lookups find the
// claim's Infra, and a diff of two views compares only the Infras whose claims changed.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { changedClaims, ClaimsView, LayeredClaims, workerClaims } from "../../../src/model/incremental/claims-view.js";

const a = new Map([
  ["domain:x.example.com", "ns/x"],
  ["worker:ns/a:192.0.2.10", "ns/x"],
  ["hostedCluster:clusters/x", "ns/x"],
]);
const b = new Map([["domain:y.example.com", "ns/y"]]);
const view = new ClaimsView(
  new Map([
    ["ns/a", a],
    ["ns/b", b],
  ]),
  new Map([
    ["hostedCluster:clusters/x", "ns/a"],
    ["domain:x.example.com", "ns/a"],
    ["domain:y.example.com", "ns/b"],
  ]),
);

describe("claims view", () => {
  it("reads like the Map build() returns", () => {
    expect(view.get("worker:ns/a:192.0.2.10")).toBe("ns/x");
    expect(view.get("hostedCluster:clusters/x")).toBe("ns/x");
    expect(view.get("hostedCluster:clusters/nobody")).toBeUndefined();
    // Domain claims, like HostedCluster claims, are found through the Infra of their holder.
    expect(view.has("domain:y.example.com")).toBe(true);
    expect(view.get("domain:x.example.com")).toBe("ns/x");
    expect(view.has("domain:z.example.com")).toBe(false);
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
      new Map([
        ["hostedCluster:clusters/x", "ns/b"],
        ["domain:x.example.com", "ns/a"],
        ["domain:y.example.com", "ns/b"],
      ]),
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

/** Layered claims over three holders: address i is held by owners[i] (undefined: by no one). */
const HOLDERS = ["ns/p", "ns/q", "ns/r"];
const owner = fc.constantFrom(undefined, ...HOLDERS);
type Owners = (string | undefined)[];

function layeredOf(hc: string | undefined, owners: Owners, keep?: LayeredClaims): LayeredClaims {
  const base = new Map(hc === undefined ? [] : [["hostedCluster:clusters/x", hc]]);
  const layers = new Map<string, Map<string, string>>();
  owners.forEach((holder, i) => {
    if (holder === undefined) return;
    const layer = layers.get(holder) ?? new Map<string, string>();
    layers.set(holder, layer.set(`worker:ns/a:192.0.2.${String(i)}`, holder));
  });
  // A holder whose addresses did not change keeps its layer object, as an unchanged attachment's does.
  const same = (a: ReadonlyMap<string, string> | undefined, b: Map<string, string>): boolean =>
    a !== undefined && a.size === b.size && [...b].every(([k, v]) => a.get(k) === v);
  const shared = new Map<string, ReadonlyMap<string, string>>();
  for (const [holder, layer] of layers) {
    const old = keep?.layers.get(holder);
    shared.set(holder, old !== undefined && same(old, layer) ? old : layer);
  }
  return new LayeredClaims(base, shared);
}

describe("layered claims", () => {
  it("read like the Map of their entries; a worker claim is found in its holder's layer", () => {
    const claims = new LayeredClaims(
      new Map([["domain:x.example.com", "ns/p"]]),
      new Map([["ns/p", workerClaims("ns/a", "ns/p", [0xc000020a, 0xc000020b])]]),
    );
    expect(claims.get("worker:ns/a:192.0.2.11")).toBe("ns/p");
    expect(claims.get("worker:ns/a:192.0.2.12")).toBeUndefined();
    expect(claims.get("domain:x.example.com")).toBe("ns/p");
    expect(claims.size).toBe(3);
    expect([...claims.keys()]).toEqual(["domain:x.example.com", "worker:ns/a:192.0.2.10", "worker:ns/a:192.0.2.11"]);
  });

  it("one address list keeps its claims map; another list, Infra or holder gets its own", () => {
    const addrs = [0xc0000201];
    const kept = workerClaims("ns/a", "ns/p", addrs);
    expect(workerClaims("ns/a", "ns/p", addrs)).toBe(kept);
    expect(workerClaims("ns/a", "ns/p", [0xc0000201])).not.toBe(kept);
    expect([...workerClaims("ns/b", "ns/p", addrs)]).toEqual([["worker:ns/b:192.0.2.1", "ns/p"]]);
    expect([...workerClaims("ns/b", "ns/q", addrs)]).toEqual([["worker:ns/b:192.0.2.1", "ns/q"]]);
  });

  it("a diff of two views of layered claims names what a diff of their plain Maps names", () => {
    fc.assert(
      fc.property(
        fc.tuple(owner, owner),
        fc.array(owner, { minLength: 6, maxLength: 6 }),
        fc.array(fc.tuple(fc.nat(5), owner), { maxLength: 4 }),
        ([hc, hc2], owners, moves) => {
          const x = layeredOf(hc, owners);
          const after = [...owners];
          for (const [i, o] of moves) after[i] = o;
          const y = layeredOf(hc2, after, x);
          const [a, b] = [
            new ClaimsView(new Map([["ns/a", x]]), new Map()),
            new ClaimsView(new Map([["ns/a", y]]), new Map()),
          ];
          const expected = [...changedClaims(new Map(x), new Map(y))].sort();
          expect([...changedClaims(a, b)].sort()).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("the rest of the ReadonlyMap interface, on both kinds of view", () => {
  const layered = new LayeredClaims(
    new Map([["domain:x.example.com", "ns/p"]]),
    new Map([["ns/p", workerClaims("ns/a", "ns/p", [0xc000020a])]]),
  );
  const entries = [
    ["domain:x.example.com", "ns/p"],
    ["worker:ns/a:192.0.2.10", "ns/p"],
  ];
  it.each([
    ["a claims view", view, [...a, ...b]],
    ["layered claims", layered, entries],
  ] as const)("%s: keys, values and forEach agree with its entries", (_, m, want) => {
    expect([...m.keys()]).toEqual(want.map(([k]) => k));
    expect([...m.values()]).toEqual(want.map(([, v]) => v));
    const seen: [string, string, ReadonlyMap<string, string>][] = [];
    m.forEach((v, k, self) => seen.push([k, v, self]));
    expect(seen).toEqual(want.map(([k, v]) => [k, v, m]));
    expect(want.every(([k]) => m.has(k))).toBe(true);
    expect(m.has("worker:ns/a:192.0.2.99")).toBe(false);
  });

  it("a diff where an Infra with layered claims appears or goes compares them with nothing", () => {
    const before = new ClaimsView(new Map(), new Map());
    const after = new ClaimsView(new Map([["ns/a", layered]]), new Map([["domain:x.example.com", "ns/a"]]));
    const names = entries.map(([k]) => k).sort();
    expect([...changedClaims(before, after)].sort()).toEqual(names);
    expect([...changedClaims(after, before)].sort()).toEqual(names);
  });
});
