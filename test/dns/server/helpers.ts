// Shared pieces of the responder tests: the seed's model on loopback, a stand-in upstream
// resolver, and real `dig` runs with their output parsed.
import { spawn } from "node:child_process";
import { createSocket, type Socket as UdpSocket } from "node:dgram";
import { createServer, type Server, type Socket } from "node:net";
import { Packet } from "dns2";
import type { ARecord, DnsModel, Zone } from "../../../src/model/types.js";

/** The seed's hosted cluster domain (Verification section). */
export const DOMAIN = "example-hcp.clusters.example.com";
/** The VLAN of the tests: on loopback, so `dig -b 127.0.8.5` is a VLAN client. */
export const VLAN_CIDR = "127.0.8.0/24";
export const VLAN_CLIENT = "127.0.8.5";
export const OTHER_CLIENT = "127.0.0.1";
export const DNS_IP = "192.0.2.3";
export const PROXY_IP = "192.0.2.4";
export const APPS_VIP = "192.0.2.200";
/** internalProxyService's ClusterIP: the default view's answer. */
export const INTERNAL_IP = "172.30.12.34";
/** What the stand-in upstream answers for www.example.net. */
export const FORWARDED_IP = "203.0.113.80";

const ALIASES = ["kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"];

function clusterZone(address: string, apps: string, extra: readonly ARecord[] = []): Zone {
  const records: ARecord[] = ["api", "api-int", "ignition", "konnectivity", "oauth"].map((h) => ({
    name: `${h}.${DOMAIN}`,
    address,
  }));
  records.push({ name: `*.apps.${DOMAIN}`, address: apps }, ...extra);
  records.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.address < b.address ? -1 : 1));
  return { origin: DOMAIN, records };
}

function zonesFor(address: string, apps: string, extra: readonly ARecord[] = []): Zone[] {
  const zones = [
    clusterZone(address, apps, extra),
    ...ALIASES.map((a) => ({ origin: a, records: [{ name: a, address }] })),
  ];
  return zones.sort((a, b) => (a.origin < b.origin ? -1 : 1));
}

/**
 * The seed's names as one zone for the domain, with the VLAN on loopback; `vlanExtra` adds records
 * to the VLAN's cluster zone. A zone with records below its apex exercises more of the responder
 * than the model's per-name zones do (those, and foo.D being forwarded, are in
 * domain-not-owned.test.ts and test/dns/coredns).
 */
export function seedModel(
  upstreams: DnsModel["upstreams"],
  vlanExtra: readonly ARecord[] = [],
  proxy = PROXY_IP,
): DnsModel {
  return {
    name: "clusters/example-dns",
    serverIP: DNS_IP,
    views: [
      { name: "vlan", sourceCidr: VLAN_CIDR, zones: zonesFor(proxy, APPS_VIP, vlanExtra) },
      { name: "default", sourceCidr: undefined, zones: zonesFor(INTERNAL_IP, INTERNAL_IP) },
    ],
    upstreams,
    cacheSeconds: 30,
    reloadSeconds: 5,
  };
}

/** Parsed `dig` output. */
export interface DigResult {
  readonly status: string;
  readonly flags: readonly string[];
  /** Answer section: "name ttl class type data" lines, whitespace collapsed. */
  readonly answer: readonly string[];
  readonly authority: readonly string[];
  readonly additional: readonly string[];
  /** The OPT pseudo-section's "udp:" value, when the reply had one. */
  readonly ednsUdp: number | undefined;
  readonly raw: string;
}

/** Runs real dig against the responder. */
export async function dig(server: { host: string; port: number }, args: readonly string[]): Promise<DigResult> {
  const raw = await run("dig", [`@${server.host}`, "-p", String(server.port), "+time=3", "+tries=1", ...args]);
  const status = /status: (\w+)/.exec(raw)?.[1] ?? "";
  const flags = (/;; flags: ([^;]*);/.exec(raw)?.[1] ?? "")
    .trim()
    .split(/\s+/)
    .filter((f) => f !== "");
  const section = (title: string): string[] => {
    const m = new RegExp(`;; ${title} SECTION:\\n([\\s\\S]*?)(?:\\n\\n|$)`).exec(raw);
    return (m?.[1] ?? "")
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => l.trim().split(/\s+/).join(" "));
  };
  const udp = /; EDNS: version: \d+, flags:[^;]*; udp: (\d+)/.exec(raw)?.[1];
  return {
    status,
    flags,
    answer: section("ANSWER"),
    authority: section("AUTHORITY"),
    additional: section("ADDITIONAL"),
    ednsUdp: udp === undefined ? undefined : Number(udp),
    raw,
  };
}

/**
 * `dig +short` for `name` at 127.0.0.1:`port`, sent from loopback address `source` (which picks the
 * view): the answer lines, or dig's complaint when no answer came.
 */
export async function digShort(port: number, source: string, name: string, tries = 3): Promise<string> {
  const args = ["@127.0.0.1", "-p", String(port), "-b", source, "+short", `+tries=${String(tries)}`, "+time=2", name];
  return (await run("dig", args)).trim();
}

/** Addresses of the A records in an answer section. */
export function addresses(r: DigResult): string[] {
  return r.answer
    .filter((l) => l.split(" ")[3] === "A")
    .map((l) => l.split(" ")[4] ?? "")
    .sort();
}

function run(cmd: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    child.on("error", reject);
    child.on("close", () => {
      resolve(out);
    });
  });
}

/** How the stand-in upstream behaves. */
export type StandInMode = "answer" | "silent" | "truncate-udp";

/** A query as the stand-in upstream saw it. */
export interface SeenQuery {
  readonly transport: "udp" | "tcp";
  readonly id: number;
  readonly port: number;
  readonly name: string;
}

/** A tiny upstream resolver (dns2's codec, independent of ours) on UDP and TCP. */
export interface StandIn {
  readonly host: string;
  readonly port: number;
  mode: StandInMode;
  readonly seen: SeenQuery[];
  close(): Promise<void>;
}

/** Many A records for big.example.net: too large for 512 bytes, fine for TCP. */
const BIG_COUNT = 40;

function answerFor(query: Buffer, truncate: boolean): Buffer {
  const req = Packet.parse(query);
  const res = new Packet();
  res.header = new Packet.Header({ id: req.header.id, opcode: req.header.opcode, rd: req.header.rd, qr: 1, ra: 1 });
  res.questions = req.questions;
  const q = req.questions[0];
  const name = q?.name.toLowerCase() ?? "";
  if (truncate) {
    res.header.tc = 1;
    return res.toBuffer();
  }
  if (name === "www.example.net" && q?.type === Packet.TYPE.A) {
    res.answers.push(
      new Packet.Resource({ name: q.name, type: Packet.TYPE.A, class: 1, ttl: 60, address: FORWARDED_IP }),
    );
  } else if (name === "big.example.net" && q?.type === Packet.TYPE.A) {
    for (let i = 1; i <= BIG_COUNT; i++) {
      res.answers.push(
        new Packet.Resource({ name: q.name, type: Packet.TYPE.A, class: 1, ttl: 60, address: `198.18.0.${i}` }),
      );
    }
  } else {
    res.header.rcode = 3; // NXDOMAIN
  }
  return res.toBuffer();
}

/** Starts a stand-in upstream on `host` (port 0: any, else that port). */
export async function startStandIn(host: string, port = 0, mode: StandInMode = "answer"): Promise<StandIn> {
  const seen: SeenQuery[] = [];
  const udp: UdpSocket = createSocket("udp4");
  await new Promise<void>((resolve) => udp.bind(port, host, resolve));
  const bound = udp.address().port;
  const sockets = new Set<Socket>();
  const state: StandIn = {
    host,
    port: bound,
    mode,
    seen,
    close: async () => {
      for (const s of sockets) s.destroy();
      await Promise.all([
        new Promise<void>((r) => {
          udp.close(() => {
            r();
          });
        }),
        new Promise<void>((r) => {
          tcp.close(() => {
            r();
          });
        }),
      ]);
    },
  };
  const record = (transport: "udp" | "tcp", msg: Buffer, p: number): void => {
    const name = Packet.parse(msg).questions[0]?.name ?? "";
    seen.push({ transport, id: msg.readUInt16BE(0), port: p, name });
  };
  udp.on("message", (msg, rinfo) => {
    record("udp", msg, rinfo.port);
    if (state.mode === "silent") return;
    // Classic 512-byte UDP limit regardless of EDNS: anything bigger is sent truncated.
    let reply = answerFor(msg, state.mode === "truncate-udp");
    if (reply.length > 512) reply = answerFor(msg, true);
    udp.send(reply, rinfo.port, rinfo.address);
  });
  const tcp: Server = createServer((socket) => {
    sockets.add(socket);
    let buf = Buffer.alloc(0);
    socket.on("error", () => socket.destroy());
    socket.on("close", () => sockets.delete(socket));
    socket.on("data", (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        const msg = buf.subarray(2, 2 + buf.readUInt16BE(0));
        buf = buf.subarray(2 + msg.length);
        record("tcp", msg, socket.remotePort ?? 0);
        if (state.mode === "silent") continue;
        const reply = answerFor(msg, false);
        const len = Buffer.alloc(2);
        len.writeUInt16BE(reply.length);
        socket.write(Buffer.concat([len, reply]));
      }
    });
  });
  await new Promise<void>((resolve) => tcp.listen(bound, host, resolve));
  return state;
}

/** A query to encode by hand. */
export interface QuerySpec {
  readonly id: number;
  readonly rd: boolean;
  readonly name: string;
  readonly type: number;
  readonly qclass: number;
  readonly edns: { readonly payload: number; readonly version: number; readonly dnssecOk: boolean } | undefined;
}

/** Our own encoding of a query, independent of the responder's codec. */
export function encodeQuery(q: QuerySpec): Buffer {
  const labels = q.name.split(".").filter((l) => l !== "");
  const name = Buffer.concat([
    ...labels.map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l, "latin1")])),
    Buffer.from([0]),
  ]);
  const header = Buffer.alloc(12);
  header.writeUInt16BE(q.id, 0);
  header[2] = q.rd ? 1 : 0;
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(q.edns === undefined ? 0 : 1, 10);
  const question = Buffer.alloc(4);
  question.writeUInt16BE(q.type, 0);
  question.writeUInt16BE(q.qclass, 2);
  const parts = [header, name, question];
  if (q.edns !== undefined) {
    const opt = Buffer.alloc(11);
    opt.writeUInt16BE(41, 1);
    opt.writeUInt16BE(q.edns.payload, 3);
    opt[6] = q.edns.version;
    opt[7] = q.edns.dnssecOk ? 0x80 : 0;
    parts.push(opt);
  }
  return Buffer.concat(parts);
}

/**
 * The A answer to one UDP query for `name` sent from `from` (a VLAN address on loopback) to
 * 127.0.0.1:port, or undefined when none came within `waitMs`.
 */
export async function askA(
  port: number,
  q: { readonly id: number; readonly name: string; readonly from: string },
  waitMs: number,
): Promise<string | undefined> {
  const query = encodeQuery({
    id: q.id,
    rd: true,
    name: q.name,
    type: Packet.TYPE.A,
    qclass: Packet.CLASS.IN,
    edns: undefined,
  });
  const socket = createSocket("udp4");
  try {
    await new Promise<void>((resolve) => socket.bind(0, q.from, resolve));
    return await new Promise<string | undefined>((resolve) => {
      const timer = setTimeout(() => {
        resolve(undefined);
      }, waitMs);
      socket.on("message", (msg) => {
        const reply = Packet.parse(msg);
        if (reply.header.id !== q.id) return;
        clearTimeout(timer);
        resolve(reply.answers.find((a) => a.type === Packet.TYPE.A)?.address);
      });
      socket.send(query, port, "127.0.0.1");
    });
  } finally {
    socket.close();
  }
}

/**
 * Asks `ask` over and over, one query at a time (5 ms apart), until it answers `next`: how many answers
 * were still `previous` and how many queries went unanswered meanwhile. The deadline guards against a
 * hang under load; it measures nothing.
 */
export async function answersUntil(
  ask: () => Promise<string | undefined>,
  change: { readonly previous: string; readonly next: string; readonly never: string },
  deadlineMs = 180_000,
): Promise<{ old: number; missed: number }> {
  let old = 0;
  let missed = 0;
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const answer = await ask();
    if (answer === change.next) return { old, missed };
    if (answer === change.previous) old += 1;
    else missed += 1;
    if (Date.now() > deadline) throw new Error(change.never);
    await new Promise((r) => setTimeout(r, 5));
  }
}
