// The incremental build's inputs besides the watched objects (src/model/incremental/rebuild.ts):
// the schema's problems, the clock, the incumbents of each kind of claim, and an Infra known only
// by its problems. Each step is compared with build() of the whole state, and the Infras it
// rebuilds are named: what is not read again must not be built again.
import { describe, expect, it } from "vitest";
import { build } from "../../../src/model/build.js";
import { changesBetween } from "../../../src/model/incremental/infras-read.js";
import {
  buildFrom,
  buildIncremental,
  inputsOf,
  type IncrementalBuild,
} from "../../../src/model/incremental/rebuild.js";
import type { BuildResult, ClusterState, InvalidObject } from "../../../src/model/types.js";
import { attachment, combine, hostedCluster, infra, NS, VLAN200, vmi } from "../../support/fixtures.js";

/** Infra a serves h1, b (another NAD) serves h2. */
const base: ClusterState = combine(
  { infras: [infra("a"), infra("b", VLAN200)] },
  { attachments: [attachment("h1", { infra: "a" }), attachment("h2", { infra: "b" })] },
  hostedCluster("h1", 1, ["192.0.2.10"]),
  hostedCluster("h2", 2, ["198.51.100.10"]),
);

const invalid = (kind: string, name: string, field = "spec.x"): InvalidObject => ({
  ref: { kind, namespace: NS, name },
  errors: [{ field, message: "must be a string" }],
});

/** One step from `prev` (built from `before`) to `after`; checked against build(after). */
function step(prev: IncrementalBuild, before: ClusterState, after: ClusterState): IncrementalBuild {
  const next = buildIncremental(prev, changesBetween(before, after), inputsOf(after));
  expect(plain(next.result)).toEqual(plain(build(after)));
  return next;
}

const rebuiltOf = (b: IncrementalBuild): string[] => [...b.rebuilt].sort();

describe("the schema's problems", () => {
  it("are reported by the first build, follow each change of either list, and are kept while neither changes", () => {
    const unknown = [invalid("Infra", "a", "spec.extra")];
    const s0 = { ...base, invalid: [invalid("InfraClusterAttachment", "bad")], unknownFields: unknown };
    const first = buildFrom(s0);
    expect(plain(first.result)).toEqual(plain(build(s0)));
    expect(first.result.problems.some((p) => p.object.name === "bad")).toBe(true);

    // Another invalid attachment, the same unknown fields: no Infra is read again.
    const s1 = {
      ...s0,
      invalid: [invalid("InfraClusterAttachment", "bad"), invalid("InfraClusterAttachment", "worse")],
    };
    const second = step(first, s0, s1);
    expect(second.result.problems.some((p) => p.object.name === "worse")).toBe(true);
    expect(rebuiltOf(second)).toEqual([]);

    // Only the unknown fields change.
    const s2 = { ...s1, unknownFields: [...unknown, invalid("Infra", "b", "spec.other")] };
    const third = step(second, s1, s2);
    expect(third.result.problems.some((p) => p.object.name === "b" && p.field === "spec.other")).toBe(true);

    // Neither list changes: the schema's problems are the very ones of the step before.
    const s3 = { ...s2, vmis: [vmi(NS, "vm-1", "02:00:00:00:00:01")] };
    const fourth = step(third, s2, s3);
    expect(fourth.schemaProblems).toBe(third.schemaProblems);
    expect(rebuiltOf(fourth)).toEqual(["clusters/a"]);
  });

  it("an invalid Infra rebuilds its attachments' Infra when it appears or goes, not while it stays", () => {
    const first = buildFrom(base);
    const s1 = { ...base, invalid: [invalid("Infra", "b")] };
    expect(rebuiltOf(step(first, base, s1))).toEqual(["clusters/b"]);
    const second = buildIncremental(first, changesBetween(base, s1), inputsOf(s1));
    // Still invalid, in a new list beside an invalid attachment: b is not read again.
    const s2 = { ...s1, invalid: [invalid("Infra", "b"), invalid("InfraClusterAttachment", "bad")] };
    const third = step(second, s1, s2);
    expect(rebuiltOf(third)).toEqual([]);
    const s3 = { ...s2, invalid: [invalid("InfraClusterAttachment", "bad")] };
    expect(rebuiltOf(step(third, s2, s3))).toEqual(["clusters/b"]);
  });
});

describe("the clock", () => {
  /** a's VM, with the table the build gave it; then the VM goes: its address is released and held. */
  const withVm = { ...base, vmis: [vmi(NS, "vm-1", "02:00:00:00:00:01")], now: 1e12 };
  const start = buildFrom(withVm);
  const gone = { ...withVm, vmis: [], dhcpAllocations: tables(start.result) };
  const released = buildIncremental(start, changesBetween(withVm, gone), inputsOf(gone));

  it("alone, rebuilds the Infras holding a released allocation, stamped by the build or read from the table", () => {
    expect(plain(released.result)).toEqual(plain(build(gone)));
    expect(released.result.topologies[0]?.dhcp?.allocations.some((a) => a.releasedAt !== undefined)).toBe(true);
    // The table still holds the VM as active: the release is the build's own.
    const later = { ...gone, now: 1e12 + 60_000 };
    const ticked = step(released, gone, later);
    expect(rebuiltOf(ticked)).toEqual(["clusters/a"]);
    // The table fed back holds the release itself.
    const fed = { ...later, dhcpAllocations: tables(ticked.result) };
    const read = step(ticked, later, fed);
    const expired = { ...fed, now: 1e12 + 7_200_000 };
    const freed = step(read, fed, expired);
    expect(rebuiltOf(freed)).toEqual(["clusters/a"]);
    expect(freed.result.topologies[0]?.dhcp?.allocations).toEqual([]);
    // The table fed back no longer holds it: nothing reads the clock, which alone rebuilds nothing.
    const cleared = { ...expired, dhcpAllocations: tables(freed.result) };
    const quiet = step(freed, expired, cleared);
    expect(rebuiltOf(step(quiet, cleared, { ...cleared, now: 1e12 + 7_260_000 }))).toEqual([]);
  });

  it("stepped back (a wall clock corrected), brings back a release the table holds and the last build had let go", () => {
    const releasedAt = "2026-01-01T00:00:00.000Z";
    const held = {
      ...base,
      dhcpAllocations: new Map([
        [`${NS}/a-dhcp`, [{ mac: "02:00:00:00:00:09", ip: "192.0.2.150", vmi: `${NS}/gone`, releasedAt }]],
      ]),
      now: Date.parse(releasedAt) + 7_200_000,
    };
    const first = buildFrom(held);
    expect(first.result.topologies[0]?.dhcp?.allocations).toEqual([]);
    const back = { ...held, now: Date.parse(releasedAt) + 600_000 };
    const next = step(first, held, back);
    expect(rebuiltOf(next)).toEqual(["clusters/a"]);
    expect(next.result.topologies[0]?.dhcp?.allocations.map((a) => a.ip)).toEqual(["192.0.2.150"]);
  });

  it("does not rebuild an Infra whose allocations are all live", () => {
    const live = { ...withVm, dhcpAllocations: tables(start.result) };
    const fed = step(start, withVm, live);
    expect(rebuiltOf(step(fed, live, { ...live, now: 1e12 + 60_000 }))).toEqual([]);
  });

  it("unchanged, rebuilds no timed Infra for a change elsewhere", () => {
    const elsewhere = { ...gone, machines: [...gone.machines].filter((m) => m.metadata.namespace !== `${NS}-h2`) };
    expect(rebuiltOf(step(released, gone, elsewhere))).toEqual(["clusters/b"]);
  });
});

describe("incumbents", () => {
  /** h1 on a and, younger, h1b on b, both under the same domain: a holds the domain by age. */
  const shared = combine(
    { infras: [infra("a"), infra("b", VLAN200)] },
    {
      attachments: [
        attachment("h1", { infra: "a", created: "2026-01-01T00:00:00Z" }),
        attachment("h1b", { infra: "b", hc: "h2", cluster: "h1", created: "2026-02-01T00:00:00Z" }),
      ],
    },
    hostedCluster("h1", 1, ["192.0.2.10"]),
    hostedCluster("h2", 2, ["198.51.100.10"]),
  );

  it("a domain's incumbent naming the younger claimant rebuilds both claimants' Infras", () => {
    const first = buildFrom(shared);
    const domainClaim = [...first.result.claims.keys()].find((k) => k.startsWith("domain:"));
    expect(domainClaim).toBeDefined();
    const moved = { ...shared, incumbents: new Map([[domainClaim ?? "", `${NS}/h1b`]]) };
    const next = step(first, shared, moved);
    expect(rebuiltOf(next)).toEqual(["clusters/a", "clusters/b"]);
    expect(next.result.claims.get(domainClaim ?? "")).toBe(`${NS}/h1b`);
  });

  it("a worker claim's incumbent rebuilds the Infra named in the claim", () => {
    const first = buildFrom(base);
    const worker = [...first.result.claims.entries()].find(([k]) => k.startsWith("worker:clusters/b:"));
    expect(worker).toBeDefined();
    const [key = ""] = worker ?? [];
    const moved = { ...base, incumbents: new Map([[key, `${NS}/someone-else`]]) };
    expect(rebuiltOf(step(first, base, moved))).toEqual(["clusters/b"]);
  });
});

describe("an Infra known only by its problems", () => {
  it("an attachment naming a missing Infra, edited twice: the problem is replaced, not repeated", () => {
    const first = buildFrom(base);
    const s1 = { ...base, attachments: [...base.attachments, attachment("lost", { infra: "nope" })] };
    const second = step(first, base, s1);
    const s2 = {
      ...s1,
      attachments: [...base.attachments, attachment("lost", { infra: "nope", baseDomain: "other.example.com" })],
    };
    const third = step(second, s1, s2);
    expect(rebuiltOf(third)).toEqual(["clusters/nope"]);
    expect(third.result.problems.filter((p) => p.object.name === "lost")).toHaveLength(
      build(s2).problems.filter((p) => p.object.name === "lost").length,
    );
    // Gone again: no problem about it is left.
    const fourth = step(third, s2, base);
    expect(fourth.result.problems.some((p) => p.object.name === "lost")).toBe(false);
  });
});

function tables(result: BuildResult): NonNullable<ClusterState["dhcpAllocations"]> {
  return new Map(result.topologies.flatMap((t) => (t.dhcp === undefined ? [] : [[t.dhcp.name, t.dhcp.allocations]])));
}

/** The claims as a plain Map (toEqual compares classes: a view, LayeredClaims). */
function plain(result: BuildResult): BuildResult {
  return { ...result, claims: new Map(result.claims) };
}
