// A Listener encoded chain by chain (src/xds/cache/splice.ts) is the Listener encoded whole: a
// repeated field is the concatenation of its encoded elements
// (https://protobuf.dev/programming-guides/encoding/#optional). Random listeners, with and
// without a previous version's chains to reuse; the cache's bytes after a change; Envoy's
// validation rules (the envoy-check peer) on what the spliced bytes decode to.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, test } from "vitest";
import { SnapshotCache } from "../../../src/xds/cache/index.js";
import { encodeListener, splitAt } from "../../../src/xds/cache/splice.js";
import type { EncodedParts } from "../../../src/xds/resource/specs.js";
import { encodeAny } from "../../../src/xds/cache/response-fragments.js";
import {
  decodeResource,
  encodeResource,
  LISTENER_TYPE_URL,
  messageType,
  TCP_PROXY_TYPE_URL,
} from "../../../src/xds/resource/protos.js";
import type { EnvoyResources } from "../../../src/envoy/resources.js";
import { envoyCheckBinary, runEnvoyCheck } from "../../support/envoy-check.js";
import { ALPHA, BETA, GAMMA, type AttachmentSpec } from "../../envoy/proxy-fixture.js";
import { GROUP, rendered } from "./fixtures.js";
import { checkEnvoySnapshot, envoyInput } from "../../../src/envoy/snapshot.js";

const cidr = fc.record({
  address_prefix: fc.tuple(fc.nat(255), fc.nat(255)).map(([a, b]) => `10.0.${String(a)}.${String(b)}`),
  prefix_len: fc.integer({ min: 24, max: 32 }),
});
const chainArb = fc.record(
  {
    name: fc.string({ maxLength: 8 }),
    filter_chain_match: fc.record(
      {
        server_names: fc.array(fc.domain(), { maxLength: 3 }),
        transport_protocol: fc.constant("tls"),
        source_prefix_ranges: fc.array(cidr, { maxLength: 4 }),
        destination_port: fc.integer({ min: 1, max: 65535 }),
      },
      { requiredKeys: [] },
    ),
    filters: fc.array(
      fc.record({
        name: fc.constant("envoy.filters.network.tcp_proxy"),
        typed_config: fc.record({
          "@type": fc.constant(TCP_PROXY_TYPE_URL),
          stat_prefix: fc.string({ minLength: 1, maxLength: 6 }),
          cluster: fc.string({ maxLength: 10 }),
          idle_timeout: fc.constantFrom("1s", "30s", "0.5s"),
        }),
      }),
      { maxLength: 2 },
    ),
  },
  { requiredKeys: ["filters"] },
);
/** Listeners with fields on both sides of filter_chains (3): name 1, address 2, 5, 9, 25, 28. */
const listenerArb = (chains: fc.Arbitrary<object[]>): fc.Arbitrary<Record<string, unknown>> =>
  fc.record(
    {
      name: fc.string({ maxLength: 8 }),
      address: fc.record({
        socket_address: fc.record({ address: fc.constant("0.0.0.0"), port_value: fc.integer({ min: 1, max: 65535 }) }),
      }),
      filter_chains: chains,
      per_connection_buffer_limit_bytes: fc.nat(1 << 20),
      listener_filters: fc.constant([
        {
          name: "envoy.filters.listener.tls_inspector",
          typed_config: {
            "@type": "type.googleapis.com/envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector",
          },
        },
      ]),
      default_filter_chain: chainArb,
      stat_prefix: fc.string({ maxLength: 6 }),
    },
    { requiredKeys: [] },
  );

/** Bytes as hex: Buffer and Uint8Array compare by content. */
const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString("hex");

/** The pieces of an encoding as the cache keeps them: views into the bytes. */
function partsOf(encoding: ReturnType<typeof encodeListener>): EncodedParts {
  return new Map([...encoding.parts].map(([d, [s, e]]) => [d, encoding.bytes.subarray(s, e)]));
}

describe("encodeListener: spliced bytes = the whole Listener encoded", () => {
  test("random listeners, nothing to reuse", () => {
    fc.assert(
      fc.property(listenerArb(fc.array(chainArb, { maxLength: 6 })), (listener) => {
        expect(hex(encodeListener(listener, undefined).bytes)).toBe(hex(encodeResource(LISTENER_TYPE_URL, listener)));
      }),
      { seed: 16, numRuns: 300 },
    );
  });

  test("random edits of a listener, reusing the previous version's chains", () => {
    const pair = fc
      .tuple(fc.array(chainArb, { minLength: 1, maxLength: 8 }), fc.array(chainArb, { maxLength: 3 }), fc.nat())
      .chain(([kept, added, seed]) =>
        fc.tuple(
          listenerArb(fc.constant(kept)),
          // The next version: some chains dropped, some new, the order shuffled.
          listenerArb(
            fc.constant([...kept.filter((_, i) => (seed >> i) % 2 === 0), ...added].sort(() => ((seed >> 3) % 3) - 1)),
          ),
        ),
      );
    let reused = 0;
    fc.assert(
      fc.property(pair, ([before, after]) => {
        const previous = partsOf(encodeListener(before, undefined));
        const next = encodeListener(after, previous);
        if ([...next.parts.keys()].some((d) => previous.has(d))) reused += 1;
        expect(hex(next.bytes)).toBe(hex(encodeResource(LISTENER_TYPE_URL, after)));
      }),
      { seed: 1616, numRuns: 300 },
    );
    expect(reused).toBeGreaterThan(100); // the property exercised reuse, not only fresh encodes
  });

  test("an unchanged chain's bytes come from the previous version, not from a new encode", () => {
    const chain = { name: "a", filters: [] };
    const listener = { name: "l", filter_chains: [chain] };
    const [digest] = encodeListener(listener, undefined).parts.keys();
    // A planted entry under the chain's digest shows up verbatim: the encoder reused it.
    const planted = encodeListener({ name: "x", filter_chains: [{ name: "planted" }] }, undefined);
    const [plantedRange] = planted.parts.values();
    const entry = planted.bytes.subarray(plantedRange?.[0], plantedRange?.[1]);
    const out = encodeListener(listener, new Map([[digest ?? "", entry]]));
    expect(decodeResource(LISTENER_TYPE_URL, out.bytes)).toStrictEqual({
      name: "l",
      filter_chains: [{ name: "planted" }],
    });
  });

  test.each<[string, object, RegExp]>([
    [
      "an unknown field of a chain",
      { filter_chains: [{ nmae: "a" }] },
      /Listener\.filter_chains\[0\]\.nmae: unknown field/,
    ],
    ["filter_chains not an array", { filter_chains: { name: "a" } }, /filter_chains: expected an array/],
    ["an unknown field of the listener", { filter_chains: [], bogus: 1 }, /Listener\.bogus: unknown field/],
  ])("%s fails with the whole listener's message", (_name, listener, message) => {
    expect(() => encodeListener(listener, undefined)).toThrow(message);
    expect(() => encodeResource(LISTENER_TYPE_URL, listener)).toThrow(message);
  });

  test("splitAt finds the first field above a number, or the end", () => {
    const bytes = encodeResource(LISTENER_TYPE_URL, { name: "l", stat_prefix: "s" }); // fields 1 and 28
    expect(splitAt(bytes, 3)).toBe(3); // tag, length 1, "l"
    expect(splitAt(bytes, 28)).toBe(bytes.length);
    expect(splitAt(new Uint8Array(), 3)).toBe(0);
  });
});

describe("the cache encodes a changed listener from its unchanged chains", () => {
  const moved: AttachmentSpec = { ...BETA, workers: ["192.168.10.31/32", "192.168.10.40/30"] };

  test("after a worker moves, the cached Any is the whole listener's Any", () => {
    const cache = new SnapshotCache({ check: checkEnvoySnapshot });
    expect(cache.setSnapshot(GROUP, envoyInput(rendered([ALPHA, BETA, GAMMA]))).ok).toBe(true);
    const next = rendered([ALPHA, moved, GAMMA]);
    const r = cache.setSnapshot(GROUP, envoyInput(next));
    expect(r.ok && r.changed).toContain(LISTENER_TYPE_URL);
    const listeners = cache.getSnapshot(GROUP)?.types.get(LISTENER_TYPE_URL)?.resources;
    expect(listeners?.size).toBe(next.listeners.length);
    for (const listener of next.listeners) {
      const name = (listener as { name: string }).name;
      expect(hex(listeners?.get(name)?.any ?? new Uint8Array())).toBe(
        hex(encodeAny(LISTENER_TYPE_URL, encodeResource(LISTENER_TYPE_URL, listener))),
      );
    }
  });

  const checker = envoyCheckBinary();
  const work = mkdtempSync(join(tmpdir(), "oooi-splice-"));
  afterAll(() => {
    rmSync(work, { recursive: true, force: true });
  });

  test.skipIf(checker.path === undefined)("envoy-check accepts what the spliced listeners decode to", () => {
    const cache = new SnapshotCache({ check: checkEnvoySnapshot });
    cache.setSnapshot(GROUP, envoyInput(rendered([ALPHA, BETA, GAMMA])));
    const next: EnvoyResources = rendered([ALPHA, moved, GAMMA]);
    cache.setSnapshot(GROUP, envoyInput(next));
    const any = messageType("google.protobuf.Any");
    const decoded = [...(cache.getSnapshot(GROUP)?.types.get(LISTENER_TYPE_URL)?.resources.values() ?? [])].map((r) =>
      decodeResource(LISTENER_TYPE_URL, (any.decode(r.any) as unknown as { value: Uint8Array }).value),
    );
    expect(decoded.map((l) => l["name"])).toStrictEqual(next.listeners.map((l) => (l as { name: string }).name));
    const file = join(work, "envoy.json");
    writeFileSync(file, JSON.stringify({ ...next, listeners: decoded }));
    const run = runEnvoyCheck(checker.path ?? "", [file]);
    expect(run.lines).toStrictEqual([expect.stringMatching(/envoy\.json: ok \(/)]);
    expect(run.status).toBe(0);
  });
});
