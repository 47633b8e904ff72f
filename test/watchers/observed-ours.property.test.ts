// Our kinds in a snapshot after watch events: the decoded lists, the refused versions and the
// unknown fields patched at the changed keys must be what decoding every object gives — for any
// run of events that add, replace (valid, refused by the schema, with an undeclared field) and
// delete Infras and attachments, in any namespace.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildObserved, type DecodeCache, type Observed } from "../../src/watchers/kube/observed.js";
import { WATCHED_RESOURCES, type ResourceName } from "../../src/watchers/kube/resources.js";
import type { KubeObject } from "../../src/kube/rest.js";
import { attachment, infra } from "../support/fixtures.js";

type Raw = Record<ResourceName, Map<string, KubeObject>>;

const empty = (): Raw =>
  Object.fromEntries(WATCHED_RESOURCES.map((r) => [r.name, new Map<string, KubeObject>()])) as Raw;

const shapes = ["valid", "refused", "unknown-field", "deleted"] as const;
const event = fc.record({
  resource: fc.constantFrom<"infras" | "attachments">("infras", "attachments"),
  namespace: fc.constantFrom("clusters", "a-b", "a"),
  name: fc.integer({ min: 0, max: 5 }),
  shape: fc.constantFrom(...shapes),
});
type Event = typeof event extends fc.Arbitrary<infer T> ? T : never;

function objectOf(e: Event, version: number): KubeObject | undefined {
  if (e.shape === "deleted") return undefined;
  const base = (e.resource === "infras"
    ? infra(`vlan${e.name}`, {}, e.namespace)
    : attachment(`hc${e.name}`, { namespace: e.namespace, cluster: `c${version}` })) as unknown as KubeObject & {
    spec: Record<string, unknown>;
  };
  const spec =
    e.shape === "refused"
      ? { ...base.spec, ...(e.resource === "infras" ? { networkConfig: 7 } : { dns: "none" }) }
      : e.shape === "unknown-field"
        ? { ...base.spec, colour: `blue${version}` }
        : base.spec;
  return { ...base, metadata: { ...base.metadata, resourceVersion: String(version) }, spec };
}

describe("our kinds after watch events", () => {
  it("are decoded as a snapshot built from nothing decodes them", () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(event, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 20 }),
        (batches) => {
          let raw = empty();
          const cache: DecodeCache = new WeakMap();
          let last: Observed = buildObserved(raw, 0, cache);
          let version = 0;
          for (const batch of batches) {
            const next = { ...raw, infras: new Map(raw.infras), attachments: new Map(raw.attachments) };
            const dirty = new Map<ResourceName, Set<string>>();
            for (const e of batch) {
              const key = `${e.namespace}/${e.resource === "infras" ? "vlan" : "hc"}${e.name}`;
              const o = objectOf(e, ++version);
              if (o === undefined) next[e.resource].delete(key);
              else next[e.resource].set(key, o);
              dirty.set(e.resource, (dirty.get(e.resource) ?? new Set()).add(key));
            }
            last = buildObserved(next, last.seq + 1, cache, { observed: last, dirty });
            raw = next;
            const whole = buildObserved(raw, last.seq).state;
            expect(last.state.infras).toEqual(whole.infras);
            expect(last.state.attachments).toEqual(whole.attachments);
            expect(last.state.invalid).toEqual(whole.invalid);
            expect(last.state.unknownFields).toEqual(whole.unknownFields);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
