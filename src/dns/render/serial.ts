// SOA serials derived from content. CoreDNS's file plugin re-reads a zone file on its reload tick
// but keeps the old data unless the SOA serial differs from the loaded one, so the serial must move
// exactly when the content does. Pure.

/** Comment line prefix that carries the content digest of a rendered zone file. */
export const DIGEST_PREFIX = "; oooi-digest: ";

const SERIAL_SPACE = 2 ** 32;

/** What a previously rendered zone file says about itself. */
export interface PreviousZone {
  readonly digest: string | undefined;
  readonly serial: number | undefined;
}

/** Reads the digest comment and SOA serial of a zone file; fields are undefined when absent. */
export function readPrevious(text: string): PreviousZone {
  const digest = /^; oooi-digest: ([0-9a-f]+)\s*$/m.exec(text)?.[1];
  // Owner, optional TTL and class, SOA, mname, rname, optional "(", then the serial.
  const soa = /^\S+\s+(?:\d+\s+)?(?:IN\s+)?SOA\s+\S+\s+\S+\s+\(?\s*(\d{1,10})\b/im.exec(text)?.[1];
  const serial = soa === undefined ? undefined : Number(soa);
  return {
    digest,
    serial: serial !== undefined && serial < SERIAL_SPACE ? serial : undefined,
  };
}

/**
 * RFC 1982 successor of a serial. After 4294967295 the sum wraps; 0 is skipped (many tools read
 * it as "unset"), so the step is +2 there, still within the RFC's 2^31-1 limit.
 */
export function nextSerial(serial: number): number {
  const next = (serial + 1) % SERIAL_SPACE;
  return next === 0 ? 1 : next;
}

/**
 * The serial for content with `digest`: unchanged when the previous rendering had the same digest,
 * its successor when the content changed, 1 when there is no usable previous rendering.
 */
export function serialFor(digest: string, previous: string | undefined): number {
  if (previous === undefined) return 1;
  const prev = readPrevious(previous);
  if (prev.serial === undefined) return 1;
  return prev.digest === digest ? prev.serial : nextSerial(prev.serial);
}
