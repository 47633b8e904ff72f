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
import { attachment, cudnInfra, infra, infraWithoutNetwork, namespace, nodePool, NS } from "../../support/fixtures.js";

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
