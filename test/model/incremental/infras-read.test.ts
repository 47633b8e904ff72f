// The keys the feed index files Infras and VMIs under (src/model/incremental/infras-read.ts), one
// table each: an Infra's NAD (or a CUDN's name), the NADs a VMI's Multus networks name, and the
// Service an internalProxyService names.
import { describe, expect, test } from "vitest";
import type { NodePool, VirtualMachineInstance } from "../../../src/api/external.js";
import type { Infra } from "../../../src/api/schema.js";
import {
  applyChanges,
  EMPTY_INDEX,
  infrasReading,
  nadKeyOf,
  proxyServiceKey,
  vmiNadKeys,
} from "../../../src/model/incremental/infras-read.js";
import {
  attachment,
  cudnInfra,
  infra,
  infraWithoutNetwork,
  machine,
  namespace,
  nodePool,
  NS,
} from "../../support/fixtures.js";

describe("nadKeyOf", () => {
  const cudn = cudnInfra();
  const none = infraWithoutNetwork();
  test.each<[string, Infra, string]>([
    ["a NAD in the Infra's namespace", infra("vlan100"), `${NS}/vlan100`],
    [
      "a NAD in another namespace",
      infra("vlan100", { networkConfig: { networkAttachmentNamespace: "other" } }),
      "other/vlan100",
    ],
    ["a CUDN: its name, in any namespace", cudn, "~/vlan-l"],
    ["no network: a key nobody has", none, ""],
  ])("%s → %j", (_, i, want) => {
    expect(nadKeyOf(i)).toBe(want);
  });
});

describe("vmiNadKeys", () => {
  const vm = (refs: (string | undefined)[] | undefined): VirtualMachineInstance => ({
    apiVersion: "kubevirt.io/v1",
    kind: "VirtualMachineInstance",
    metadata: { namespace: NS, name: "v" },
    ...(refs === undefined
      ? {}
      : {
          spec: {
            networks: refs.map((r, i) =>
              r === undefined
                ? { name: `n${String(i)}`, pod: {} }
                : { name: `n${String(i)}`, multus: { networkName: r } },
            ),
          },
        }),
  });
  test.each<[string, (string | undefined)[] | undefined, string[]]>([
    ["no spec", undefined, []],
    ["the pod network only", [undefined], []],
    ["a bare name is in the VMI's namespace; each also as a CUDN's name", ["vlan100"], [`${NS}/vlan100`, "~/vlan100"]],
    ["a namespaced name", ["other/nad"], ["other/nad", "~/nad"]],
    ["each key once", ["vlan100", `${NS}/vlan100`, "other/vlan100"], [`${NS}/vlan100`, "~/vlan100", "other/vlan100"]],
  ])("%s", (_, refs, want) => {
    expect(vmiNadKeys(vm(refs))).toEqual(want);
  });
});

describe("proxyServiceKey", () => {
  const withService = (value: string | undefined): Infra => {
    const i = infra("vlan100");
    const proxy = i.spec.infraComponents?.proxy;
    if (proxy !== undefined) {
      if (value === undefined) delete proxy.internalProxyService;
      else proxy.internalProxyService = value;
    }
    return i;
  };
  test.each<[string | undefined, string | undefined]>([
    [undefined, undefined],
    ["", undefined],
    ["10.96.0.44", undefined],
    ["10.96.0.44.", undefined],
    ["proxy", `${NS}/proxy`],
    ["proxy.", `${NS}/proxy`],
    ["proxy.other", "other/proxy"],
    ["proxy.other.svc.cluster.local.", "other/proxy"],
  ])("%j → %j", (value, want) => {
    expect(proxyServiceKey(withService(value))).toBe(want);
  });

  test("an Infra whose spec has no proxy section, or no components at all, names no Service", () => {
    const noProxy = infra("vlan100");
    delete noProxy.spec.infraComponents?.proxy;
    expect(proxyServiceKey(noProxy)).toBeUndefined();
    const noComponents = infra("vlan100");
    delete noComponents.spec.infraComponents;
    expect(proxyServiceKey(noComponents)).toBeUndefined();
  });
});

describe("applyChanges: the index's groups over a shared base", () => {
  // 40 control-plane namespaces of one Machine each: a later change to a few of them leaves an
  // overlay over this base (few own entries against 40), read like a plain map.
  const namespaces = Array.from({ length: 40 }, (_, i) => `cp-${String(i)}`);
  const base = applyChanges(
    EMPTY_INDEX,
    namespaces.map((ns) => ({ kind: "Machine" as const, before: undefined, after: machine(ns, "m", "pool", []) })),
  );
  /** The groups as a plain map of member keys ("namespace/name"), read through entries(). */
  const plain = (m: ReadonlyMap<string, ReadonlyMap<string, unknown>>): Map<string, string[]> =>
    new Map([...m.entries()].map(([g, members]) => [g, [...members.keys()].sort()]));

  test("keys, values and forEach read what entries reads, the base's groups and the changed ones", () => {
    const next = applyChanges(base, [
      { kind: "Machine", before: undefined, after: machine("cp-3", "m2", "pool", []) },
      { kind: "Machine", before: machine("cp-7", "m", "pool", []), after: undefined },
      { kind: "Machine", before: undefined, after: machine("cp-new", "m", "pool", []) },
    ]);
    const groups = next.objects.Machine;
    const want = new Map(namespaces.filter((ns) => ns !== "cp-7").map((ns) => [ns, [`${ns}/m`]]));
    want.set("cp-3", ["cp-3/m", "cp-3/m2"]);
    want.set("cp-new", ["cp-new/m"]);
    expect(plain(groups)).toEqual(want);
    expect(groups.size).toBe(want.size);
    expect([...groups.keys()].sort()).toEqual([...want.keys()].sort());
    expect([...groups.values()].map((g) => [...g.keys()].sort())).toEqual([...plain(groups).values()]);
    const seen = new Map<string, string[]>();
    groups.forEach((members, group, map) => {
      expect(map).toBe(groups);
      seen.set(group, [...members.keys()].sort());
    });
    expect(seen).toEqual(want);
    expect(groups.has("cp-7")).toBe(false);
    expect(groups.get("cp-7")).toBeUndefined();
  });

  test("a delete from a group emptied earlier in the batch, or from a group nobody has, changes nothing more", () => {
    const m = machine("cp-5", "m", "pool", []);
    const next = applyChanges(base, [
      { kind: "Machine", before: m, after: undefined },
      { kind: "Machine", before: m, after: undefined },
      { kind: "Machine", before: machine("cp-none", "m", "pool", []), after: undefined },
    ]);
    const want = new Map(namespaces.filter((ns) => ns !== "cp-5").map((ns) => [ns, [`${ns}/m`]]));
    expect(plain(next.objects.Machine)).toEqual(want);
    expect(next.objects.Machine.size).toBe(39);
    expect(next.objects.Machine.has("cp-none")).toBe(false);
    // Only a delete of what is not there: the index is the one it was.
    const untouched = applyChanges(base, [
      { kind: "Machine", before: machine("cp-none", "m", "pool", []), after: undefined },
    ]);
    expect(untouched.objects.Machine).toBe(base.objects.Machine);
  });
});

describe("applyChanges: a large group (every attachment of one namespace)", () => {
  const names = Array.from({ length: 100 }, (_, i) => `hc-${String(i)}`);
  const first = applyChanges(
    EMPTY_INDEX,
    names.map((n) => ({ kind: "InfraClusterAttachment" as const, before: undefined, after: attachment(n) })),
  );
  const members = (index: typeof first): string[] =>
    [...(index.objects.InfraClusterAttachment.get(NS)?.keys() ?? [])].sort();

  test("takes each batch's puts and deletes, in order, and leaves the index before it as it was", () => {
    let index = first;
    const want = new Set(names.map((n) => `${NS}/${n}`));
    for (let round = 0; round < 40; round++) {
      const gone = attachment(names[round] ?? "");
      const back = attachment(names[(round + 7) % names.length] ?? "");
      const fresh = attachment(`new-${String(round)}`);
      const before = index;
      const beforeMembers = members(before);
      index = applyChanges(index, [
        { kind: "InfraClusterAttachment", before: gone, after: undefined },
        { kind: "InfraClusterAttachment", before: undefined, after: fresh },
        { kind: "InfraClusterAttachment", before: back, after: back },
        // Deleted and put again in one batch: the last change wins.
        { kind: "InfraClusterAttachment", before: fresh, after: undefined },
        { kind: "InfraClusterAttachment", before: undefined, after: fresh },
      ]);
      want.delete(`${NS}/${names[round] ?? ""}`);
      want.add(`${NS}/${names[(round + 7) % names.length] ?? ""}`);
      want.add(`${NS}/new-${String(round)}`);
      expect(members(index)).toEqual([...want].sort());
      expect(index.objects.InfraClusterAttachment.get(NS)?.size).toBe(want.size);
      expect(index.objects.InfraClusterAttachment.get(NS)?.get(`${NS}/new-${String(round)}`)).toBe(fresh);
      expect(members(before)).toEqual(beforeMembers);
    }
  });
});

describe("infrasReading: which Infras a Namespace or a NodePool feeds", () => {
  const index = applyChanges(EMPTY_INDEX, [
    { kind: "InfraClusterAttachment", before: undefined, after: attachment("one") },
  ]);
  test("a Namespace feeds the Infras of the attachments whose control plane it is", () => {
    expect([...infrasReading(index, "Namespace", namespace(`${NS}-one`))]).toEqual([`${NS}/vlan100`]);
    expect([...infrasReading(index, "Namespace", namespace(`${NS}-two`))]).toEqual([]);
  });

  test("a NodePool without a spec is filed and read like one naming no cluster", () => {
    const bare: NodePool = {
      apiVersion: "hypershift.openshift.io/v1beta1",
      kind: "NodePool",
      metadata: { namespace: NS, name: "np" },
    };
    const next = applyChanges(index, [{ kind: "NodePool", before: undefined, after: bare }]);
    expect([...infrasReading(next, "NodePool", bare)]).toEqual([]);
    expect([...infrasReading(next, "NodePool", nodePool("one"))]).toEqual([`${NS}/vlan100`]);
  });
});
