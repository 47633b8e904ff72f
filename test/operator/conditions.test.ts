// Condition computation on its own (pure): Ready / Degraded / Progressing / <Component>Ready from
// the model's Ready and each component's readiness, transition times that move only on a status
// change, and which changes become Events.
import { describe, expect, it } from "vitest";
import {
  conditionEvents,
  infraConditions,
  nackEvent,
  withTransitionTimes,
  type ComponentReadiness,
  type ComponentReason,
} from "../../src/operator/status/conditions.js";
import type { ReadyCondition } from "../../src/model/status.js";

const OK: ReadyCondition = { type: "Ready", status: "True", reason: "ReconciliationSucceeded", message: "rendered" };
const INVALID: ReadyCondition = { type: "Ready", status: "False", reason: "InvalidCIDR", message: "spec.cidr: bad" };
const serving = (component: ComponentReadiness["component"]): ComponentReadiness => ({
  component,
  reason: "Serving",
  why: "",
});
const not = (component: ComponentReadiness["component"], reason: ComponentReason): ComponentReadiness => ({
  component,
  reason,
  why: `${component} ${reason}`,
});

/** type=status/reason, one string per condition. */
const short = (cs: readonly { type: string; status: string; reason: string }[]) =>
  cs.map((c) => `${c.type}=${c.status}/${c.reason}`);

const rows: {
  name: string;
  model: ReadyCondition;
  hasError: boolean;
  components: ComponentReadiness[] | undefined;
  want: string[];
}[] = [
  {
    name: "everything serving",
    model: OK,
    hasError: false,
    components: [serving("dhcp"), serving("dns"), serving("proxy")],
    want: [
      "Ready=True/ReconciliationSucceeded",
      "Degraded=False/AsExpected",
      "Progressing=False/Converged",
      "DHCPReady=True/Serving",
      "DNSReady=True/Serving",
      "ProxyReady=True/Serving",
    ],
  },
  {
    name: "a rollout waiting for its ACK is Progressing, not Degraded",
    model: OK,
    hasError: false,
    components: [serving("dhcp"), not("dns", "DeploymentUnavailable"), not("proxy", "NotAcknowledged")],
    want: [
      "Ready=False/ComponentsNotReady",
      "Degraded=False/AsExpected",
      "Progressing=True/RollingOut",
      "DHCPReady=True/Serving",
      "DNSReady=False/DeploymentUnavailable",
      "ProxyReady=False/NotAcknowledged",
    ],
  },
  {
    name: "a NACK is Degraded and not Progressing",
    model: OK,
    hasError: false,
    components: [not("proxy", "ConfigurationRejected")],
    want: [
      "Ready=False/ComponentsNotReady",
      "Degraded=True/ConfigurationRejected",
      "Progressing=False/Blocked",
      "ProxyReady=False/ConfigurationRejected",
    ],
  },
  {
    name: "an invalid Infra (no topology) is Degraded with the model's reason, no component conditions",
    model: INVALID,
    hasError: true,
    components: undefined,
    want: ["Ready=False/InvalidCIDR", "Degraded=True/InvalidCIDR", "Progressing=False/Blocked"],
  },
  {
    name: "waiting on something (pending, not an error) is not Degraded",
    model: { ...INVALID, reason: "HostedClusterNotFound" },
    hasError: false,
    components: undefined,
    want: ["Ready=False/HostedClusterNotFound", "Degraded=False/AsExpected", "Progressing=False/Blocked"],
  },
  {
    name: "a disabled component has no condition",
    model: OK,
    hasError: false,
    components: [serving("proxy")],
    want: [
      "Ready=True/ReconciliationSucceeded",
      "Degraded=False/AsExpected",
      "Progressing=False/Converged",
      "ProxyReady=True/Serving",
    ],
  },
];

describe("infraConditions", () => {
  it.each(rows)("$name", ({ model, hasError, components, want }) => {
    expect(short(infraConditions(model, hasError, components))).toEqual(want);
  });

  it("says which component waits for what in the Ready and Progressing messages", () => {
    const cs = infraConditions(OK, false, [not("dns", "ConfigMapOutdated"), not("proxy", "NotAcknowledged")]);
    expect(cs.find((c) => c.type === "Ready")?.message).toBe(
      "dns: dns ConfigMapOutdated; proxy: proxy NotAcknowledged",
    );
    expect(cs.find((c) => c.type === "Progressing")?.message).toBe(
      "dns: dns ConfigMapOutdated; proxy: proxy NotAcknowledged",
    );
  });
});

describe("withTransitionTimes", () => {
  const T0 = "2024-05-01T10:00:00Z";
  const NOW = Date.parse("2025-01-01T00:00:00Z");
  const previous = [
    { type: "ProxyReady", status: "True", reason: "Serving", message: "", lastTransitionTime: T0 },
    { type: "Ready", status: "True", reason: "ReconciliationSucceeded", message: "", lastTransitionTime: T0 },
    { type: "SomeoneElses", status: "True", reason: "X", message: "", lastTransitionTime: T0 },
  ];

  it("keeps the time of an unchanged status, moves it on a flip or a new type, and writes in a fixed order", () => {
    const cs = withTransitionTimes(
      infraConditions(OK, false, [not("proxy", "NotAcknowledged"), serving("dns")]).reverse(),
      previous,
      4,
      NOW,
    );
    expect(cs.map((c) => [c.type, c.lastTransitionTime, c.observedGeneration])).toEqual([
      ["Ready", "2025-01-01T00:00:00Z", 4],
      ["Degraded", "2025-01-01T00:00:00Z", 4],
      ["Progressing", "2025-01-01T00:00:00Z", 4],
      ["DNSReady", "2025-01-01T00:00:00Z", 4],
      ["ProxyReady", "2025-01-01T00:00:00Z", 4],
    ]);
    const same = withTransitionTimes(infraConditions(OK, false, [serving("proxy")]), previous, undefined, NOW);
    expect(same.find((c) => c.type === "Ready")?.lastTransitionTime).toBe(T0);
    expect(same.find((c) => c.type === "ProxyReady")?.lastTransitionTime).toBe(T0);
    expect(same.find((c) => c.type === "Ready")).not.toHaveProperty("observedGeneration");
  });

  it("keeps the time when only reason or message changes", () => {
    const cs = withTransitionTimes(
      [{ type: "Ready", status: "True", reason: "Other", message: "changed" }],
      previous,
      1,
      NOW,
    );
    expect(cs[0]?.lastTransitionTime).toBe(T0);
  });
});

describe("conditionEvents", () => {
  const before = [
    { type: "Ready", status: "True" },
    { type: "Degraded", status: "False" },
    { type: "Progressing", status: "False" },
    { type: "ProxyReady", status: "True" },
  ];

  it("announces each status change, Warning when it becomes unhealthy, and never Progressing", () => {
    const next = infraConditions(OK, false, [not("proxy", "ConfigurationRejected")]);
    expect(conditionEvents(next, before)).toEqual([
      { type: "Warning", reason: "ComponentsNotReady", message: "Ready is False: proxy: proxy ConfigurationRejected" },
      {
        type: "Warning",
        reason: "ConfigurationRejected",
        message: "Degraded is True: proxy: proxy ConfigurationRejected",
      },
      { type: "Warning", reason: "ConfigurationRejected", message: "ProxyReady is False: proxy ConfigurationRejected" },
    ]);
    const recovered = infraConditions(OK, false, [serving("proxy")]);
    expect(conditionEvents(recovered, before)).toEqual([]);
    expect(conditionEvents(recovered, [{ type: "Ready", status: "False" }]).map((e) => [e.type, e.reason])).toEqual([
      ["Normal", "ReconciliationSucceeded"],
    ]);
  });

  it("announces a first status only when it is unhealthy", () => {
    expect(conditionEvents(infraConditions(OK, false, [serving("dns")]), [])).toEqual([]);
    expect(conditionEvents(infraConditions(INVALID, true, undefined), []).map((e) => e.message)).toEqual([
      "Ready is False: spec.cidr: bad",
      "Degraded is True: spec.cidr: bad",
    ]);
  });

  it("announces a NACK once: not again while the status already reports the same text", () => {
    expect(nackEvent("bad cluster", undefined)).toEqual({
      type: "Warning",
      reason: "ConfigurationRejected",
      message: "the data plane rejected the configuration: bad cluster",
    });
    expect(nackEvent("bad cluster", "bad cluster")).toBeUndefined();
    expect(nackEvent("worse", "bad cluster")?.message).toContain("worse");
    expect(nackEvent(undefined, "bad cluster")).toBeUndefined();
  });
});
