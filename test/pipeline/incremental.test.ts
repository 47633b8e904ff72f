// renderAll after a previous rendering (serve's and the operator's loop): only the Infras the
// keyed changes feed are built and rendered again — the others keep their very RenderedInfra —
// and the outputs equal a rendering from scratch. Invalid edits keep their last good config.
import { describe, expect, it } from "vitest";
import type { ObjectChange } from "../../src/model/incremental/infras-read.js";
import type { ClusterState } from "../../src/model/types.js";
import { AllocationStore } from "../../src/pipeline/allocation-store.js";
import { renderAll, type Outputs, type RenderOptions } from "../../src/pipeline/outputs.js";
import { attachment, combine, hostedCluster, infra, machine, NS, VLAN200, vmi } from "../support/fixtures.js";

const C_NET = {
  networkConfig: { cidr: "203.0.113.0/24", gateway: "203.0.113.1", networkAttachmentDefinition: "vlan300" },
  infraComponents: {
    dhcp: { serverIP: "203.0.113.2", rangeStart: "203.0.113.100", rangeEnd: "203.0.113.199" },
    dns: { serverIP: "203.0.113.3" },
    proxy: { serverIP: "203.0.113.4" },
  },
};

/** Infra a serves h1, b serves h2, c serves h3: three VLANs, nothing shared. */
const base: ClusterState = combine(
  { infras: [infra("a"), infra("b", VLAN200), infra("c", C_NET)] },
  {
    attachments: [attachment("h1", { infra: "a" }), attachment("h2", { infra: "b" }), attachment("h3", { infra: "c" })],
  },
  hostedCluster("h1", 1, ["192.0.2.10"]),
  hostedCluster("h2", 2, ["198.51.100.10"]),
  hostedCluster("h3", 3, ["203.0.113.10"]),
);

const T0 = Date.parse("2026-01-01T00:00:00Z");
const T1 = Date.parse("2026-01-01T01:00:00Z");

/** The next rendering as serve makes it: the previous outputs, its files and memory, the keyed changes. */
const step = (last: Outputs, state: ClusterState, now: number, changes?: readonly ObjectChange[]): Outputs =>
  renderAll(state, {
    now,
    previous: last.files,
    reuse: last,
    lastGood: last.lastGood,
    ...(changes === undefined ? {} : { changes }),
  });

/** The same rendering from scratch: no reuse, the same files and memory to continue from. */
const scratch = (last: Outputs, state: ClusterState, now: number): Outputs =>
  renderAll(state, { now, previous: last.files, lastGood: last.lastGood } satisfies RenderOptions);

const moveWorker = (s: ClusterState, ip: string): [ClusterState, ObjectChange] => {
  const before = [...s.machines].find((m) => m.metadata.name === "h2-worker-0");
  const after = machine(`${NS}-h2`, "h2-worker-0", "h2-workers", [ip]);
  return [
    { ...s, machines: [...s.machines].map((m) => (m === before ? after : m)) },
    { kind: "Machine", before, after },
  ];
};

/** The first rendering after start: no claim had an incumbent. */
const warm = (): Outputs => renderAll(base, { now: T0 });

/** Claims as sorted entries: a ClaimsView's Infra order is insertion order, which means nothing. */
const sortedClaims = (m: ReadonlyMap<string, string>) => [...m].sort(([a], [b]) => (a < b ? -1 : 1));
const model = (out: Outputs) => ({ ...out.model, claims: sortedClaims(out.model.claims) });
/** The memory as plain maps (a step patches the one before it: a persistent map). */
const memory = (out: Outputs) => ({
  infras: new Map(out.lastGood.infras),
  attachments: new Map(out.lastGood.attachments),
  incumbents: sortedClaims(out.lastGood.incumbents),
});

const byInfra = (out: Outputs) => new Map(out.infras.map((r) => [r.topology.infra.name, r]));

describe("renderAll after a previous rendering", () => {
  it("the first change after start re-renders only its Infra: the first build's winners are its incumbents", () => {
    // The first rendering had no incumbents; the second is the first fed the claims it chose. Each
    // winner then stays the winner, so no Infra is rebuilt for that (a restart must not cost a
    // rebuild of the whole cluster on the next save).
    const first = renderAll(base, { now: T0 });
    expect([...first.built.rebuilt].sort()).toEqual(["clusters/a", "clusters/b", "clusters/c"]);
    const [moved, change] = moveWorker(base, "198.51.100.11");
    const next = step(first, moved, T1, [change]);
    expect([...next.built.rebuilt]).toEqual(["clusters/b"]);
    expect(byInfra(next).get("a")).toBe(byInfra(first).get("a"));
    expect(next.files).toEqual(scratch(first, moved, T1).files);
    // Nor does the change after it rebuild the Infra the previous one did, only its own.
    const [again, change2] = moveWorker(moved, "198.51.100.12");
    const later = step(next, again, T1 + 1, [change2]);
    expect([...later.built.rebuilt]).toEqual(["clusters/b"]);
    const c = base.infras[2];
    const cMoved = infra("c", { ...C_NET, networkConfig: { ...C_NET.networkConfig, dnsServers: ["192.0.2.53"] } });
    const third = { ...again, infras: again.infras.map((i) => (i === c ? cMoved : i)) };
    const last = step(later, third, T1 + 2, [{ kind: "Infra", before: c, after: cMoved }]);
    expect([...last.built.rebuilt]).toEqual(["clusters/c"]);
    expect(byInfra(last).get("b")).toBe(byInfra(later).get("b"));
    expect(last.files).toEqual(scratch(later, third, T1 + 2).files);
  });

  it("as serve feeds it (allocation tables kept between renderings), the first change re-renders only its Infra", () => {
    // The first rendering read no table (a fresh --out); the second is fed the empty tables the
    // first made for each DHCPServer: an absent table and an empty one are the same input.
    const store = new AllocationStore();
    const first = renderAll(base, { now: T0, dhcpAllocations: store.tables });
    store.update(first);
    expect([...store.tables.values()]).toEqual([[], [], []]);
    const [moved, change] = moveWorker(base, "198.51.100.11");
    const next = renderAll(moved, {
      now: T1,
      dhcpAllocations: store.tables,
      reuse: first,
      lastGood: first.lastGood,
      changes: [change],
    });
    expect([...next.built.rebuilt]).toEqual(["clusters/b"]);
    expect(byInfra(next).get("a")).toBe(byInfra(first).get("a"));
    // No table moved: the store keeps its map, so the next build need not compare the tables.
    const tables = store.tables;
    store.update(next);
    expect(store.tables).toBe(tables);
    const full = renderAll(moved, {
      now: T1,
      dhcpAllocations: store.tables,
      previous: first.files,
      lastGood: first.lastGood,
    });
    expect(next.files).toEqual(full.files);
  });

  it("a step with no change after the first rendering rebuilds nothing and keeps every rendering", () => {
    const first = renderAll(base, { now: T0 });
    const next = step(first, base, T0, []);
    expect([...next.built.rebuilt]).toEqual([]);
    for (const name of ["a", "b", "c"]) expect(byInfra(next).get(name)).toBe(byInfra(first).get(name));
    // Nothing rebuilt: the very list of renderings, and the model's very lists.
    expect(next.infras).toBe(first.infras);
    expect(next.model.topologies).toBe(first.model.topologies);
    expect(next.model.problems).toBe(first.model.problems);
  });

  it("a Machine of one Infra re-renders only that Infra, and equals a rendering from scratch", () => {
    const first = warm();
    const [moved, change] = moveWorker(base, "198.51.100.11");
    const next = step(first, moved, T1, [change]);
    expect([...next.built.rebuilt]).toEqual(["clusters/b"]);
    const [before, after] = [byInfra(first), byInfra(next)];
    // Unchanged Infras keep their very rendering (so the xDS cache neither checks nor encodes them).
    expect(after.get("a")).toBe(before.get("a"));
    expect(after.get("c")).toBe(before.get("c"));
    expect(after.get("b")).not.toBe(before.get("b"));
    expect(after.get("b")?.envoy).not.toBe(before.get("b")?.envoy);
    const full = scratch(first, moved, T1);
    expect(next.infras.map((r) => r.topology.infra.name)).toEqual(["a", "b", "c"]);
    expect(next.files).toEqual(full.files);
    expect(next.status).toEqual(full.status);
    expect(model(next)).toEqual(model(full));
    expect(memory(next)).toEqual(memory(full));
  });

  it("a rebuilt Infra renders again each part whose model changed, keeps each other one, equal to a fresh rendering", () => {
    const first = warm();
    const [moved, change] = moveWorker(base, "198.51.100.13");
    const next = step(first, moved, T1, [change]);
    const full = scratch(first, moved, T1);
    const [was, now, fresh] = [byInfra(first).get("b"), byInfra(next).get("b"), byInfra(full).get("b")];
    if (was === undefined || now === undefined || fresh === undefined) throw new Error("Infra b is not rendered");
    expect(now.topology).not.toBe(was.topology);
    // The worker's address is in the proxy's model only: its Envoy resources are rendered again
    // (reusing them would serve the old address), the DNS and Kea renderings are kept.
    const parts = [
      ["proxy", "envoy"],
      ["dns", "coreDns"],
      ["dhcp", "kea"],
    ] as const;
    const changed = parts.filter(([m]) => JSON.stringify(now.topology[m]) !== JSON.stringify(was.topology[m]));
    expect(changed.map(([m]) => m)).toEqual(["proxy"]);
    for (const [m, rendered] of parts) {
      expect(now[rendered]).toEqual(fresh[rendered]);
      if (changed.some(([c]) => c === m)) expect(now[rendered]).not.toBe(was[rendered]);
      else expect(now[rendered]).toBe(was[rendered]);
    }
    expect(now.envoy).not.toEqual(was.envoy);
    expect(now.files).toEqual(fresh.files);
  });

  it("other Kea options render Kea again on a kept topology; the proxy and DNS keep their renderings", () => {
    const first = warm();
    const kea = { controlSocket: "/run/kea/other.sock" };
    const next = renderAll(base, { now: T0, reuse: first, lastGood: first.lastGood, changes: [], kea });
    const fresh = renderAll(base, { now: T0, previous: first.files, lastGood: first.lastGood, kea });
    const [was, now] = [byInfra(first).get("b"), byInfra(next).get("b")];
    expect(now?.topology).toBe(was?.topology);
    expect(now?.kea).not.toEqual(was?.kea);
    expect(now?.kea).toEqual(byInfra(fresh).get("b")?.kea);
    expect(now?.envoy).toBe(was?.envoy);
    expect(now?.coreDns).toBe(was?.coreDns);
    expect(next.files).toEqual(fresh.files);
  });

  it("other Envoy options (--filter-chain-matcher) render the proxy again on a kept topology", () => {
    const first = warm();
    const envoy = { filterChainMatcher: true };
    const next = renderAll(base, { now: T0, reuse: first, lastGood: first.lastGood, changes: [], envoy });
    const fresh = renderAll(base, { now: T0, previous: first.files, lastGood: first.lastGood, envoy });
    const [was, now] = [byInfra(first).get("b"), byInfra(next).get("b")];
    expect(now?.topology).toBe(was?.topology);
    expect(now?.envoy).not.toEqual(was?.envoy);
    expect(now?.envoy).toEqual(byInfra(fresh).get("b")?.envoy);
    expect(next.files).toEqual(fresh.files);
  });

  it("the next rendering never reads the reused one's files: serve without --out builds no envoy.json", () => {
    const first = warm();
    let asked = 0;
    const infras = first.infras.map((r) => {
      const watched = Object.defineProperties({}, Object.getOwnPropertyDescriptors(r)) as typeof r;
      return Object.defineProperty(watched, "files", {
        get: () => {
          asked++;
          return r.files;
        },
      });
    });
    const watched = Object.defineProperty(
      Object.defineProperties({}, Object.getOwnPropertyDescriptors(first)),
      "infras",
      { value: infras },
    ) as Outputs;
    const [moved, change] = moveWorker(base, "198.51.100.15");
    const next = step(watched, moved, T1, [change]);
    expect(next.infras.length).toBe(3);
    expect(asked).toBe(0);
    // Asked for afterwards, they are what a rendering from scratch writes.
    expect(next.files).toEqual(scratch(first, moved, T1).files);
  });

  it("without the watcher's changes, finds them by identity (the same Infras re-rendered)", () => {
    const first = warm();
    const [moved] = moveWorker(base, "198.51.100.12");
    const next = step(first, moved, T1);
    expect([...next.built.rebuilt]).toEqual(["clusters/b"]);
    expect(byInfra(next).get("a")).toBe(byInfra(first).get("a"));
    expect(next.files).toEqual(scratch(first, moved, T1).files);
  });

  it("an Infra that turns invalid keeps its last good config, the others are untouched", () => {
    const first = warm();
    const bad = infra("b", { ...VLAN200, networkConfig: { ...VLAN200.networkConfig, gateway: "10.9.9.9" } });
    const before = base.infras[1];
    const edited = { ...base, infras: base.infras.map((i) => (i === before ? bad : i)) };
    const next = step(first, edited, T1, [{ kind: "Infra", before, after: bad }]);
    const full = scratch(first, edited, T1);
    expect(next.files).toEqual(full.files);
    expect(next.status).toEqual(full.status);
    expect(memory(next)).toEqual(memory(full));
    // Served as last accepted: b's Envoy config did not move, and its status says why.
    expect(byInfra(next).get("b")?.envoy).toEqual(byInfra(first).get("b")?.envoy);
    expect(byInfra(next).get("a")).toBe(byInfra(first).get("a"));
    const b = next.status.find((s) => s.kind === "Infra" && s.name === "b");
    expect(b?.problems.map((p) => p.reason)).toContain("ServingLastGood");

    // Another change elsewhere keeps b on its last good version and re-renders only a's VLAN.
    const [moved, change] = moveWorker(edited, "198.51.100.13");
    const later = step(next, moved, T1 + 1, [change]);
    expect(later.files).toEqual(scratch(next, moved, T1 + 1).files);
    expect(byInfra(later).get("a")).toBe(byInfra(first).get("a"));

    // Fixed: the new spec is served and remembered.
    const good = infra("b", { ...VLAN200, networkConfig: { ...VLAN200.networkConfig, dnsServers: ["192.0.2.53"] } });
    const fixedState = { ...moved, infras: moved.infras.map((i) => (i === bad ? good : i)) };
    const fixed = step(later, fixedState, T1 + 2, [{ kind: "Infra", before: bad, after: good }]);
    const fixedFull = scratch(later, fixedState, T1 + 2);
    expect(fixed.files).toEqual(fixedFull.files);
    expect(memory(fixed)).toEqual(memory(fixedFull));
    expect(fixed.lastGood.infras.get("Infra/clusters/b")?.object).toBe(good);
  });

  it("a schema-refused Infra (gone from the state, listed invalid) is served as last accepted", () => {
    const first = warm();
    const before = base.infras[2];
    const refused = {
      ...base,
      infras: base.infras.filter((i) => i !== before),
      invalid: [
        {
          ref: { kind: "Infra", namespace: NS, name: "c" },
          errors: [{ field: "spec.networkConfig.cidr", message: "x" }],
        },
      ],
    };
    const next = step(first, refused, T1, [{ kind: "Infra", before, after: undefined }]);
    const full = scratch(first, refused, T1);
    expect(next.files).toEqual(full.files);
    expect(memory(next)).toEqual(memory(full));
    expect(byInfra(next).get("c")?.envoy).toEqual(byInfra(first).get("c")?.envoy);
    // Deleted for good: forgotten, and its outputs go.
    const gone = { ...refused, invalid: [] };
    const after = step(next, gone, T1 + 1, []);
    expect(after.files).toEqual(scratch(next, gone, T1 + 1).files);
    expect(after.lastGood.infras.has("Infra/clusters/c")).toBe(false);
  });

  it("without `previous`, continues from the reused rendering's own files: DNS serials move on as with them", () => {
    const first = warm();
    const before = base.infras[1];
    const moved = infra("b", {
      ...VLAN200,
      infraComponents: { ...VLAN200.infraComponents, proxy: { serverIP: "198.51.100.5" } },
    });
    const edited = { ...base, infras: base.infras.map((i) => (i === before ? moved : i)) };
    const changes: ObjectChange[] = [{ kind: "Infra", before, after: moved }];
    const serve = renderAll(edited, { now: T1, reuse: first, lastGood: first.lastGood, changes });
    expect(serve.files).toEqual(step(first, edited, T1, changes).files);
    expect(serve.files).toEqual(scratch(first, edited, T1).files);
    // The zones that changed carry a higher serial than the first rendering's (not a restart).
    const serial = (files: ReadonlyMap<string, string>, path: string) =>
      Number(/SOA\s+\S+\s+\S+\s+\(?\s*(\d+)/.exec(files.get(path) ?? "")?.[1]);
    const zone = [...serve.files.keys()].find((p) => p.startsWith(`${NS}/b-dns/db.vlan.api.`)) ?? "";
    expect(serve.files.get(zone)).not.toBe(first.files.get(zone));
    expect(serial(serve.files, zone)).toBeGreaterThan(serial(first.files, zone));
  });

  it("a `previous` that is not the reused rendering's files does not build them (the operator's case)", () => {
    const first = warm();
    let asked = 0;
    const descriptors = Object.getOwnPropertyDescriptors(first);
    const watched = Object.defineProperties({}, descriptors) as Outputs;
    Object.defineProperty(watched, "files", {
      get: () => {
        asked++;
        return first.files;
      },
    });
    const [moved, change] = moveWorker(base, "198.51.100.14");
    const previous = new Map(first.files);
    asked = 0;
    const next = renderAll(moved, { now: T1, previous, reuse: watched, lastGood: first.lastGood, changes: [change] });
    expect(asked).toBe(0);
    expect(next.files).toEqual(scratch(first, moved, T1).files);
  });

  it("a rebuilt Infra keeps its bootstrap.yaml only under the same xDS address; each equals a fresh one", () => {
    const first = warm();
    const [moved, change] = moveWorker(base, "198.51.100.14");
    const path = `${NS}/b-proxy/bootstrap.yaml`;
    const next = step(first, moved, T1, [change]);
    expect(byInfra(next).get("b")).not.toBe(byInfra(first).get("b"));
    expect(next.files.get(path)).toBe(first.files.get(path));
    expect(next.files).toEqual(scratch(first, moved, T1).files);
    const xdsAddress = { host: "10.0.0.9", port: 18001 };
    const elsewhere = renderAll(moved, {
      now: T1,
      reuse: first,
      lastGood: first.lastGood,
      changes: [change],
      xdsAddress,
    });
    const fresh = renderAll(moved, { now: T1, previous: first.files, lastGood: first.lastGood, xdsAddress });
    expect(elsewhere.files.get(path)).toContain("10.0.0.9");
    expect(elsewhere.files).toEqual(fresh.files);
  });

  it("builds status.json and every object's status only when asked for, equal to a rendering from scratch", () => {
    const first = warm();
    const [moved, change] = moveWorker(base, "198.51.100.14");
    const next = step(first, moved, T1, [change]);
    const full = scratch(first, moved, T1);
    expect(next.status).toBe(next.status);
    expect(next.files).toBe(next.files);
    expect(next.files.get("status.json")).toBe(full.files.get("status.json"));
    expect(JSON.parse(next.files.get("status.json") ?? "{}")).toEqual({ objects: next.status });
  });
});

/** What a delta says, by Infra name, checked against the renderings themselves. */
function checkDelta(out: Outputs, from: Outputs): { rendered: string[]; dropped: string[] } {
  // byInfra holds exactly the renderings of `infras`.
  expect(new Map(out.byInfra)).toEqual(new Map(out.infras.map((r) => [`${NS}/${r.topology.infra.name}`, r])));
  expect(out.delta?.from).toBe(from.byInfra);
  const [now, was] = [new Set(out.infras), new Set(from.infras)];
  const names = (list: readonly Outputs["infras"][number][]) => list.map((r) => r.topology.infra.name).sort();
  expect(names(out.delta?.rendered ?? [])).toEqual(names(out.infras.filter((r) => !was.has(r))));
  expect(names(out.delta?.dropped ?? [])).toEqual(names(from.infras.filter((r) => !now.has(r))));
  return { rendered: names(out.delta?.rendered ?? []), dropped: names(out.delta?.dropped ?? []) };
}

describe("renderAll's renderings by Infra and its delta", () => {
  it("name the Infras rendered again and those whose rendering went, step by step", () => {
    const first = renderAll(base, { now: T0 });
    expect(first.delta).toBeUndefined();
    expect([...first.byInfra.keys()].sort()).toEqual([`${NS}/a`, `${NS}/b`, `${NS}/c`]);

    const [moved, change] = moveWorker(base, "198.51.100.11");
    const second = step(first, moved, T1, [change]);
    expect(checkDelta(second, first)).toEqual({ rendered: ["b"], dropped: ["b"] });

    const noB = { ...moved, infras: moved.infras.filter((i) => i.metadata.name !== "b") };
    const third = step(second, noB, T1, [{ kind: "Infra", before: moved.infras[1], after: undefined }]);
    expect(checkDelta(third, second)).toEqual({ rendered: [], dropped: ["b"] });
    expect(third.byInfra.has(`${NS}/b`)).toBe(false);

    const fourth = step(third, moved, T1, [{ kind: "Infra", before: undefined, after: moved.infras[1] }]);
    expect(checkDelta(fourth, third)).toEqual({ rendered: ["b"], dropped: [] });

    const quiet = step(fourth, moved, T1, []);
    expect(checkDelta(quiet, fourth)).toEqual({ rendered: [], dropped: [] });
    expect(quiet.byInfra).toBe(fourth.byInfra);
    expect(quiet.infras).toBe(fourth.infras);
    // b went and came back: in its place again.
    expect(fourth.infras.map((r) => r.topology.infra.name)).toEqual(["a", "b", "c"]);

    // Other Kea options: every Infra is rendered again.
    const options = renderAll(moved, {
      now: T1,
      reuse: quiet,
      lastGood: quiet.lastGood,
      kea: { controlSocket: "/run/other.sock" },
    });
    expect(checkDelta(options, quiet)).toEqual({ rendered: ["a", "b", "c"], dropped: ["a", "b", "c"] });
  });

  it("the allocation store reads a delta only when it continues from the outputs it took last", () => {
    // Two stores: one takes every rendering, the other skips the second. Each must end with the
    // tables of the last rendering: the one that skipped cannot read that rendering's delta.
    const [every, skipping] = [new AllocationStore(), new AllocationStore()];
    const onA = vmi(NS, "wa", "02:00:00:00:00:01");
    const onB = vmi(NS, "wb", "02:00:00:00:00:02", undefined, { nad: `${NS}/vlan200` });
    const onA2 = vmi(NS, "wa2", "02:00:00:00:00:03");
    const onA3 = vmi(NS, "wa3", "02:00:00:00:00:04");
    const s0 = { ...base, vmis: [onA] };
    const first = renderAll(s0, { now: T0, dhcpAllocations: every.tables });
    every.update(first);
    skipping.update(first);
    // Each step as serve makes it: the store's tables in, the store updated after.
    let last = first;
    const next = (vmis: ReturnType<typeof vmi>[], added: ReturnType<typeof vmi>): Outputs => {
      last = renderAll(
        { ...s0, vmis },
        {
          now: T0,
          dhcpAllocations: every.tables,
          reuse: last,
          lastGood: last.lastGood,
          changes: [{ kind: "VirtualMachineInstance", before: undefined, after: added }],
        },
      );
      every.update(last);
      return last;
    };
    next([onA, onB], onB);
    // b's new table fed back rebuilds b once more; from then on a change on a renders a alone.
    const third = next([onA, onB, onA2], onA2);
    const fourth = next([onA, onB, onA2, onA3], onA3);
    expect(checkDelta(fourth, third).rendered).toEqual(["a"]);
    skipping.update(fourth);
    const sizes = (st: AllocationStore) => [...st.tables].map(([k, t]) => `${k} ${String(t.length)}`).sort();
    expect(sizes(every)).toEqual([`${NS}/a-dhcp 3`, `${NS}/b-dhcp 1`, `${NS}/c-dhcp 0`]);
    expect(sizes(skipping)).toEqual(sizes(every));
  });
});
