// Problems → the Ready condition (docs/reference.md#status): an error, a pending wait or a conflict
// warning on a non-Infra object makes Ready False with the most severe one's reason (error before
// pending before warning, whatever order they were found in); other warnings leave it True; every
// problem is listed in the message. One status per object, sorted by kind/namespace/name.
import { describe, expect, it } from "vitest";
import { objectStatuses, readyCondition } from "../../src/model/status.js";
import type { ClusterState, ObjectRef, Problem, ProblemReason } from "../../src/model/types.js";
import { EMPTY_STATE } from "../../src/model/types.js";
import { build } from "../../src/model/build.js";
import { attachment, infra } from "../support/fixtures.js";

const A: ObjectRef = { kind: "InfraClusterAttachment", namespace: "ns", name: "a" };
const I: ObjectRef = { kind: "Infra", namespace: "ns", name: "i" };
const problem = (
  object: ObjectRef,
  severity: Problem["severity"],
  reason: ProblemReason,
  field: string,
  message: string,
): Problem => ({ object, severity, reason, field, message });

describe("readyCondition", () => {
  it("the most severe problem gives the reason, whatever order the problems came in", () => {
    const dup = problem(A, "warning", "DuplicateHostname", "spec.dns", "claimed by ns/b");
    const wait = problem(A, "pending", "InternalProxyServicePending", "", "waiting");
    const bad = problem(A, "error", "InvalidSpec", "spec.x", "bad");
    expect(readyCondition([dup, wait, bad])).toEqual({
      type: "Ready",
      status: "False",
      reason: "InvalidSpec",
      message: "spec.dns: claimed by ns/b; waiting; spec.x: bad",
    });
    expect(readyCondition([dup, wait]).reason).toBe("InternalProxyServicePending");
    expect(readyCondition([dup]).reason).toBe("DuplicateHostname");
  });

  it("other warnings, and an Infra's conflict warnings, leave Ready True and are listed", () => {
    expect(readyCondition([problem(A, "warning", "LegacyField", "spec.y", "ignored")])).toEqual({
      type: "Ready",
      status: "True",
      reason: "ReconciliationSucceeded",
      message: "spec.y: ignored",
    });
    expect(readyCondition([problem(I, "warning", "DuplicateHostedCluster", "", "refused ns/b")]).status).toBe("True");
    expect(readyCondition([]).message).toBe("configuration rendered");
  });
});

describe("objectStatuses", () => {
  it("one per Infra and attachment, sorted by kind/namespace/name whatever order the state lists them in", () => {
    const state: ClusterState = {
      ...EMPTY_STATE,
      infras: [infra("zeta"), infra("alpha")],
      attachments: [attachment("b", { spec: { infraRef: { name: "alpha" } } }), attachment("a")],
    };
    expect(objectStatuses(state, build(state)).map((s) => `${s.object.kind}/${s.object.name}`)).toEqual([
      "Infra/alpha",
      "Infra/zeta",
      "InfraClusterAttachment/a",
      "InfraClusterAttachment/b",
    ]);
  });
});
