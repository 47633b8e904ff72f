// One DNS message in, its reply out, independent of the transport: the authoritative path is
// synchronous (parse, view, table lookup, assemble), forwarding returns a promise. Nothing a
// client sends can throw out of here.
import type { Forwarder } from "./forward.js";
import { lookup, selectView, type AnswerTable } from "./table.js";
import {
  assemble,
  CLASS_IN,
  CLASSIC_UDP_LIMIT,
  errorResponse,
  fitToLimit,
  parseQuery,
  RCODE,
  TCP_LIMIT,
  TYPE,
  type Query,
  type Rejection,
  type Sections,
} from "./dns-message.js";

/** Counters since start. */
export interface QueryCounters {
  /** Messages received (UDP datagrams plus TCP frames). */
  readonly queries: number;
  /** Answered from a zone (positive, NODATA or NXDOMAIN). */
  readonly authoritative: number;
  /** Sent upstream. */
  readonly forwarded: number;
  /** SERVFAIL sent because no upstream answered in time (or none is configured). */
  readonly servfail: number;
  readonly formerr: number;
  readonly notimp: number;
  readonly refused: number;
  /** Messages ignored: shorter than a header, or responses. */
  readonly dropped: number;
  /** Answers cut to fit the client's UDP payload size (TC set). */
  readonly truncated: number;
  /** TCP connections accepted. */
  readonly tcpConnections: number;
}

/** A handler's reply: bytes now, bytes later (forwarded), or nothing (dropped). */
export type Reply = Buffer | Promise<Buffer | undefined> | undefined;

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

const NO_RECORDS = Buffer.alloc(0);
const REFUSED_SECTIONS: Sections = {
  rcode: RCODE.REFUSED,
  aa: false,
  ancount: 0,
  nscount: 0,
  arcount: 0,
  body: NO_RECORDS,
};
const SERVFAIL_SECTIONS: Sections = { ...REFUSED_SECTIONS, rcode: RCODE.SERVFAIL };
const BADVERS_SECTIONS: Sections = { ...REFUSED_SECTIONS, rcode: RCODE.BADVERS };

/** Answers DNS messages from the current answer table, forwarding what the zones do not hold. */
export class QueryHandler {
  /** The table answers come from; undefined refuses every query. Swapped whole on model change. */
  table: AnswerTable | undefined = undefined;
  /** Live counters (read through the responder's stats()). */
  readonly counters: Mutable<QueryCounters> = {
    queries: 0,
    authoritative: 0,
    forwarded: 0,
    servfail: 0,
    formerr: 0,
    notimp: 0,
    refused: 0,
    dropped: 0,
    truncated: 0,
    tcpConnections: 0,
  };

  constructor(
    private readonly forwarder: Forwarder,
    private readonly log: (msg: string) => void,
  ) {}

  /**
   * The reply to `msg` from a client at IPv4 address `ip` (undefined: not IPv4); `transportLimit`
   * is TCP_LIMIT over TCP, anything else means UDP (the query's EDNS size then decides).
   */
  handle(msg: Buffer, ip: number | undefined, transportLimit: number): Reply {
    const c = this.counters;
    c.queries++;
    let q: Query | Rejection;
    try {
      q = parseQuery(msg);
    } catch {
      q = RCODE.FORMERR; // unreachable by construction; a parser bug must not cost the process
    }
    if (q === "drop") {
      c.dropped++;
      return undefined;
    }
    if (typeof q === "number") {
      if (q === RCODE.NOTIMP) c.notimp++;
      else c.formerr++;
      return errorResponse(msg, q);
    }
    const limit = transportLimit === TCP_LIMIT ? TCP_LIMIT : q.ednsPayload < 0 ? CLASSIC_UDP_LIMIT : q.ednsPayload;
    const query = q;
    const out = (s: Sections): Buffer => {
      const reply = assemble(msg, query, s, limit);
      if (((reply[2] ?? 0) & 0x02) !== 0) c.truncated++;
      return reply;
    };
    if (q.ednsVersion > 0) return out(BADVERS_SECTIONS);
    if (q.type === TYPE.OPT) {
      c.formerr++;
      return errorResponse(msg, RCODE.FORMERR);
    }
    const table = this.table;
    // Zone transfers are not offered; other classes hold nothing here.
    if (table === undefined || q.qclass !== CLASS_IN || (q.type >= TYPE.IXFR && q.type <= TYPE.MAILA)) {
      c.refused++;
      return out(REFUSED_SECTIONS);
    }
    const view = selectView(table, ip);
    const answer = view === undefined ? undefined : lookup(view, q.name, q.type);
    if (answer !== undefined) {
      c.authoritative++;
      return out(answer);
    }
    return this.forward(msg, q, limit);
  }

  private async forward(msg: Buffer, q: Query, limit: number): Promise<Buffer> {
    this.counters.forwarded++;
    let reply: Buffer | undefined;
    try {
      reply = await this.forwarder.resolve(msg, q.questionEnd);
    } catch (err) {
      this.log(`dns: forward failed: ${String(err)}`);
    }
    if (reply === undefined) {
      this.counters.servfail++;
      return assemble(msg, q, SERVFAIL_SECTIONS, limit);
    }
    const fitted = fitToLimit(reply, q.questionEnd, limit);
    if (fitted !== reply) this.counters.truncated++;
    return fitted;
  }
}
