import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { aggregate, formatCidr, isHostAddress, parseCidr, parseIPv4, type Cidr } from "../../src/model/ipv4.js";
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
    ["10.0.0.0/0", undefined],
    ["192.0.2.256/24", undefined],
    ["10.0.0.0/8x", undefined],
    ["/24", undefined],
  ])("parseCidr(%j)", (text, back) => {
    const c = parseCidr(text);
    expect(c === undefined ? undefined : formatCidr(c)).toBe(back);
  });

  it("parseCidr gives each block's first and last address, /0 and /32 included", () => {
    const range = (text: string) => {
      const c = parseCidr(text);
      return [c?.first, c?.last];
    };
    expect(range("0.0.0.0/0")).toEqual([0, 2 ** 32 - 1]);
    expect(range("192.0.2.0/24")).toEqual([parseIPv4("192.0.2.0"), parseIPv4("192.0.2.255")]);
    expect(range("192.0.2.7/32")).toEqual([parseIPv4("192.0.2.7"), parseIPv4("192.0.2.7")]);
  });

  it("isHostAddress: the network and broadcast addresses are no hosts up to /30; /31 and /32 are all hosts (RFC 3021)", () => {
    const hosts = (text: string): string[] => {
      const c = parseCidr(text) as Cidr;
      const around = Array.from({ length: c.last - c.first + 3 }, (_, i) => c.first - 1 + i);
      return around.filter((a) => isHostAddress(c, a)).map((a) => formatCidr({ network: a, prefix: 32 }));
    };
    expect(hosts("192.0.2.0/30")).toEqual(["192.0.2.1/32", "192.0.2.2/32"]);
    expect(hosts("192.0.2.0/31")).toEqual(["192.0.2.0/32", "192.0.2.1/32"]);
    expect(hosts("192.0.2.5/32")).toEqual(["192.0.2.5/32"]);
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
          // The minimal exact cover is unique: each address sits in the largest aligned block that
          // the set fills whole (its parent block is not filled). Sorted by address, as documented.
          expect(cover.map(formatCidr)).toEqual(minimalCover(addrs));
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

/** The oracle: per address, the largest aligned block the set fills whole; distinct, by address. */
function minimalCover(addrs: readonly number[]): string[] {
  const sorted = [...addrs].sort((a, b) => a - b);
  const count = (from: number, to: number): number => {
    const lower = (x: number) => {
      let lo = 0;
      let hi = sorted.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if ((sorted[mid] ?? 0) < x) lo = mid + 1;
        else hi = mid;
      }
      return lo;
    };
    return lower(to + 1) - lower(from);
  };
  const blocks = new Map<number, string>();
  for (const a of sorted) {
    let prefix = 32;
    while (prefix > 0) {
      const size = 2 ** (33 - prefix);
      const start = Math.floor(a / size) * size;
      if (count(start, start + size - 1) !== size) break;
      prefix--;
    }
    const size = 2 ** (32 - prefix);
    const start = Math.floor(a / size) * size;
    blocks.set(start, formatCidr({ network: start, prefix }));
  }
  return [...blocks.entries()].sort(([x], [y]) => x - y).map(([, text]) => text);
}
