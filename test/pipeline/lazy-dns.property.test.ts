// Property: a rendering's CoreDNS files are made when first read (serve reads them only for
// --out, after the xDS push), yet whatever order renderings are read in, each one's files — SOA
// serials included — are exactly those of the same history read at once, as `serve --out` and the
// operator read them. The oracle is that eager history, made by the same renderAll read at each step.
import fc from "fast-check";
import { expect, it } from "vitest";
import type { ObjectChange } from "../../src/model/incremental/infras-read.js";
import type { ClusterState } from "../../src/model/types.js";
import { renderAll, type Outputs } from "../../src/pipeline/outputs.js";
import { attachment, combine, hostedCluster, infra, VLAN200 } from "../support/fixtures.js";

/** Versions of attachment h2 (other DNS names on Infra b, or none when it goes) and of Infra b (another api-int address). */
const H2 = [
  attachment("h2", { infra: "b" }),
  attachment("h2", { infra: "b", baseDomain: "example.org" }),
  undefined,
] as const;
const B = ["198.51.100.4", "198.51.100.5", "198.51.100.6"].map((ip) =>
  infra("b", { ...VLAN200, infraComponents: { ...VLAN200.infraComponents, proxy: { serverIP: ip } } }),
);
type Version = readonly [h2: number, b: number];

const base: ClusterState = combine(
  { infras: [infra("a")] },
  { attachments: [attachment("h1", { infra: "a" })] },
  hostedCluster("h1", 1, ["192.0.2.10"]),
  hostedCluster("h2", 2, ["198.51.100.10"]),
);
const T0 = Date.parse("2026-01-01T00:00:00Z");

const stateWith = ([h2v, bv]: Version): ClusterState => {
  const h2 = H2[h2v];
  return {
    ...base,
    infras: [...base.infras, B[bv] ?? infra("b", VLAN200)],
    attachments: h2 === undefined ? base.attachments : [...base.attachments, h2],
  };
};

/** Serve's loop over the history: each rendering continues from the last, its files unread. */
function history(versions: readonly Version[], read: (out: Outputs) => void): Outputs[] {
  const outs: Outputs[] = [];
  let state = stateWith([0, 0]);
  let last = renderAll(state, { now: T0 });
  read(last);
  outs.push(last);
  versions.forEach((v, i) => {
    const next = stateWith(v);
    const changes: ObjectChange[] = [];
    const h2Before = state.attachments.find((a) => a.metadata.name === "h2");
    const h2After = next.attachments.find((a) => a.metadata.name === "h2");
    if (h2Before !== h2After) changes.push({ kind: "InfraClusterAttachment", before: h2Before, after: h2After });
    const bBefore = state.infras.find((x) => x.metadata.name === "b");
    const bAfter = next.infras.find((x) => x.metadata.name === "b");
    if (bBefore !== bAfter) changes.push({ kind: "Infra", before: bBefore, after: bAfter });
    last = renderAll(next, { now: T0 + (i + 1) * 1000, reuse: last, lastGood: last.lastGood, changes });
    read(last);
    outs.push(last);
    state = next;
  });
  return outs;
}

const dnsFilesOf = (out: Outputs) => out.infras.map((r) => r.coreDns);

const serials = (out: Outputs): string[] =>
  out.infras.flatMap((r) =>
    Object.values(r.coreDns ?? {}).flatMap((text) => /SOA\s+\S+\s+\S+\s+\(?\s*(\d+)/.exec(text)?.[1] ?? []),
  );

it("renderings read in any order, or not at all, hold the files of the same history read at once", () => {
  let moved = 0;
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.nat(H2.length - 1), fc.nat(B.length - 1)), { minLength: 1, maxLength: 12 }),
      fc.array(fc.nat(12), { maxLength: 13 }),
      (versions, order) => {
        const eager = history(versions, dnsFilesOf);
        const lazy = history(versions, () => undefined);
        // Some renderings read in a random order (repeats and indices past the end skipped), then all.
        for (const i of order) if (i < lazy.length) dnsFilesOf(lazy[i] as Outputs);
        lazy.forEach((out, i) => {
          expect(dnsFilesOf(out)).toEqual(dnsFilesOf(eager[i] as Outputs));
        });
        if (eager.some((out) => serials(out).some((s) => Number(s) > 1))) moved++;
      },
    ),
    { numRuns: 60 },
  );
  // The histories did move serials past a first rendering's, or the comparison says little.
  expect(moved).toBeGreaterThan(10);
});
