// The DNS files the operator's rendering continues from (src/operator/inputs/dns-previous.ts): the
// cluster's ConfigMaps' data, and the last rendering's own for a DNS child whose ConfigMap is not
// observed — so a pending ConfigMap does not make renderAll render its Infra again on every watch
// event. While the cluster holds exactly what was rendered, no file map is built at all
// (`dnsPrevious` → undefined); each row checks that this renders what the full map renders.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  ClusterHolds,
  dnsPrevious,
  withRenderedDns,
  type ClusterDnsFiles,
} from "../../src/operator/inputs/dns-previous.js";
import { renderAll, type Outputs, type RenderedInfra } from "../../src/pipeline/outputs.js";
import { patchMap, REMOVED } from "../../src/util/overlay-map.js";
import { attachment, combine, hostedCluster, infra, NS } from "../support/fixtures.js";

const state = combine(
  { infras: [infra("vlan100")] },
  { attachments: [attachment("hc1")] },
  hostedCluster("hc1", 1, []),
);
// A worker address appears: the kubernetes aliases join the zones, so the DNS files (and serials) move.
const withWorker = combine(
  { infras: [infra("vlan100")] },
  { attachments: [attachment("hc1")] },
  hostedCluster("hc1", 1, ["192.0.2.10"]),
);
const T0 = Date.parse("2026-01-01T00:00:00Z");
// Warmed: the second rendering is the first whose claims have incumbents (the first one's winners).
const cold = renderAll(state, { previous: new Map(), now: T0 });
const first = renderAll(state, { previous: cold.files, reuse: cold, lastGood: cold.lastGood, now: T0 });
const DIR = `${NS}/vlan100-dns`;
const rendered = Object.entries(first.infras[0]?.coreDns ?? {});
/** The rendering's files as the watch delivers them: equal strings in other objects. */
const asObserved = (): Record<string, string> => JSON.parse(JSON.stringify(first.infras[0]?.coreDns ?? {})) as never;

/** What the operator renders next from these ConfigMaps: with dnsPrevious's answer, and with the full map. */
function next(cluster: ClusterDnsFiles, last: Outputs = first): { fast: Outputs; full: Outputs } {
  const flat = new Map<string, string>();
  for (const [dir, data] of cluster) for (const [k, text] of Object.entries(data)) flat.set(`${dir}/${k}`, text);
  const previous = dnsPrevious(cluster, last, new ClusterHolds());
  const options = { reuse: last, lastGood: last.lastGood, now: T0 + 1000 };
  return {
    fast: renderAll(withWorker, { ...options, ...(previous === undefined ? {} : { previous }) }),
    full: renderAll(withWorker, { ...options, previous: withRenderedDns(flat, last) }),
  };
}

const SOA_SERIAL = /(SOA\s+\S+\s+\S+\s+\(?\s*)(\d+)/;
const serial = (text: string | undefined): number => Number(SOA_SERIAL.exec(text ?? "")?.[2]);
/** A zone file of the first rendering. */
const zoneKey = rendered.map(([k]) => k).find((k) => k.startsWith("db.")) ?? "";

describe("dnsPrevious", () => {
  it("is undefined while every ConfigMap holds what the last rendering rendered; the rendering equals the full map's", () => {
    expect(rendered.length).toBeGreaterThan(1);
    expect(zoneKey).not.toBe("");
    const cluster = new Map([[DIR, asObserved()]]);
    expect(dnsPrevious(cluster, first, new ClusterHolds())).toBeUndefined();
    const { fast, full } = next(cluster);
    expect(fast.files).toEqual(full.files);
    expect(fast.files).not.toEqual(first.files);
  });

  it("is undefined when the ConfigMap is not observed yet: the rendering continues from its own files, kept", () => {
    for (const cluster of [new Map(), new Map([[DIR, {}]])]) {
      expect(dnsPrevious(cluster, first, new ClusterHolds())).toBeUndefined();
      const again = renderAll(state, { reuse: first, lastGood: first.lastGood, now: T0 });
      expect(again.infras[0]).toBe(first.infras[0]);
      const { fast, full } = next(cluster);
      expect(fast.files).toEqual(full.files);
    }
  });

  it("a ConfigMap holding other content (an earlier leader's higher serial): the full map, serials continue from it", () => {
    const data = asObserved();
    const bumped = serial(data[zoneKey]) + 1000;
    data[zoneKey] = (data[zoneKey] ?? "").replace(SOA_SERIAL, (_, head: string) => `${head}${String(bumped)}`);
    expect(serial(data[zoneKey])).toBe(bumped);
    const cluster = new Map([[DIR, data]]);
    const previous = dnsPrevious(cluster, first, new ClusterHolds());
    expect(previous?.get(`${DIR}/${zoneKey}`)).toBe(data[zoneKey]);
    const { fast, full } = next(cluster);
    expect(fast.files).toEqual(full.files);
    // The same state rendered again keeps the cluster's serial, not the last rendering's.
    const again = renderAll(state, {
      previous: previous ?? new Map(),
      reuse: first,
      lastGood: first.lastGood,
      now: T0,
    });
    expect(serial(again.files.get(`${DIR}/${zoneKey}`))).toBe(bumped);
    expect(serial(first.files.get(`${DIR}/${zoneKey}`))).toBeLessThan(bumped);
  });

  it("a key more or less than rendered, or a DNS ConfigMap of a child the last rendering has not: the full map", () => {
    const extra = { ...asObserved(), "db.vlan.gone.example.com": "stale" };
    const fewer = Object.fromEntries(Object.entries(asObserved()).slice(1));
    const other = new Map([
      [DIR, asObserved()],
      [`${NS}/gone-dns`, { Corefile: ". {}" }],
    ]);
    for (const cluster of [new Map([[DIR, extra]]), new Map([[DIR, fewer]]), other]) {
      const previous = dnsPrevious(cluster, first, new ClusterHolds());
      expect(previous).toBeDefined();
      for (const [dir, files] of cluster)
        for (const [k, text] of Object.entries(files)) expect(previous?.get(`${dir}/${k}`)).toBe(text);
      const { fast, full } = next(cluster);
      expect(fast.files).toEqual(full.files);
    }
  });

  it("without a last rendering, the cluster's files as they are (the first rendering after a restart)", () => {
    const cluster = new Map([[DIR, asObserved()]]);
    expect([...(dnsPrevious(cluster, undefined, new ClusterHolds()) ?? [])]).toEqual(
      rendered.map(([k, text]) => [`${DIR}/${k}`, text]),
    );
    expect(dnsPrevious(new Map(), undefined, new ClusterHolds())?.size).toBe(0);
  });
});

describe("withRenderedDns", () => {
  it("adds the last rendering's files of a DNS child with no observed ConfigMap; renderAll then keeps its rendering", () => {
    const previous = withRenderedDns(new Map(), first);
    expect([...previous]).toEqual(rendered.map(([k, text]) => [`${DIR}/${k}`, text]));
    const second = renderAll(state, { previous, reuse: first, lastGood: first.lastGood, now: T0 });
    expect(second.infras[0]).toBe(first.infras[0]);
    // Without them the Infra is rendered again (same content, new objects).
    const again = renderAll(state, { previous: new Map(), reuse: first, lastGood: first.lastGood, now: T0 });
    expect(again.infras[0]).not.toBe(first.infras[0]);
    expect(again.infras[0]?.coreDns).toEqual(first.infras[0]?.coreDns);
  });

  it("an observed ConfigMap's data wins (the same map back), and no rendering adds nothing", () => {
    const observed = new Map(rendered.map(([k]) => [`${DIR}/${k}`, "as observed"]));
    expect(withRenderedDns(observed, first)).toBe(observed);
    const none = new Map<string, string>();
    expect(withRenderedDns(none, undefined)).toBe(none);
  });
});

describe("ClusterHolds", () => {
  /**
   * The rule, walked in full: every ConfigMap with data holds exactly the files a rendering rendered
   * for it — same keys, same texts — and no ConfigMap with data is one no rendering has.
   */
  const walked = (cluster: ClusterDnsFiles, infras: readonly RenderedInfra[]): boolean => {
    const rendered = new Map<string, Readonly<Record<string, string>>>();
    for (const r of infras) {
      const dns = r.topology.children.dns;
      if (dns !== undefined && r.coreDns !== undefined)
        rendered.set(`${dns.metadata.namespace}/${dns.metadata.name}`, r.coreDns);
    }
    return [...cluster].every(([key, data]) => {
      if (Object.keys(data).length === 0) return true;
      const files = rendered.get(key);
      return (
        files !== undefined &&
        JSON.stringify(Object.entries(data).sort()) === JSON.stringify(Object.entries(files).sort())
      );
    });
  };

  /** A rendering of Infra `i` with DNS files `files` (undefined: DNS disabled or refused). */
  const rendering = (i: number, files: Record<string, string> | undefined): RenderedInfra =>
    ({
      topology: { children: { dns: { metadata: { namespace: "ns", name: `i${String(i)}-dns` } } } },
      coreDns: files,
    }) as unknown as RenderedInfra;
  const FILES = [{ db: "one" }, { db: "two" }, { db: "two", extra: "x" }, {}];
  /** One step: an Infra's rendering replaced or gone, a ConfigMap's data set, copied, emptied or gone. */
  const step = fc.oneof(
    fc.record({
      on: fc.constant("rendering" as const),
      infra: fc.nat(5),
      files: fc.option(fc.nat(FILES.length - 1), { nil: undefined }),
      gone: fc.boolean(),
    }),
    fc.record({
      on: fc.constant("configmap" as const),
      infra: fc.nat(6),
      data: fc.oneof(fc.constant("rendered" as const), fc.constant("gone" as const), fc.nat(FILES.length - 1)),
      layered: fc.boolean(),
    }),
  );

  it("answers what a walk of every rendering and ConfigMap answers, after any sequence of changes", () => {
    const seen = { true: 0, false: 0 };
    fc.assert(
      fc.property(fc.array(fc.array(step, { maxLength: 4 }), { minLength: 1, maxLength: 40 }), (rounds) => {
        const holds = new ClusterHolds();
        let byInfra: ReadonlyMap<string, RenderedInfra> = new Map();
        let cluster = new Map<string, Readonly<Record<string, string>>>();
        for (const round of rounds) {
          const changes = new Map<string, RenderedInfra | typeof REMOVED>();
          const nextCluster = new Map(cluster);
          for (const s of round) {
            const key = `ns/i${String(s.infra)}`;
            if (s.on === "rendering") {
              const files = s.files === undefined ? undefined : FILES[s.files];
              changes.set(key, s.gone ? REMOVED : rendering(s.infra, files && { ...files }));
            } else {
              const cm = `ns/i${String(s.infra)}-dns`;
              const r = byInfra.get(key);
              if (s.data === "gone") nextCluster.delete(cm);
              else if (s.data === "rendered") {
                // What was rendered, as the watch brings it back: equal strings in another object.
                if (r?.coreDns !== undefined) nextCluster.set(cm, { ...r.coreDns });
              } else nextCluster.set(cm, { ...FILES[s.data] });
            }
          }
          // Renderings kept by the render chain are layered over the last; a fresh map now and then.
          byInfra = round.some((s) => s.on === "configmap" && s.layered)
            ? patchMap(byInfra, changes)
            : new Map([...patchMap(byInfra, changes)]);
          cluster = nextCluster;
          const last = { byInfra, infras: [...byInfra.values()] };
          const expected = walked(cluster, last.infras);
          expect(holds.holds(cluster, last)).toBe(expected);
          seen[expected ? "true" : "false"]++;
        }
      }),
      { numRuns: 300 },
    );
    // Both answers come up often: the property is not about one of them.
    expect(Math.min(seen.true, seen.false)).toBeGreaterThan(500);
  });
});
