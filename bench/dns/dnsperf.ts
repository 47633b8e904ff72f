// Runs dnsperf once and reads its summary.
import { spawn } from "node:child_process";

/** One dnsperf run's figures. */
export interface DnsperfResult {
  readonly sent: number;
  readonly completed: number;
  readonly lost: number;
  readonly qps: number;
  readonly avgLatencyMs: number;
  /** Response codes seen, e.g. { NOERROR: 1000, NXDOMAIN: 120 }. */
  readonly rcodes: Readonly<Record<string, number>>;
}

/** What to query and for how long. */
export interface DnsperfTarget {
  readonly host: string;
  readonly port: number;
  readonly source: string;
  readonly queryFile: string;
  readonly seconds: number;
  /** Queries in flight at once (dnsperf -q). */
  readonly outstanding: number;
  /** dnsperf's socket send/receive buffer in KB (-b); undefined: the system default. */
  readonly bufferKb?: number | undefined;
  /** Client sockets (-c); undefined: dnsperf's default (1). */
  readonly clients?: number | undefined;
}

/** Runs dnsperf against `t` (UDP, one thread). */
export async function dnsperf(t: DnsperfTarget): Promise<DnsperfResult> {
  const args = [
    "-s",
    t.host,
    "-p",
    String(t.port),
    "-a",
    t.source,
    "-d",
    t.queryFile,
    "-l",
    String(t.seconds),
    "-q",
    String(t.outstanding),
    "-t",
    "2",
    ...(t.bufferKb === undefined ? [] : ["-b", String(t.bufferKb)]),
    ...(t.clients === undefined ? [] : ["-c", String(t.clients)]),
  ];
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn("dnsperf", args, { stdio: ["ignore", "pipe", "pipe"] });
    let text = "";
    child.stdout.on("data", (d: Buffer) => (text += d.toString()));
    child.stderr.on("data", (d: Buffer) => (text += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) resolve(text);
      else reject(new Error(`dnsperf exited with ${String(code)}:\n${text}`));
    });
  });
  const num = (re: RegExp): number => {
    const m = re.exec(out);
    if (m?.[1] === undefined) throw new Error(`unexpected dnsperf output (${re.source}):\n${out}`);
    return Number(m[1]);
  };
  const rcodes: Record<string, number> = {};
  const codes = /Response codes:\s+(.*)/.exec(out)?.[1] ?? "";
  for (const m of codes.matchAll(/([A-Z]+) (\d+)/g)) rcodes[m[1] ?? ""] = Number(m[2]);
  return {
    sent: num(/Queries sent:\s+(\d+)/),
    completed: num(/Queries completed:\s+(\d+)/),
    lost: num(/Queries lost:\s+(\d+)/),
    qps: num(/Queries per second:\s+([\d.]+)/),
    avgLatencyMs: num(/Average Latency \(s\):\s+([\d.]+)/) * 1000,
    rcodes,
  };
}
