import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { nextSerial, readPrevious, renderCoreDns } from "../../src/dns/render/index.js";
import type { DnsModel } from "../../src/model/types.js";
import { anyModel } from "./arbitraries.js";
import { INTERNAL_IP, model } from "./fixtures.js";

const A = "a.example.com";
const B = "b.example.com";
const base = model({ domains: [A, B], internal: INTERNAL_IP });

function serialOf(text: string | undefined): number | undefined {
  return readPrevious(text ?? "").serial;
}

/** `m` with the VLAN api record of zone `origin` pointed at `address`. */
function moveApi(m: DnsModel, origin: string, address: string): DnsModel {
  const vlan = m.views[0];
  return {
    ...m,
    views: [
      {
        ...vlan,
        zones: vlan.zones.map((z) =>
          z.origin !== origin
            ? z
            : { ...z, records: z.records.map((r) => (r.name === `api.${origin}` ? { ...r, address } : r)) },
        ),
      },
      m.views[1],
    ],
  };
}

/** A previous rendering of one key with its SOA serial replaced. */
function withSerial(text: string, serial: number): string {
  return text.replace(/^(@ IN SOA \S+ \S+ )\d+ /m, `$1${serial} `);
}

describe("SOA serial", () => {
  const first = renderCoreDns(base).files;

  it("starts at 1 without a previous rendering", () => {
    for (const [key, text] of Object.entries(first)) if (key !== "Corefile") expect(serialOf(text), key).toBe(1);
  });

  it("stays put when the content is unchanged", () => {
    expect(renderCoreDns(base, { previous: first }).files).toEqual(first);
  });

  it("moves by one in the changed zone only", () => {
    const second = renderCoreDns(moveApi(base, A, "192.0.2.99"), { previous: first }).files;
    expect(serialOf(second[`db.vlan.${A}`])).toBe(2);
    expect(second[`db.vlan.${A}`]).toContain("\napi IN A 192.0.2.99\n");
    expect(second[`db.vlan.${B}`]).toBe(first[`db.vlan.${B}`]);
    expect(second[`db.default.${A}`]).toBe(first[`db.default.${A}`]);
    expect(second.Corefile).toBe(first.Corefile);
    // Rendering again from the new state is stable.
    const third = renderCoreDns(moveApi(base, A, "192.0.2.99"), { previous: second }).files;
    expect(third).toEqual(second);
    // And changing back is a change too: serials never go back.
    expect(serialOf(renderCoreDns(base, { previous: second }).files[`db.vlan.${A}`])).toBe(3);
  });

  it("is 1 for a zone absent from the previous data", () => {
    const previous = Object.fromEntries(Object.entries(first).filter(([k]) => k !== `db.vlan.${A}`));
    const files = renderCoreDns(moveApi(base, A, "192.0.2.99"), { previous }).files;
    expect(serialOf(files[`db.vlan.${A}`])).toBe(1);
    expect(serialOf(files[`db.vlan.${B}`])).toBe(1);
  });

  it("wraps per RFC 1982, skipping 0", () => {
    expect(nextSerial(41)).toBe(42);
    expect(nextSerial(4294967294)).toBe(4294967295);
    expect(nextSerial(4294967295)).toBe(1);
    const key = `db.vlan.${A}`;
    const changed = moveApi(base, A, "192.0.2.99");
    const at = (serial: number): number | undefined =>
      serialOf(renderCoreDns(changed, { previous: { [key]: withSerial(first[key] ?? "", serial) } }).files[key]);
    expect(at(4294967294)).toBe(4294967295);
    expect(at(4294967295)).toBe(1);
    // Unchanged content keeps even the largest serial.
    const same = renderCoreDns(base, { previous: { [key]: withSerial(first[key] ?? "", 4294967295) } }).files[key];
    expect(serialOf(same)).toBe(4294967295);
  });

  it("bumps a previous file that carries a serial but no digest of ours", () => {
    const key = `db.vlan.${A}`;
    const foreign =
      "$ORIGIN a.example.com.\n@ 3600 IN SOA ns.a.example.com. h.a.example.com. ( 41 7200 3600 1209600 30 )\n";
    expect(serialOf(renderCoreDns(base, { previous: { [key]: foreign } }).files[key])).toBe(42);
    expect(serialOf(renderCoreDns(base, { previous: { [key]: "garbage" } }).files[key])).toBe(1);
  });

  it("keeps the Corefile byte-identical whatever the previous data", () => {
    const again = renderCoreDns(moveApi(base, A, "192.0.2.99"), { previous: first }).files.Corefile;
    expect(again).toBe(first.Corefile);
    expect(renderCoreDns(base, { previous: { Corefile: "junk" } }).files.Corefile).toBe(first.Corefile);
  });

  it("renders the same when it continues from its own previous rendering as from a copy of it", () => {
    // Its own rendering carries the zones' inputs (unchanged zones keep their text); a copy does
    // not, so every zone is rendered and its serial read back. The two must never differ.
    fc.assert(
      // A few models visited in any order, so zones come back unchanged as well as changed.
      fc.property(
        fc.array(anyModel, { minLength: 2, maxLength: 3 }),
        fc.array(fc.nat(2), { minLength: 2, maxLength: 12 }),
        (pool, visits) => {
          const models = visits.map((i) => pool[i % pool.length] as DnsModel);
          let own = renderCoreDns(models[0] as DnsModel).files;
          let copied = own;
          for (const m of models.slice(1)) {
            own = renderCoreDns(m, { previous: own }).files;
            copied = renderCoreDns(m, { previous: { ...copied } }).files;
            expect(own).toEqual(copied);
          }
        },
      ),
      { seed: 5, numRuns: 200 },
    );
  });

  it("moves every zone's serial when only the TTL changes, continuing from its own rendering", () => {
    // No record moves, so only the TTL tells the zones apart from the ones rendered last time.
    const second = renderCoreDns({ ...base, cacheSeconds: 60 }, { previous: first }).files;
    expect(Object.keys(second)).toEqual(Object.keys(first));
    for (const [key, text] of Object.entries(second)) {
      if (key === "Corefile") continue;
      expect(text, key).toContain("\n$TTL 60\n");
      expect(serialOf(text), key).toBe(2);
    }
  });

  it("keeps an unchanged zone's text and re-renders only the changed one", () => {
    const second = renderCoreDns(moveApi(base, A, "192.0.2.99"), { previous: first }).files;
    expect(second[`db.vlan.${B}`]).toBe(first[`db.vlan.${B}`]);
    expect(second[`db.vlan.${A}`]).not.toBe(first[`db.vlan.${A}`]);
    // Back to the first model from the second rendering: the serial moves on, it never goes back.
    const third = renderCoreDns(base, { previous: second }).files;
    expect(serialOf(third[`db.vlan.${A}`])).toBe(3);
    expect(third[`db.vlan.${B}`]).toBe(first[`db.vlan.${B}`]);
  });
});
