// The snapshot cache: consistency refusal, content-hash versions, encode once, custom types.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { SnapshotCache, envoyTypeSpecs } from "../../../src/xds/cache/index.js";
import { setVersion } from "../../../src/xds/cache/snapshot.js";
import { encodeAny } from "../../../src/xds/cache/response-fragments.js";
import {
  CLUSTER_TYPE_URL,
  ENDPOINT_TYPE_URL,
  LISTENER_TYPE_URL,
  encodeResource,
  messageType,
} from "../../../src/xds/resource/protos.js";
import { ALPHA, BETA, GROUP, rendered } from "./fixtures.js";
import { checkEnvoySnapshot, envoyInput } from "../../../src/envoy/snapshot.js";

describe("SnapshotCache", () => {
  test("refuses an inconsistent snapshot and keeps the previous one", () => {
    const cache = new SnapshotCache({ check: checkEnvoySnapshot });
    const good = rendered([ALPHA]);
    expect(cache.setSnapshot(GROUP, envoyInput(good)).ok).toBe(true);
    const before = cache.getSnapshot(GROUP);
    const broken = { ...good, clusters: good.clusters.slice(1) }; // a listener now names a missing cluster
    const r = cache.setSnapshot(GROUP, envoyInput(broken));
    expect(r.ok).toBe(false);
    expect(r.ok ? [] : r.errors.join("\n")).toMatch(/does not exist/);
    expect(cache.getSnapshot(GROUP)).toBe(before);
  });

  test.each<[string, (r: ReturnType<typeof rendered>) => void, RegExp]>([
    [
      "a tcp_proxy without stat_prefix",
      (r) => {
        const l = r.listeners.find((x) => (x as { name?: string }).name === "https-443") as {
          filter_chains: { filters: { typed_config: Record<string, unknown> }[] }[];
        };
        delete l.filter_chains[0]?.filters[0]?.typed_config["stat_prefix"];
      },
      /tcp_proxy has no stat_prefix/,
    ],
    [
      "a connect_timeout of 0s",
      (r) => {
        (r.clusters[0] as Record<string, unknown>)["connect_timeout"] = "0s";
      },
      /is not greater than 0s/,
    ],
    [
      "an empty cluster name",
      (r) => {
        (r.clusters[0] as Record<string, unknown>)["name"] = "";
      },
      /a cluster has an empty name/,
    ],
  ])("refuses what Envoy's validation rules reject: %s", (_what, breakIt, says) => {
    const cache = new SnapshotCache({ check: checkEnvoySnapshot });
    const broken = structuredClone(rendered([ALPHA]));
    breakIt(broken);
    const r = cache.setSnapshot(GROUP, envoyInput(broken));
    expect(r.ok ? "" : r.errors.join("\n")).toMatch(says);
    expect(cache.getSnapshot(GROUP)).toBeUndefined();
  });

  test("refuses unknown types, unencodable resources and mismatched names", () => {
    const cache = new SnapshotCache({ check: checkEnvoySnapshot });
    const unknown = cache.setSnapshot(
      GROUP,
      new Map([["type.googleapis.com/nope.Nope", [{ name: "x", resource: {} }]]]),
    );
    expect(unknown.ok ? [] : unknown.errors).toEqual(["resource type type.googleapis.com/nope.Nope is not registered"]);
    const bad = cache.setSnapshot(
      GROUP,
      new Map([[CLUSTER_TYPE_URL, [{ name: "c", resource: { name: "c", no_such_field: 1 } }]]]),
    );
    expect(bad.ok ? "" : bad.errors.join()).toMatch(/no_such_field/);
    const renamed = cache.setSnapshot(GROUP, new Map([[CLUSTER_TYPE_URL, [{ name: "c", resource: { name: "d" } }]]]));
    expect(renamed.ok ? "" : renamed.errors.join()).toMatch(/calls itself "d"/);
    expect(cache.getSnapshot(GROUP)).toBeUndefined();
  });

  test("versions are content hashes per type: unchanged output is not a change", () => {
    const cache = new SnapshotCache({ check: checkEnvoySnapshot });
    const heard: string[][] = [];
    cache.subscribe((_g, _s, changed) => {
      heard.push([...changed]);
    });
    const first = cache.setSnapshot(GROUP, envoyInput(rendered([ALPHA])));
    expect(first.ok && first.changed.length).toBe(4);
    const same = cache.setSnapshot(GROUP, envoyInput(rendered([ALPHA])));
    expect(same.ok && same.changed).toEqual([]);
    const more = cache.setSnapshot(GROUP, envoyInput(rendered([ALPHA, BETA])));
    expect(more.ok && [...more.changed].sort()).toEqual(
      [...envoyTypeSpecs().keys()]
        .filter((t) => t !== "type.googleapis.com/envoy.config.route.v3.RouteConfiguration")
        .sort(),
    );
    expect(heard).toHaveLength(2);
    // Back to the first content: back to the first versions.
    cache.setSnapshot(GROUP, envoyInput(rendered([ALPHA])));
    expect(cache.getSnapshot(GROUP)?.types.get(LISTENER_TYPE_URL)?.version).toBe(
      first.ok ? first.snapshot.types.get(LISTENER_TYPE_URL)?.version : "",
    );
  });

  test("the order resources are handed over in is no change: each type is held, versioned and served by name", () => {
    const cache = new SnapshotCache({ check: checkEnvoySnapshot });
    const sorted = cache.setSnapshot(GROUP, envoyInput(rendered([ALPHA, BETA])));
    if (!sorted.ok) throw new Error(sorted.errors.join("\n"));
    const shuffled = new Map([...envoyInput(rendered([ALPHA, BETA]))].map(([t, items]) => [t, [...items].reverse()]));
    const other = new SnapshotCache({ check: checkEnvoySnapshot });
    const reversed = other.setSnapshot(GROUP, shuffled);
    if (!reversed.ok) throw new Error(reversed.errors.join("\n"));
    for (const [typeUrl, type] of sorted.snapshot.types) {
      const names = [...type.resources.keys()];
      expect(names.length).toBeGreaterThan(0);
      expect(names).toEqual([...names].sort());
      expect([...(reversed.snapshot.types.get(typeUrl)?.resources.keys() ?? [])]).toEqual(names);
      expect(reversed.snapshot.types.get(typeUrl)?.version).toBe(type.version);
    }
    // Handed over reversed to the same cache: nothing changed.
    const again = cache.setSnapshot(GROUP, shuffled);
    expect(again.ok && again.changed).toEqual([]);
  });
  test("each resource is encoded once into Any bytes that decode to the resource", () => {
    const cache = new SnapshotCache({ check: checkEnvoySnapshot });
    let encodes = 0;
    const spec = envoyTypeSpecs().get(LISTENER_TYPE_URL);
    if (!spec) throw new Error("no listener spec");
    const { encodeReusing } = spec;
    if (!encodeReusing) throw new Error("the listener spec encodes chain by chain");
    cache.registerType(LISTENER_TYPE_URL, {
      ...spec,
      encode: (r) => {
        encodes += 1;
        return spec.encode(r);
      },
      encodeReusing: (r, previous) => {
        encodes += 1;
        return encodeReusing(r, previous);
      },
    });
    const res = rendered([ALPHA]);
    cache.setSnapshot(GROUP, envoyInput(res));
    expect(encodes).toBe(res.listeners.length);
    const listener = cache.getSnapshot(GROUP)?.types.get(LISTENER_TYPE_URL)?.resources.get("https-443");
    const json = res.listeners.find((l) => (l as { name: string }).name === "https-443") ?? {};
    expect(Buffer.from(listener?.any ?? [])).toEqual(
      Buffer.from(encodeAny(LISTENER_TYPE_URL, encodeResource(LISTENER_TYPE_URL, json))),
    );
    const any = messageType("google.protobuf.Any").decode(listener?.any ?? new Uint8Array()) as unknown as {
      type_url: string;
    };
    expect(any.type_url).toBe(LISTENER_TYPE_URL);
  });

  test("accepts a registered custom type with its own encoder (e.g. a KeaConfig resource)", () => {
    const cache = new SnapshotCache({ check: checkEnvoySnapshot });
    const KEA = "type.googleapis.com/oooi.dhcp.v1.KeaConfig";
    cache.registerType(KEA, { encode: (r) => new TextEncoder().encode(JSON.stringify(r)), legacyWildcard: true });
    const r = cache.setSnapshot(
      "oooi-system/infra-dhcp",
      new Map([[KEA, [{ name: "infra-dhcp", resource: { Dhcp4: {} } }]]]),
    );
    expect(r.ok).toBe(true);
    expect(cache.getSnapshot("oooi-system/infra-dhcp")?.types.get(KEA)?.resources.get("infra-dhcp")?.version).toMatch(
      /^[0-9a-f]{16}$/,
    );
    expect(cache.getSnapshot("oooi-system/infra-dhcp")?.types.has(ENDPOINT_TYPE_URL)).toBe(false);
  });

  test("envoyInput names resources the way Envoy subscribes to them", () => {
    const input = envoyInput(rendered([ALPHA]));
    expect(input.get(ENDPOINT_TYPE_URL)?.map((r) => r.name)).toContain("clusters-alpha/kube-apiserver:6443");
  });
});

// A group handed again whose rendering had not changed: its clusters and endpoints keep their
// encoded bytes and versions, whether the producer hands the same objects or equal new ones.
// The real Envoy encoders, counted per resource name.
describe("SnapshotCache: an unchanged resource is not encoded again", () => {
  function counted(): { cache: SnapshotCache; encoded: string[] } {
    const cache = new SnapshotCache({ check: checkEnvoySnapshot });
    const encoded: string[] = [];
    for (const [typeUrl, spec] of envoyTypeSpecs()) {
      if (typeUrl === LISTENER_TYPE_URL) continue; // encoded in pieces: test/xds/server/splice.test.ts
      cache.registerType(typeUrl, {
        ...spec,
        encode: (resource) => {
          encoded.push(spec.nameOf?.(resource) ?? "");
          return spec.encode(resource);
        },
      });
    }
    return { cache, encoded };
  }
  const nameOf = (r: object): string => {
    const o = r as { name?: string; cluster_name?: string };
    return o.name ?? o.cluster_name ?? "";
  };

  test("the same objects, or an equal deep copy: nothing encoded, the same cached resources, no change", () => {
    const { cache, encoded } = counted();
    const first = rendered([ALPHA, BETA]);
    const r1 = cache.setSnapshot(GROUP, envoyInput(first));
    if (!r1.ok) throw new Error(r1.errors.join("\n"));
    const names = [...first.clusters, ...first.endpoints, ...first.routes].map(nameOf).sort();
    expect([...encoded].sort()).toEqual(names);
    const held = [CLUSTER_TYPE_URL, ENDPOINT_TYPE_URL].map((t) => r1.snapshot.types.get(t));

    encoded.length = 0;
    expect(cache.setSnapshot(GROUP, envoyInput({ ...first })).ok).toBe(true);
    const copy = structuredClone(first);
    const r2 = cache.setSnapshot(GROUP, envoyInput(copy));
    expect(encoded).toEqual([]);
    expect(r2.ok && r2.changed).toEqual([]);
    expect(cache.getSnapshot(GROUP)).toBe(r1.snapshot);
    // A re-rendering of the same model, new objects throughout: the same.
    const again = cache.setSnapshot(GROUP, envoyInput(rendered([ALPHA, BETA])));
    expect([encoded, again.ok && again.changed]).toEqual([[], []]);
    const after = [CLUSTER_TYPE_URL, ENDPOINT_TYPE_URL].map((t) => cache.getSnapshot(GROUP)?.types.get(t));
    expect(after[0]).toBe(held[0]);
    expect(after[1]).toBe(held[1]);
  });

  test("a changed copy: only what changed is encoded, and gets a new version", () => {
    const { cache, encoded } = counted();
    const first = rendered([ALPHA, BETA]);
    expect(cache.setSnapshot(GROUP, envoyInput(first)).ok).toBe(true);
    const before = cache.getSnapshot(GROUP)?.types.get(CLUSTER_TYPE_URL);
    const copy = structuredClone(first);
    const target = copy.clusters[0] as { name: string; connect_timeout?: string };
    target.connect_timeout = "7s";
    encoded.length = 0;
    const r = cache.setSnapshot(GROUP, envoyInput(copy));
    expect(r.ok && r.changed).toEqual([CLUSTER_TYPE_URL]);
    expect(encoded).toEqual([target.name]);
    const now = cache.getSnapshot(GROUP)?.types.get(CLUSTER_TYPE_URL);
    expect(now?.resources.get(target.name)?.version).not.toBe(before?.resources.get(target.name)?.version);
    for (const [name, res] of now?.resources ?? []) {
      if (name !== target.name) expect(res).toBe(before?.resources.get(name));
    }
    // Invalid content is encoded, and refused, however equal the rest is.
    const bad = structuredClone(copy);
    (bad.clusters[1] as Record<string, unknown>)["connect_timeout"] = "soon";
    const refused = cache.setSnapshot(GROUP, envoyInput(bad));
    expect(refused.ok).toBe(false);
    expect(cache.getSnapshot(GROUP)?.types.get(CLUSTER_TYPE_URL)).toBe(now);
  });
});

// A type's version is a multiset hash of its (name, version) pairs (setVersion): the same set
// gives the same version whatever the order and whichever objects hold the pairs; any difference
// in the set gives another.
describe("setVersion", () => {
  const entries = fc.uniqueArray(
    fc.record({
      name: fc.string({ maxLength: 6 }),
      version: fc.string({
        unit: fc.constantFrom("0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "a", "b", "c", "d", "e", "f"),
        maxLength: 4,
      }),
    }),
    {
      selector: (e) => e.name,
      minLength: 0,
      maxLength: 200,
    },
  );

  test("the same pairs in any order, held by any objects, give one version", () => {
    fc.assert(
      fc.property(entries, fc.array(fc.nat(), { minLength: 200, maxLength: 200 }), (list, keys) => {
        const shuffled = list.map((e, i) => ({ ...e, key: keys[i] ?? 0 })).sort((a, b) => a.key - b.key);
        expect(setVersion(shuffled.map(({ name, version }) => ({ name, version })))).toBe(setVersion(list));
      }),
      { numRuns: 200 },
    );
  });

  test("a pair added, dropped, renamed or of another version gives another version", () => {
    fc.assert(
      fc.property(entries, fc.nat(), fc.constantFrom("add", "drop", "rename", "reversion"), (list, at, how) => {
        const i = list.length === 0 ? 0 : at % list.length;
        const e = list[i];
        const other =
          how === "add" || e === undefined
            ? [...list, { name: "\u0000new", version: "0" }]
            : how === "drop"
              ? list.filter((_, k) => k !== i)
              : how === "rename"
                ? list.map((x, k) => (k === i ? { ...x, name: `${x.name}\u0000` } : x))
                : list.map((x, k) => (k === i ? { ...x, version: `${x.version}1` } : x));
        expect(setVersion(other)).not.toBe(setVersion(list));
      }),
      { numRuns: 500 },
    );
  });
});
