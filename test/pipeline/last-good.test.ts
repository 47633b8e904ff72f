// Last good per object: a table of (accepted state, edit) → what is served and what status says.
import { describe, expect, it } from "vitest";
import { buildWithLastGood, NO_LAST_GOOD } from "../../src/pipeline/last-good.js";
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
    // status.json lists what is served as a warning of its own (docs/reference.md#last-good).
    expect(second.model.problems.filter((p) => p.reason === "ServingLastGood")).toEqual([
      {
        object: refused,
        field: "",
        reason: "ServingLastGood",
        severity: "warning",
        message: "this version is not applied; the configuration accepted at 2026-01-01T10:00:00Z is still served",
      },
    ]);
    // One story: what is wrong with this version and that the last good one is served — never also
    // "not served" (issue 27, finding 7).
    expect(cond.message).not.toMatch(/is not served/);
    // What is wrong is said as the same edit, with nothing to fall back on, says it, less that clause.
    const errorsOf = (o: Outputs) =>
      o.model.problems
        .filter((p) => p.severity === "error" && p.object.kind === refused.kind && p.object.name === refused.name)
        .map((p) => `${p.field}: ${p.message}`);
    expect(errorsOf(second)).toEqual(
      errorsOf(renderAll(edit, { now: T1 })).map((m) => m.replace(/; this \w+ is not served[^;]*$/, "")),
    );
    // A refused attachment leaves its Infra Ready: the Infra serves what it served.
    if (refused.kind !== "Infra") expect(ready(second, INFRA).status).toBe("True");
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

  it("a newcomer claiming a served domain is refused without failing the Infra, the Infra naming it", () => {
    const state = combine(
      { infras: [infra()], attachments: [alpha, beta, attachment("gamma", { cluster: "alpha" })] },
      hostedCluster("alpha", 1, ["192.0.2.10"]),
      hostedCluster("beta", 2, ["192.0.2.20"]),
      hostedCluster("gamma", 3, ["192.0.2.30"]),
    );
    const out = renderAll(state, { now: T1 });
    const infraReady = ready(out, INFRA);
    expect([infraReady.status, infraReady.reason]).toEqual(["True", "ReconciliationSucceeded"]);
    expect(infraReady.message).toMatch(/gamma refused: domain alpha\.\S+ is already served by alpha/);
    const gamma = ready(out, { kind: "InfraClusterAttachment", namespace: NS, name: "gamma" });
    expect([gamma.status, gamma.reason]).toEqual(["False", "DuplicateHostname"]);
    expect(gamma.message).toMatch(/this attachment is not served$/);
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

// Only a version served without an error is remembered: a version with errors that was remembered
// would later be "served instead" of the next bad edit, and the status would name a time at which
// nothing was accepted.
describe("a version with errors is never remembered", () => {
  const T2 = Date.parse("2026-01-01T12:00:00Z");
  const BETA_KEY = "InfraClusterAttachment/clusters/beta";
  const INFRA_KEY = "Infra/clusters/vlan100";
  const bad = [
    {
      name: "an Infra the model refuses, then another bad edit of it",
      key: INFRA_KEY,
      ref: INFRA,
      first: { ...base, infras: [infra("vlan100", { networkConfig: { gateway: "10.0.0.1" } })] },
      second: { ...base, infras: [infra("vlan100", { networkConfig: { gateway: "10.0.0.2" } })] },
    },
    {
      name: "an attachment to a missing Infra, then to another missing one",
      key: BETA_KEY,
      ref: BETA,
      first: { ...base, attachments: [alpha, attachment("beta", { infra: "nope" })] },
      second: { ...base, attachments: [alpha, attachment("beta", { infra: "nope-either" })] },
    },
  ];
  const memoryOf = (o: Outputs, key: string) => o.lastGood.infras.get(key) ?? o.lastGood.attachments.get(key);
  const servedAttachments = (o: Outputs) =>
    o.infras.flatMap((r) => r.topology.attachments.filter((a) => a.served).map((a) => a.ref.name));

  it.each(bad)("$name: nothing is remembered, served or said to be still served", ({ key, ref, first, second }) => {
    const atT0 = renderAll(first, { now: T0 });
    expect(ready(atT0, ref).status).toBe("False");

    const atT1 = renderAll(second, { lastGood: atT0.lastGood, now: T1, previous: atT0.files });
    const cond = ready(atT1, ref);
    expect(cond.status).toBe("False");
    expect(cond.message).not.toContain("still served");
    expect(atT1.model.problems.filter((p) => p.reason === "ServingLastGood")).toEqual([]);
    if (ref.kind === "Infra") expect(atT1.infras).toEqual([]);
    else expect(servedAttachments(atT1)).toEqual(["alpha"]);
    expect(memoryOf(atT0, key)).toBeUndefined();
    expect(memoryOf(atT1, key)).toBeUndefined();
  });

  it.each(bad)(
    "$name, after a good version at T0: every later refusal names T0 and serves it",
    ({ key, ref, first, second }) => {
      const good = renderAll(base, { now: T0 });
      const atT1 = renderAll(first, { lastGood: good.lastGood, now: T1, previous: good.files });
      const atT2 = renderAll(second, { lastGood: atT1.lastGood, now: T2, previous: atT1.files });
      for (const out of [atT1, atT2]) {
        expect(memoryOf(out, key)).toEqual(memoryOf(good, key));
        expect(ready(out, ref).message).toContain("the configuration accepted at 2026-01-01T10:00:00Z is still served");
        expect(dataFiles(out)).toEqual(dataFiles(good));
      }
    },
  );
});

// The status names when the served version was first accepted, not when it was last rendered.
describe("an accepted version keeps its first acceptance date", () => {
  it.each(rows)(
    "$name after renderings of the unchanged object names T0, not the later rendering",
    ({ edit, refused }) => {
      const first = renderAll(base, { now: T0 });
      const again = renderAll(base, { lastGood: first.lastGood, now: T1, previous: first.files });
      const bad = renderAll(edit, {
        lastGood: again.lastGood,
        now: Date.parse("2026-01-01T12:00:00Z"),
        previous: again.files,
      });
      const message = ready(bad, refused).message;
      expect(message).toContain("the configuration accepted at 2026-01-01T10:00:00Z is still served");
      expect(message).not.toContain("11:00:00Z");
    },
  );
});

// serve's loop renders each step from the previous one (reuse): the memory must come out as a
// rendering from scratch would have it, also for objects the step did not change.
describe("in serve's loop (each rendering continues from the last)", () => {
  const next = (last: Outputs, state: ClusterState, now: number): Outputs =>
    renderAll(state, { now, previous: last.files, reuse: last, lastGood: last.lastGood });
  const T2 = Date.parse("2026-01-01T12:00:00Z");

  it("an attachment made before its Infra is accepted once the Infra comes, and is then kept through a bad edit", () => {
    const withoutInfra = renderAll({ ...base, infras: [] }, { now: T0 });
    expect(ready(withoutInfra, BETA).reason).toBe("InfraNotFound");
    // The Infra arrives: beta itself did not change, but it is now served without an error.
    const arrived = next(withoutInfra, base, T1);
    expect(ready(arrived, BETA).status).toBe("True");
    const broken = next(arrived, { ...base, attachments: [alpha, attachment("beta", { infra: "nope" })] }, T2);
    const cond = ready(broken, BETA);
    expect([cond.status, cond.reason]).toEqual(["False", "InfraNotFound"]);
    expect(cond.message).toContain("the configuration accepted at 2026-01-01T11:00:00Z is still served");
    expect(dataFiles(broken)).toEqual(dataFiles(arrived));
  });
});

describe("what is served, asked for a few objects or for a whole memory", () => {
  // 80 attachments: a first build asks about every one (the union of what each Infra serves); a
  // later step about the few it touched (each Infra's own list, kept while the Infra is not rebuilt).
  const names = Array.from({ length: 80 }, (_, i) => `h${String(i)}`);
  const many = combine(
    { infras: [infra()], attachments: names.map((n) => attachment(n)) },
    ...names.map((n, i) => hostedCluster(n, i + 1, [`192.0.2.${String(10 + i)}`])),
  );
  it("remembers every served attachment on a first build, then the one edited", () => {
    const first = buildWithLastGood(many, NO_LAST_GOOD, "2026-01-01T10:00:00Z");
    expect([...first.memory.attachments.keys()].length).toBe(80);
    expect(first.memory.infras.size).toBe(1);
    const edited = {
      ...many,
      attachments: many.attachments.map((a) =>
        a.metadata.name === "h7" ? attachment("h7", { baseDomain: "other.example.com" }) : a,
      ),
    };
    const next = buildWithLastGood(edited, first.memory, "2026-01-01T11:00:00Z", {
      input: many,
      built: first,
    });
    const h7 = [...next.memory.attachments.values()].find((a) => a.object.metadata.name === "h7");
    expect(h7?.acceptedAt).toBe("2026-01-01T11:00:00Z");
    expect(h7?.object.spec.dns.baseDomain).toBe("other.example.com");
    expect([...next.memory.attachments.values()].filter((a) => a.acceptedAt === "2026-01-01T10:00:00Z")).toHaveLength(
      79,
    );
  });
});
