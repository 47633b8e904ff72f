// The NetworkAttachmentDefinitions' configs in a snapshot after watch events (each NAD the
// operator writes is one) are patched at the changed keys: they must be what reading every NAD
// gives — for any run of events that add, replace (with a config, without one) and delete them.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildObserved, type Observed } from "../../src/watchers/kube/observed.js";
import { WATCHED_RESOURCES, type ResourceName } from "../../src/watchers/kube/resources.js";
import type { KubeObject } from "../../src/kube/rest.js";

type Raw = Record<ResourceName, Map<string, KubeObject>>;

const empty = (): Raw =>
  Object.fromEntries(WATCHED_RESOURCES.map((r) => [r.name, new Map<string, KubeObject>()])) as Raw;

const event = fc.record({
  namespace: fc.constantFrom("clusters", "a"),
  name: fc.integer({ min: 0, max: 30 }),
  shape: fc.constantFrom("config", "same-config", "no-config", "deleted"),
});

describe("NAD configs after watch events", () => {
  it("are what a snapshot built from nothing reads", () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(event, { minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 30 }),
        (batches) => {
          let raw = empty();
          let last: Observed = buildObserved(raw, 0);
          let version = 0;
          for (const batch of batches) {
            const next = { ...raw, networkattachments: new Map(raw.networkattachments) };
            for (const e of batch) {
              const key = `${e.namespace}/vlan${e.name}`;
              version++;
              if (e.shape === "deleted") {
                next.networkattachments.delete(key);
                continue;
              }
              const spec =
                e.shape === "no-config" ? {} : { config: e.shape === "same-config" ? "{}" : `{"v":${version}}` };
              next.networkattachments.set(key, {
                metadata: { namespace: e.namespace, name: `vlan${e.name}`, resourceVersion: String(version) },
                spec,
              });
            }
            last = buildObserved(next, last.seq + 1, new WeakMap(), { observed: last, dirty: new Map() });
            raw = next;
            expect(new Map(last.networkAttachments)).toEqual(new Map(buildObserved(raw, last.seq).networkAttachments));
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
