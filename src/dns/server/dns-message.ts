// DNS message wire format on the hot path (RFC 1035 §4, RFC 6891): a strict query parser and
// response assembly from precomputed sections. Plain Buffer work: dns2's bit-array codec costs
// tens of microseconds per message, which is the whole budget of a query here.

/** Response codes this responder emits (RFC 1035 §4.1.1; BADVERS is RFC 6891's extended 16). */
export const RCODE = {
  NOERROR: 0,
  FORMERR: 1,
  SERVFAIL: 2,
  NXDOMAIN: 3,
  NOTIMP: 4,
  REFUSED: 5,
  BADVERS: 16,
} as const;

/** Resource record types the responder gives meaning to. */
export const TYPE = {
  A: 1,
  NS: 2,
  SOA: 6,
  AAAA: 28,
  OPT: 41,
  IXFR: 251,
  AXFR: 252,
  MAILB: 253,
  MAILA: 254,
  ANY: 255,
} as const;

/** The Internet class, the only one the zones hold. */
export const CLASS_IN = 1;
/** Fixed DNS header size. */
export const HEADER_SIZE = 12;
/** UDP payload limit for a query without EDNS (RFC 1035 §4.2.1). */
export const CLASSIC_UDP_LIMIT = 512;
/** Largest message a TCP frame can carry (two-byte length prefix, RFC 1035 §4.2.2). */
export const TCP_LIMIT = 65535;
/** The UDP payload size we advertise in our OPT record (the DNS Flag Day 2020 value). */
export const ADVERTISED_UDP_PAYLOAD = 1232;
const OPT_SIZE = 11;
const MAX_NAME_OCTETS = 255;

/** A well-formed standard query, reduced to what answering it needs. */
export interface Query {
  /** Offset just past QCLASS: header plus question, copied verbatim into every response. */
  readonly questionEnd: number;
  /** QNAME in wire form (length-prefixed labels, root byte last), ASCII lower-cased, as latin1 text. */
  readonly name: string;
  readonly type: number;
  readonly qclass: number;
  /** Requestor's EDNS UDP payload size (at least 512), or -1 when the query carries no OPT record. */
  readonly ednsPayload: number;
  readonly ednsVersion: number;
  /** The DO bit, echoed in our OPT record (RFC 3225 §3). */
  readonly dnssecOk: boolean;
}

/** Why a message is not a query we answer normally: drop it, or answer with this header-only rcode. */
export type Rejection = "drop" | typeof RCODE.FORMERR | typeof RCODE.NOTIMP;

/** Precomputed sections of a response: everything after the question except our OPT record. */
export interface Sections {
  /** Full 12-bit rcode; the high bits travel in the OPT record. */
  readonly rcode: number;
  /** Authoritative answer (AA). */
  readonly aa: boolean;
  readonly ancount: number;
  readonly nscount: number;
  readonly arcount: number;
  /**
   * Answer, authority and additional records. Position independent: owner names equal to QNAME
   * are a pointer to offset 12, every other name is written in full, so the bytes fit behind any
   * question.
   */
  readonly body: Buffer;
}

/** Parses a query; anything outside RFC 1035/6891 framing is rejected rather than guessed at. */
export function parseQuery(msg: Buffer): Query | Rejection {
  const len = msg.length;
  if (len < HEADER_SIZE) return "drop";
  const flags = msg[2] ?? 0;
  // Never answer a response: two responders could otherwise bounce packets forever.
  if ((flags & 0x80) !== 0) return "drop";
  if (((flags >> 3) & 0x0f) !== 0) return RCODE.NOTIMP;
  if (msg.readUInt16BE(4) !== 1 || msg.readUInt16BE(6) !== 0 || msg.readUInt16BE(8) !== 0) return RCODE.FORMERR;

  let i = HEADER_SIZE;
  for (;;) {
    if (i >= len) return RCODE.FORMERR;
    const label = msg[i] ?? 0;
    if (label === 0) break;
    // A pointer or extended label type cannot occur in a well-formed question (nothing precedes it).
    if (label > 63) return RCODE.FORMERR;
    i += label + 1;
    if (i + 1 - HEADER_SIZE > MAX_NAME_OCTETS) return RCODE.FORMERR;
  }
  const nameEnd = i + 1;
  if (nameEnd + 4 > len) return RCODE.FORMERR;
  const type = msg.readUInt16BE(nameEnd);
  const qclass = msg.readUInt16BE(nameEnd + 2);
  const questionEnd = nameEnd + 4;

  let ednsPayload = -1;
  let ednsVersion = 0;
  let dnssecOk = false;
  let p = questionEnd;
  const arcount = msg.readUInt16BE(10);
  for (let r = 0; r < arcount; r++) {
    const owner = p;
    p = skipName(msg, p);
    if (p < 0 || p + 10 > len) return RCODE.FORMERR;
    const rrType = msg.readUInt16BE(p);
    const rdlen = msg.readUInt16BE(p + 8);
    if (rrType === TYPE.OPT) {
      // One OPT at most, owned by the root (RFC 6891 §6.1.1).
      if (ednsPayload >= 0 || p !== owner + 1) return RCODE.FORMERR;
      ednsPayload = Math.max(CLASSIC_UDP_LIMIT, msg.readUInt16BE(p + 2));
      ednsVersion = msg[p + 5] ?? 0;
      dnssecOk = ((msg[p + 6] ?? 0) & 0x80) !== 0;
    }
    p += 10 + rdlen;
    if (p > len) return RCODE.FORMERR;
  }
  if (p !== len) return RCODE.FORMERR;

  return {
    questionEnd,
    name: msg.toString("latin1", HEADER_SIZE, nameEnd).toLowerCase(),
    type,
    qclass,
    ednsPayload,
    ednsVersion,
    dnssecOk,
  };
}

/** Offset just past a (possibly compressed) name at `p`, or -1 when it runs off the message. */
function skipName(msg: Buffer, p: number): number {
  let i = p;
  for (;;) {
    if (i >= msg.length) return -1;
    const label = msg[i] ?? 0;
    if (label === 0) return i + 1;
    if ((label & 0xc0) === 0xc0) return i + 2 <= msg.length ? i + 2 : -1;
    if (label > 63) return -1;
    i += label + 1;
  }
}

/**
 * The response to `query` carrying `sections`: the query's header and question copied (ID, QNAME
 * spelling, RD, CD), our flags and counts written, an OPT record appended when the query had one.
 * When the result exceeds `limit` it is cut to header + question (+ OPT) with TC set.
 */
export function assemble(msg: Buffer, q: Query, s: Sections, limit: number): Buffer {
  const optLen = q.ednsPayload >= 0 ? OPT_SIZE : 0;
  let body = s.body;
  let an = s.ancount;
  let ns = s.nscount;
  let ar = s.arcount;
  let tc = 0;
  let size = q.questionEnd + body.length + optLen;
  if (size > limit) {
    tc = 0x02;
    body = EMPTY;
    an = ns = ar = 0;
    size = q.questionEnd + optLen;
  }
  const out = Buffer.allocUnsafe(size);
  msg.copy(out, 0, 0, q.questionEnd);
  out[2] = 0x80 | (s.aa ? 0x04 : 0) | tc | ((msg[2] ?? 0) & 0x01);
  // RA: names outside our zones are resolved upstream on the client's behalf.
  out[3] = 0x80 | ((msg[3] ?? 0) & 0x10) | (s.rcode & 0x0f);
  out.writeUInt16BE(1, 4);
  out.writeUInt16BE(an, 6);
  out.writeUInt16BE(ns, 8);
  out.writeUInt16BE(ar + (optLen > 0 ? 1 : 0), 10);
  body.copy(out, q.questionEnd);
  if (optLen > 0) writeOpt(out, size - OPT_SIZE, s.rcode >> 4, q.dnssecOk);
  return out;
}

function writeOpt(out: Buffer, at: number, extendedRcode: number, dnssecOk: boolean): void {
  out[at] = 0; // root owner
  out.writeUInt16BE(TYPE.OPT, at + 1);
  out.writeUInt16BE(ADVERTISED_UDP_PAYLOAD, at + 3);
  out[at + 5] = extendedRcode & 0xff;
  out[at + 6] = 0; // EDNS version 0
  out[at + 7] = dnssecOk ? 0x80 : 0;
  out[at + 8] = 0;
  out.writeUInt16BE(0, at + 9); // no options
}

/** A header-only error response (FORMERR, NOTIMP) to a message whose question is not trusted. */
export function errorResponse(msg: Buffer, rcode: number): Buffer {
  const out = Buffer.alloc(HEADER_SIZE);
  msg.copy(out, 0, 0, 2);
  out[2] = 0x80 | ((msg[2] ?? 0) & 0x79); // QR, echo opcode and RD
  out[3] = 0x80 | (rcode & 0x0f);
  return out;
}

/**
 * A response from elsewhere (an upstream) fitted to the client's payload limit: returned as is
 * when it fits, else cut to header + question with TC set and every other count zeroed.
 */
export function fitToLimit(reply: Buffer, questionEnd: number, limit: number): Buffer {
  if (reply.length <= limit) return reply;
  const out = Buffer.from(reply.subarray(0, questionEnd));
  out[2] = (out[2] ?? 0) | 0x02;
  out.fill(0, 6, HEADER_SIZE);
  return out;
}

/** True when `reply` answers `query`: same ID, QR set, one question equal up to ASCII case. */
export function isReplyTo(reply: Buffer, query: Buffer, questionEnd: number): boolean {
  if (reply.length < questionEnd || reply[0] !== query[0] || reply[1] !== query[1]) return false;
  if (((reply[2] ?? 0) & 0x80) === 0 || reply.readUInt16BE(4) !== 1) return false;
  for (let i = HEADER_SIZE; i < questionEnd; i++) {
    const a = reply[i] ?? 0;
    const b = query[i] ?? 0;
    if (a !== b && lower(a) !== lower(b)) return false;
  }
  return true;
}

function lower(c: number): number {
  return c >= 0x41 && c <= 0x5a ? c | 0x20 : c;
}

/** The wire form of a domain name ("a.b" or "a.b.") as lower-case latin1 text; "" or "." is the root. */
export function wireName(name: string): string {
  const labels = name
    .toLowerCase()
    .split(".")
    .filter((l) => l !== "");
  return `${labels.map((l) => String.fromCharCode(l.length) + l).join("")}\u0000`;
}

const EMPTY = Buffer.alloc(0);
