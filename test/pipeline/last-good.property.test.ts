// Property: over a random history of edits to two Infras and their attachments — good edits, edits
// the model or the schema refuses, deletions, restores — last good (docs/reference.md#last-good)
// holds at every rendering, judged from what a user sees, not from src/pipeline/last-good.ts:
// - the memory is exactly what an independent model of the documented rule says: an object whose
//   status is Ready=True is remembered with its current spec, dated when that spec was first
//   accepted; one that is not Ready keeps what it had; a deleted one is forgotten;
// - "the configuration accepted at T is still served" appears on an object's status only when T is
//   when its remembered version was accepted, and that version is then served;
// - the incremental step (serve's loop, reusing the previous rendering) equals a rendering from
//   scratch with the same memory, files and status included.
import fc from "fast-check";
import { expect, it } from "vitest";
import type { Infra, InfraClusterAttachment } from "../../src/api/schema.js";
import { readyCondition } from "../../src/model/status.js";
import type { ClusterState, InvalidObject } from "../../src/model/types.js";
import { renderAll, type Outputs } from "../../src/pipeline/outputs.js";
import { attachment, combine, hostedCluster, infra, NS, VLAN200 } from "../support/fixtures.js";

const A_NET = {
  networkConfig: { cidr: "192.0.2.0/24", gateway: "192.0.2.1", networkAttachmentDefinition: "vlan100" },
};

type Version = "base" | "good" | "bad" | "bad2" | "schema" | "gone";
const VERSIONS: readonly Version[] = ["base", "good", "bad", "bad2", "schema", "gone"];

interface Subject {
  readonly kind: "Infra" | "InfraClusterAttachment";
  readonly name: string;
  /** One object per version, made once: an unchanged object keeps its identity between renderings. */
  readonly versions: Partial<Record<Version, Infra | InfraClusterAttachment>>;
}

const infraSubject = (name: string, net: typeof A_NET | typeof VLAN200): Subject => ({
  kind: "Infra",
  name,
  versions: {
    base: infra(name, net),
    good: infra(name, { ...net, networkConfig: { ...net.networkConfig, dnsServers: ["192.0.2.53"] } }),
    // A gateway outside the CIDR: refused by the model.
    bad: infra(name, { ...net, networkConfig: { ...net.networkConfig, gateway: "10.9.9.9" } }),
    bad2: infra(name, { ...net, networkConfig: { ...net.networkConfig, gateway: "10.9.9.8" } }),
  },
});
const attachmentSubject = (name: string, on: string, other: string): Subject => ({
  kind: "InfraClusterAttachment",
  name,
  versions: {
    base: attachment(name, { infra: on }),
    // The other attachment's domain: refused as a newcomer, or winning it when the other goes.
    good: attachment(name, { infra: on, cluster: other }),
    bad: attachment(name, { infra: "nope" }),
    bad2: attachment(name, { infra: "nope-either" }),
  },
});
const SUBJECTS: readonly Subject[] = [
  infraSubject("a", A_NET),
  infraSubject("b", VLAN200),
  attachmentSubject("h1", "a", "h2"),
  attachmentSubject("h2", "b", "h1"),
];
const key = (s: Subject): string => `${s.kind}/${NS}/${s.name}`;
const world = combine(hostedCluster("h1", 1, ["192.0.2.10"]), hostedCluster("h2", 2, ["198.51.100.10"]));

function stateOf(versions: readonly Version[]): ClusterState {
  const infras: Infra[] = [];
  const attachments: InfraClusterAttachment[] = [];
  const invalid: InvalidObject[] = [];
  SUBJECTS.forEach((s, i) => {
    const v = versions[i] ?? "base";
    if (v === "gone") return;
    if (v === "schema") {
      const ref = { kind: s.kind, namespace: NS, name: s.name };
      invalid.push({ ref, errors: [{ field: "spec", message: "refused by the schema" }] });
      return;
    }
    const o = s.versions[v];
    if (s.kind === "Infra") infras.push(o as Infra);
    else attachments.push(o as InfraClusterAttachment);
  });
  return { ...world, infras, attachments, invalid };
}

interface Remembered {
  readonly spec: string;
  readonly acceptedAt: string;
}
const INVALID: ReadonlySet<Version> = new Set(["bad", "bad2", "schema"]);

const iso = (t: number): string => new Date(t).toISOString().replace(".000Z", "Z");
const readyOf = (out: Outputs, s: Subject) =>
  readyCondition(out.model.problems.filter((p) => p.object.kind === s.kind && p.object.name === s.name));
const memoryOf = (out: Outputs): Map<string, Remembered> =>
  new Map(
    [...out.lastGood.infras, ...out.lastGood.attachments].map(([k, a]) => [
      k,
      { spec: JSON.stringify(a.object.spec), acceptedAt: a.acceptedAt },
    ]),
  );
/** Whether this version of the subject is what the outputs serve, read from the served topology. */
const isServed = (out: Outputs, s: Subject, version: Infra | InfraClusterAttachment | undefined): boolean => {
  if (version === undefined) return false;
  if (s.kind === "Infra") return out.infras.some((r) => r.topology.infra.name === s.name);
  const spec = (version as InfraClusterAttachment).spec;
  return out.infras.some(
    (r) =>
      r.topology.infra.name === spec.infraRef.name &&
      r.topology.attachments.some(
        (a) => a.served && a.ref.name === s.name && a.domain === `${spec.dns.clusterName}.${spec.dns.baseDomain}`,
      ),
  );
};
const sortedClaims = (m: ReadonlyMap<string, string>) => [...m].sort(([a], [b]) => (a < b ? -1 : 1));

const T0 = Date.parse("2026-01-01T00:00:00Z");
const HOUR = 3_600_000;

it("last good over random edit histories: the documented memory, honest 'still served', incremental = from scratch", () => {
  const met = { stillServed: 0, fixedAfterRefusal: 0, forgotten: 0, notServedEither: 0 };
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.nat(SUBJECTS.length - 1), fc.constantFrom(...VERSIONS)), { minLength: 1, maxLength: 8 }),
      (edits) => {
        const versions: Version[] = SUBJECTS.map(() => "base");
        let inc = renderAll(stateOf(versions), { now: T0 });
        let ref = inc;
        let model = memoryOf(inc);
        edits.forEach(([i, v], n) => {
          const subject = SUBJECTS[i];
          if (subject === undefined) return;
          versions[i] = v;
          const now = T0 + (n + 1) * HOUR;
          const state = stateOf(versions);
          inc = renderAll(state, { now, previous: inc.files, reuse: inc, lastGood: inc.lastGood });
          ref = renderAll(state, { now, previous: ref.files, lastGood: ref.lastGood });

          expect(inc.files).toEqual(ref.files);
          expect({
            infras: new Map(inc.lastGood.infras),
            attachments: new Map(inc.lastGood.attachments),
            incumbents: sortedClaims(inc.lastGood.incumbents),
          }).toEqual({
            infras: new Map(ref.lastGood.infras),
            attachments: new Map(ref.lastGood.attachments),
            incumbents: sortedClaims(ref.lastGood.incumbents),
          });

          const before = model;
          model = new Map();
          for (const s of SUBJECTS) {
            const k = key(s);
            const v = versions[SUBJECTS.indexOf(s)] ?? "base";
            const was = before.get(k);
            if (v === "gone") {
              if (was !== undefined) met.forgotten++;
              continue;
            }
            const ready = readyOf(inc, s);
            const o = v === "schema" ? undefined : s.versions[v];
            // The test knows which versions are wrong: none of them is ever Ready.
            if (INVALID.has(v)) expect(ready.status).toBe("False");
            // Ready means served as it is now.
            if (ready.status === "True") expect(isServed(inc, s, o)).toBe(true);
            if (ready.status === "True" && o !== undefined) {
              const spec = JSON.stringify(o.spec);
              model.set(k, { spec, acceptedAt: was?.spec === spec ? was.acceptedAt : iso(now) });
              if (was !== undefined && was.spec !== spec) met.fixedAfterRefusal++;
            } else if (was !== undefined) model.set(k, was);

            const claim = /the configuration accepted at (\S+) is still served/.exec(ready.message);
            const remembered = [...inc.lastGood.infras, ...inc.lastGood.attachments].find(([k]) => k === key(s))?.[1];
            const lastServed = was !== undefined && isServed(inc, s, remembered?.object);
            // A refused edit of an object whose last good version is served says so (an unchanged
            // spec that fails for reasons outside it has nothing else to serve).
            if (ready.status === "False" && lastServed && was.spec !== JSON.stringify(o?.spec))
              expect(claim?.[0]).toBe(`the configuration accepted at ${was.acceptedAt} is still served`);
            if (claim !== null) {
              met.stillServed++;
              expect(ready.status).toBe("False");
              expect(claim[1]).toBe(was?.acceptedAt);
              // Only a remembered version that is served is claimed to be (its Infra may be gone, its
              // domain taken meanwhile: then the line says it is not served either).
              expect(lastServed).toBe(true);
            }
            const notEither = inc.model.problems.find(
              (p) => p.object.kind === s.kind && p.object.name === s.name && p.message.endsWith("is not served either"),
            );
            if (notEither !== undefined) {
              met.notServedEither++;
              expect(lastServed).toBe(false);
              expect(notEither.message).toContain(`the configuration accepted at ${was?.acceptedAt ?? "?"} is`);
            }
            // Each thing wrong with an object is said once.
            const lines = inc.model.problems
              .filter((p) => p.object.kind === s.kind && p.object.name === s.name)
              .map((p) => `${p.field}|${p.reason}|${p.message}`);
            expect(new Set(lines).size).toBe(lines.length);
          }
          expect(memoryOf(inc)).toEqual(model);
        });
      },
    ),
    { seed: 7, numRuns: 400 },
  );
  // A property that never met its cases proved nothing.
  expect(met.stillServed).toBeGreaterThan(0);
  expect(met.fixedAfterRefusal).toBeGreaterThan(0);
  expect(met.forgotten).toBeGreaterThan(0);
  expect(met.notServedEither).toBeGreaterThan(0);
});
