import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { aggregate, formatCidr, parseCidr, parseIPv4 } from "../../src/model/ipv4.js";
import { parseDurationSeconds } from "../../src/model/duration.js";

describe("IPv4", () => {
  it.each([
    ["192.0.2.1", 3221225985],
    ["0.0.0.0", 0],
    ["255.255.255.255", 4294967295],
    ["256.0.0.1", undefined],
    ["1.2.3", undefined],
    ["01.2.3.4", undefined],
    ["1.2.3.4 ", undefined],
    ["", undefined],
    ["1..2.3", undefined],
    ["1.2.3.4.", undefined],
    [".1.2.3", undefined],
    ["1.2.3.4.5", undefined],
    ["0.00.0.0", undefined],
    ["1.2.3.0256", undefined],
    ["1.2.3.-4", undefined],
    ["1.2.3.+4", undefined],
    ["１.2.3.4", undefined],
  ])("parseIPv4(%j) = %j", (text, n) => {
    expect(parseIPv4(text)).toBe(n);
  });

  it("parseIPv4 agrees with the dotted-quad grammar on random text (split + per-octet RegExp as the oracle)", () => {
    const octet = /^(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])$/;
    const oracle = (text: string): number | undefined => {
      const parts = text.split(".");
      if (parts.length !== 4 || !parts.every((p) => octet.test(p))) return undefined;
      return parts.reduce((n, p) => n * 256 + Number(p), 0);
    };
    const piece = fc.oneof(
      fc.nat(300).map(String),
      fc.constantFrom("", "0", "00", "01", "255", "256", "-1", " 1", "a"),
    );
    const text = fc.oneof(
      fc.array(piece, { minLength: 1, maxLength: 6 }).map((ps) => ps.join(".")),
      fc.string({ maxLength: 16 }),
    );
    fc.assert(
      fc.property(text, (t) => {
        expect(parseIPv4(t)).toBe(oracle(t));
      }),
      { seed: 16, numRuns: 5000 },
    );
  });

  it.each([
    ["192.0.2.0/24", "192.0.2.0/24"],
    ["10.0.0.0/8", "10.0.0.0/8"],
    ["0.0.0.0/0", "0.0.0.0/0"],
    ["192.0.2.1/24", undefined],
    ["192.0.2.0/33", undefined],
    ["192.0.2.0", undefined],
    ["192.0.2.0/", undefined],
  ])("parseCidr(%j)", (text, back) => {
    const c = parseCidr(text);
    expect(c === undefined ? undefined : formatCidr(c)).toBe(back);
  });

  it("aggregate: adjacent aligned addresses merge, unaligned ones do not", () => {
    const ips = ["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.7"].map((t) => parseIPv4(t) ?? 0);
    expect(aggregate(ips).map(formatCidr)).toEqual(["10.0.0.1/32", "10.0.0.2/31", "10.0.0.4/32", "10.0.0.7/32"]);
  });

  it("aggregate is an exact cover with no mergeable pair, for any address set", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: 4095 }), { maxLength: 300 }),
        fc.nat(2 ** 20),
        (offsets, base) => {
          const addrs = offsets.map((o) => base * 4096 + o);
          const cover = aggregate(addrs);
          const covered = cover.flatMap((c) => Array.from({ length: c.last - c.first + 1 }, (_, i) => c.first + i));
          expect(covered.sort((a, b) => a - b)).toEqual([...addrs].sort((a, b) => a - b));
          // Minimal: no two blocks are buddies that would merge into one aligned block.
          for (let i = 0; i + 1 < cover.length; i++) {
            const a = cover[i];
            const b = cover[i + 1];
            if (a === undefined || b === undefined) continue;
            const buddies =
              a.prefix === b.prefix && a.last + 1 === b.first && a.first % ((a.last - a.first + 1) * 2) === 0;
            expect(buddies).toBe(false);
          }
        },
      ),
      { seed: 42, numRuns: 300 },
    );
  });
});

describe("Go durations", () => {
  it.each([
    ["1h", 3600],
    ["90m", 5400],
    ["1h30m", 5400],
    ["2.5h", 9000],
    ["3600s", 3600],
    ["500ms", 0],
    ["", undefined],
    ["1d", undefined],
    ["h", undefined],
    ["1h ", undefined],
  ])("%j = %j seconds", (text, s) => {
    expect(parseDurationSeconds(text)).toBe(s);
  });
});
