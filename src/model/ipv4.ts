// IPv4 arithmetic on unsigned 32-bit numbers. Pure; never throws on user input.

export interface Cidr {
  /** Network address (host bits zero). */
  readonly network: number;
  readonly prefix: number;
  /** First and last address covered, inclusive. */
  readonly first: number;
  readonly last: number;
}

/**
 * "192.0.2.1" → 3221225985; undefined when not a dotted-quad IPv4 address (four decimal octets
 * 0–255, no leading zeros). A character loop, not split + RegExp: it runs for every worker
 * address on every render of a big VLAN.
 */
export function parseIPv4(text: string): number | undefined {
  let n = 0;
  let octet = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c === 46) {
      if (digits === 0 || dots === 3) return undefined;
      n = n * 256 + octet;
      dots += 1;
      octet = 0;
      digits = 0;
    } else if (c >= 48 && c <= 57) {
      if (digits === 1 && octet === 0) return undefined; // a leading zero
      octet = octet * 10 + (c - 48);
      digits += 1;
      if (octet > 255) return undefined;
    } else {
      return undefined;
    }
  }
  if (digits === 0 || dots !== 3) return undefined;
  return n * 256 + octet;
}

export function formatIPv4(n: number): string {
  return `${(n >>> 24) & 255}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

/**
 * formatIPv4 of every address, the same array for the same (immutable) address list: the model
 * formats each hosted cluster's workers for claims and status on every build of its Infra.
 */
export function formatIPv4List(addrs: readonly number[]): readonly string[] {
  let texts = formatted.get(addrs);
  if (texts === undefined) {
    texts = addrs.map(formatIPv4);
    formatted.set(addrs, texts);
  }
  return texts;
}

const formatted = new WeakMap<readonly number[], readonly string[]>();

export function maskOf(prefix: number): number {
  return prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
}

/** Parses "a.b.c.d/p". Host bits must be zero, as Kubernetes and Kea expect a network address. */
export function parseCidr(text: string): Cidr | undefined {
  const slash = text.indexOf("/");
  if (slash < 0) return undefined;
  const addr = parseIPv4(text.slice(0, slash));
  const prefixText = text.slice(slash + 1);
  if (addr === undefined || !/^([0-9]|[12][0-9]|3[0-2])$/.test(prefixText)) return undefined;
  const prefix = Number(prefixText);
  const mask = maskOf(prefix);
  if ((addr & ~mask) >>> 0 !== 0) return undefined;
  return { network: addr, prefix, first: addr, last: (addr | ~mask) >>> 0 };
}

export function formatCidr(c: Pick<Cidr, "network" | "prefix">): string {
  return `${formatIPv4(c.network)}/${c.prefix}`;
}

export function cidrContains(c: Cidr, addr: number): boolean {
  return addr >= c.first && addr <= c.last;
}

/** Usable host addresses: the network and broadcast addresses excluded for prefixes up to /30. */
export function isHostAddress(c: Cidr, addr: number): boolean {
  if (!cidrContains(c, addr)) return false;
  if (c.prefix >= 31) return true;
  return addr !== c.first && addr !== c.last;
}

/**
 * The minimal exact cover of a set of addresses: the fewest CIDR blocks whose union is exactly
 * the set. Sorted by address. Unlike the original operator there is no cap on the count.
 */
export function aggregate(addresses: Iterable<number>): Cidr[] {
  const sorted = [...new Set(addresses)].sort((a, b) => a - b);
  const out: Cidr[] = [];
  let i = 0;
  while (i < sorted.length) {
    const start = sorted[i] as number;
    // Extend the run of consecutive addresses.
    let j = i;
    while (j + 1 < sorted.length && (sorted[j + 1] as number) === (sorted[j] as number) + 1) j++;
    let from = start;
    const to = sorted[j] as number;
    // Split [from, to] into the largest aligned blocks.
    while (from <= to) {
      let size = 1;
      let prefix = 32;
      while (prefix > 0) {
        const bigger = size * 2;
        if (from % bigger !== 0 || from + bigger - 1 > to) break;
        size = bigger;
        prefix--;
      }
      out.push({ network: from, prefix, first: from, last: from + size - 1 });
      from += size;
    }
    i = j + 1;
  }
  return out;
}
