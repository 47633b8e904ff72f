// Last good per object: a table of (accepted state, edit) → what is served and what status says.
import { describe, expect, it } from "vitest";
import { renderAll, STATUS_FILE, type Outputs } from "../../src/pipeline/outputs.js";
import { readyCondition } from "../../src/model/status.js";
import type { ClusterState, ObjectRef } from "../../src/model/types.js";
import { attachment, combine, hostedCluster, infra, NS } from "../support/fixtures.js";

const T0 = Date.parse("2026-01-01T10:00:00Z");
const T1 = Date.parse("2026-01-01T11:00:00Z");
const alpha = attachment("alpha");
const beta = attachment("beta");
const base = combine(
  { infras: [infra()], attachments: [alpha, beta] },
  hostedCluster("alpha", 1, ["192.0.2.10"]),
  hostedCluster("beta", 2, ["192.0.2.20"]),
);
const INFRA: ObjectRef = { kind: "Infra", namespace: NS, name: "vlan100" };
const BETA: ObjectRef = { kind: "InfraClusterAttachment", namespace: NS, name: "beta" };

const dataFiles = (o: Outputs) => new Map([...o.files].filter(([p]) => p !== STATUS_FILE));
const ready = (o: Outputs, ref: ObjectRef) =>
  readyCondition(o.model.problems.filter((p) => p.object.kind === ref.kind && p.object.name === ref.name));

interface Row {
  name: string;
  edit: ClusterState;
  /** The object refused, its Ready reason. */
  refused: ObjectRef;
  reason: string;
}

const rows: Row[] = [
  {
    name: "an Infra field the schema refuses (cidr /33)",
    edit: {
      ...base,
      infras: [],
      invalid: [
        {
          ref: INFRA,
          errors: [{ field: "spec.networkConfig.cidr", message: "must match an IPv4 CIDR such as 192.0.2.0/24" }],
        },
      ],
    },
    refused: INFRA,
    reason: "InvalidSpec",
  },
  {
    name: "an Infra the model refuses (gateway outside the CIDR)",
    edit: { ...base, infras: [infra("vlan100", { networkConfig: { gateway: "10.0.0.1" } })] },
    refused: INFRA,
    reason: "InvalidSpec",
  },
  {
    name: "an attachment edited to claim another's domain (clusterName: alpha on beta)",
    edit: { ...base, attachments: [alpha, attachment("beta", { cluster: "alpha" })] },
    refused: BETA,
    reason: "DuplicateHostname",
  },
  {
    name: "an attachment edited to a missing Infra",
    edit: { ...base, attachments: [alpha, attachment("beta", { infra: "nope" })] },
    refused: BETA,
    reason: "InfraNotFound",
  },
  {
    name: "an attachment the schema refuses",
    edit: {
      ...base,
      attachments: [alpha],
      invalid: [{ ref: BETA, errors: [{ field: "spec.dns.clusterName", message: "must be a lower-case DNS label" }] }],
    },
    refused: BETA,
    reason: "InvalidSpec",
  },
];

describe("last good per object", () => {
  it.each(rows)("$name keeps every output as accepted, Ready=False saying since when", ({ edit, refused, reason }) => {
    const first = renderAll(base, { now: T0 });
    const second = renderAll(edit, { lastGood: first.lastGood, now: T1, previous: first.files });
    expect(dataFiles(second)).toEqual(dataFiles(first));
    const cond = ready(second, refused);
    expect([cond.status, cond.reason]).toEqual(["False", reason]);
    expect(cond.message).toContain("the configuration accepted at 2026-01-01T10:00:00Z is still served");
    // Still refused on the next rendering, still dated from the first acceptance.
    const third = renderAll(edit, {
      lastGood: second.lastGood,
      now: Date.parse("2026-01-01T12:00:00Z"),
      previous: second.files,
    });
    expect(dataFiles(third)).toEqual(dataFiles(first));
    expect(ready(third, refused).message).toContain("2026-01-01T10:00:00Z");
  });

  it.each(rows)("$name, never accepted before, serves nothing of that object", ({ edit, refused }) => {
    const out = renderAll(edit, { now: T1 });
    expect(ready(out, refused).message).not.toContain("still served");
    if (refused.kind === "Infra") expect(out.infras).toEqual([]);
    else
      expect(out.infras.flatMap((r) => r.topology.attachments.filter((a) => a.served).map((a) => a.ref.name))).toEqual([
        "alpha",
      ]);
  });

  it("a fixed edit is served and becomes the new last good, dated when it was accepted", () => {
    const first = renderAll(base, { now: T0 });
    const edited = combine(base, {});
    const bad = renderAll(
      { ...edited, infras: [infra("vlan100", { networkConfig: { gateway: "10.0.0.1" } })] },
      { lastGood: first.lastGood, now: T1 },
    );
    const fixed = renderAll(
      { ...edited, infras: [infra("vlan100", { networkConfig: { dnsServers: ["198.51.100.54"] } })] },
      { lastGood: bad.lastGood, now: T1 },
    );
    expect(ready(fixed, INFRA).status).toBe("True");
    expect(fixed.lastGood.infras.get("Infra/clusters/vlan100")?.acceptedAt).toBe("2026-01-01T11:00:00Z");
    expect(dataFiles(fixed)).not.toEqual(dataFiles(first));
  });

  it("a deleted object is forgotten: recreating it invalid serves nothing", () => {
    const first = renderAll(base, { now: T0 });
    const gone = renderAll({ ...base, infras: [] }, { lastGood: first.lastGood, now: T1 });
    const back = renderAll(
      { ...base, infras: [infra("vlan100", { networkConfig: { gateway: "10.0.0.1" } })] },
      { lastGood: gone.lastGood, now: T1 },
    );
    expect(back.infras).toEqual([]);
  });
});
