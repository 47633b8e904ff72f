// The desired state carried over from pass to pass (DesiredMemo): after every change it equals the
// desired state computed from nothing, and an Infra the change does not feed keeps its very objects.
import { describe, expect, it } from "vitest";
import type { Infra, InfraClusterAttachment } from "../../../src/api/schema.js";
import type { ClusterState } from "../../../src/model/types.js";
import { desiredHash } from "../../../src/operator/writing/applied.js";
import { DesiredMemo, desiredState, operatorSettings, type DesiredState } from "../../../src/operator/desired/index.js";
import { renderAll, type Outputs } from "../../../src/pipeline/outputs.js";
import { attachment, combine, hostedCluster, infra, machine, NS } from "../../support/fixtures.js";

const settings = operatorSettings({ namespace: "oooi-system" });
const nads = new Map([
  [`${NS}/vlan100`, JSON.stringify({ cniVersion: "0.3.1", name: "vlan100", type: "bridge", bridge: "br0", ipam: {} })],
  [`${NS}/vlan200`, JSON.stringify({ cniVersion: "0.3.1", name: "vlan200", type: "bridge", bridge: "br1", ipam: {} })],
]);

const withUid = (i: Infra): Infra => ({ ...i, metadata: { ...i.metadata, uid: `uid-${i.metadata.name}` } });

function start(): ClusterState {
  const vlan200 = infra("vlan200", {
    networkConfig: { cidr: "198.51.100.0/24", gateway: "198.51.100.1", networkAttachmentDefinition: "vlan200" },
    infraComponents: {
      dhcp: { serverIP: "198.51.100.2", rangeStart: "198.51.100.100", rangeEnd: "198.51.100.199" },
      dns: { serverIP: "198.51.100.3" },
      proxy: { serverIP: "198.51.100.4" },
    },
  });
  return combine(
    { infras: [withUid(infra("vlan100")), withUid(vlan200)] },
    { attachments: [attachment("hc1"), attachment("hc2", { infra: "vlan200" })] },
    hostedCluster("hc1", 1, ["192.0.2.150"]),
    hostedCluster("hc2", 2, ["198.51.100.150"]),
  );
}

/** The operator's order: render continuing from the last rendering, then the desired state with the memo. */
class Passes {
  readonly memo = new DesiredMemo();
  #outputs: Outputs | undefined;
  next(state: ClusterState): { desired: DesiredState; fresh: DesiredState } {
    const outputs = renderAll(
      state,
      this.#outputs === undefined ? {} : { reuse: this.#outputs, lastGood: this.#outputs.lastGood },
    );
    this.#outputs = outputs;
    const input = { state: outputs.state, outputs, settings, networkAttachments: nads };
    return { desired: desiredState(input, this.memo), fresh: desiredState(input) };
  }
}

const objectsOf = (d: DesiredState, infraName: string) => d.infras.find((i) => i.infra.name === infraName)?.objects;

describe("DesiredMemo", () => {
  it("equals the desired state from nothing after each change; unchanged Infras keep their objects", () => {
    const passes = new Passes();
    const s0 = start();
    const cold = passes.next(s0);
    expect(cold.desired).toEqual(cold.fresh);
    expect(cold.desired.infras.map((i) => i.infra.name)).toEqual(["vlan100", "vlan200"]);
    // The rendering after the first: the claims now have incumbents, the winners the first chose.
    const first = passes.next(s0);
    expect(first.desired).toEqual(first.fresh);
    // A snapshot that changed nothing the desired state reads (a write of the operator's own): the same answer.
    const quiet = passes.next(s0);
    expect(quiet.desired).toBe(first.desired);

    // A worker of hc1 moves: only vlan100's objects (its ProxyServer) are computed again.
    const s1: ClusterState = {
      ...s0,
      machines: [...s0.machines].map((m) =>
        m.metadata.namespace === `${NS}-hc1`
          ? machine(`${NS}-hc1`, m.metadata.name, "hc1-workers", ["192.0.2.160"])
          : m,
      ),
    };
    const second = passes.next(s1);
    expect(second.desired).toEqual(second.fresh);
    expect(objectsOf(second.desired, "vlan200")).toBe(objectsOf(first.desired, "vlan200"));
    expect(objectsOf(second.desired, "vlan100")).not.toBe(objectsOf(first.desired, "vlan100"));
    const proxy = (d: DesiredState) => objectsOf(d, "vlan100")?.find((o) => o.kind === "ProxyServer");
    expect(JSON.stringify(proxy(second.desired))).toContain("192.0.2.160");
    // Unchanged objects of the changed Infra hash the same; the moved worker changes the ProxyServer's hash.
    const proxyFirst = proxy(first.desired);
    const proxySecond = proxy(second.desired);
    if (proxyFirst === undefined || proxySecond === undefined) throw new Error("no ProxyServer");
    expect(desiredHash(proxySecond)).not.toBe(desiredHash(proxyFirst));
    expect(second.desired.crossNamespace).toBe(first.desired.crossNamespace);

    // An attachment starts terminating: its NetworkPolicy claim goes, so the cross-namespace objects change.
    const terminating = (a: InfraClusterAttachment): InfraClusterAttachment =>
      a.metadata.name !== "hc2"
        ? a
        : {
            ...a,
            metadata: {
              ...a.metadata,
              deletionTimestamp: "2026-12-01T00:00:00Z",
              finalizers: ["hostedcluster.densityops.com/apps-ingress-cleanup"],
            },
          };
    const s2: ClusterState = { ...s1, attachments: s1.attachments.map(terminating) };
    const third = passes.next(s2);
    expect(third.desired).toEqual(third.fresh);
    expect(third.desired.crossNamespace).not.toBe(second.desired.crossNamespace);
    expect(third.desired.crossNamespace.length).toBeLessThan(second.desired.crossNamespace.length);

    // New operator settings: every Infra again.
    const other = operatorSettings({ namespace: "oooi-system", images: { envoy: "example.com/envoy:2" } });
    const fourth = desiredState(
      { state: s2, outputs: renderAll(s2), settings: other, networkAttachments: nads },
      passes.memo,
    );
    expect(fourth).toEqual(
      desiredState({ state: s2, outputs: renderAll(s2), settings: other, networkAttachments: nads }),
    );
    expect(objectsOf(fourth, "vlan200")).not.toBe(objectsOf(third.desired, "vlan200"));

    // An Infra that goes is forgotten; a NAD's config that changes recomputes its Infra only.
    const s3: ClusterState = { ...s2, infras: s2.infras.filter((i) => i.metadata.name !== "vlan200") };
    const fifth = passes.next(s3);
    expect(fifth.desired).toEqual(fifth.fresh);
    expect(fifth.desired.infras.map((i) => i.infra.name)).toEqual(["vlan100"]);

    // An Infra declared again (a new uid) and another one edited: the memo follows both.
    const again: ClusterState = {
      ...s2,
      infras: s2.infras.map((i) =>
        i.metadata.name === "vlan200"
          ? { ...i, metadata: { ...i.metadata, uid: "uid-vlan200-again" } }
          : {
              ...i,
              spec: { ...i.spec, infraComponents: { ...i.spec.infraComponents, proxy: { serverIP: "192.0.2.9" } } },
            },
      ),
    };
    const sixth = passes.next(again);
    expect(sixth.desired).toEqual(sixth.fresh);
    expect(JSON.stringify(objectsOf(sixth.desired, "vlan200"))).toContain("uid-vlan200-again");
  });

  it("reads the attachments of the state it is given, and drops the problem of an Infra that went", () => {
    const passes = new Passes();
    const s0 = start();
    passes.next(s0);
    const outputs = renderAll(s0);
    const input = (state: ClusterState) => ({ state, outputs, settings, networkAttachments: nads });
    desiredState(input(s0), passes.memo);
    // The same rendering, and hc2 terminating in the state: its NetworkPolicy claim goes.
    const s1: ClusterState = {
      ...s0,
      attachments: s0.attachments.map((a) =>
        a.metadata.name === "hc2"
          ? { ...a, metadata: { ...a.metadata, deletionTimestamp: "2026-12-01T00:00:00Z" } }
          : a,
      ),
    };
    expect(desiredState(input(s1), passes.memo)).toEqual(desiredState(input(s1)));
    // The same rendering, and a blocking problem about hc1 in the model: hc1 is not Ready any more.
    const blocked = {
      ...outputs,
      model: {
        ...outputs.model,
        problems: [
          ...outputs.model.problems,
          {
            object: { kind: "InfraClusterAttachment", namespace: NS, name: "hc1" },
            field: "spec",
            reason: "InvalidSpec",
            message: "planted",
            severity: "error",
          } as const,
        ],
      },
    };
    const withProblem = { state: s1, outputs: blocked, settings, networkAttachments: nads };
    const before = desiredState(input(s1), passes.memo);
    const after = desiredState(withProblem, passes.memo);
    expect(after).toEqual(desiredState(withProblem));
    // Its readiness is read again (vlan100's objects computed again); vlan200's are kept.
    expect(objectsOf(after, "vlan100")).not.toBe(objectsOf(before, "vlan100"));
    expect(objectsOf(after, "vlan200")).toBe(objectsOf(before, "vlan200"));

    // vlan200 without a uid (not observed yet): reported; then gone: so is its problem.
    const noUid: ClusterState = {
      ...s0,
      infras: s0.infras.map((i) =>
        i.metadata.name === "vlan200" ? { ...i, metadata: { ...i.metadata, uid: undefined } } : i,
      ),
    } as ClusterState;
    const waiting = passes.next(noUid);
    expect(waiting.desired.problems.map((p) => p.reason)).toEqual(["InfraNotObserved"]);
    const gone: ClusterState = { ...s0, infras: s0.infras.filter((i) => i.metadata.name !== "vlan200") };
    const later = passes.next(gone);
    expect(later.desired).toEqual(later.fresh);
    expect(later.desired.problems).toEqual([]);
    // And back, still without a uid: reported again.
    const back = passes.next(noUid);
    expect(back.desired).toEqual(back.fresh);
    expect(back.desired.problems.map((p) => p.reason)).toEqual(["InfraNotObserved"]);
  });
});
