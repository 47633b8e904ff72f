// `npm run bench:dns`: dnsperf against BIND 9 (reference), the embedded responder and a naive
// dns2 handler (floor), all serving the same two views on loopback, interleaved in rounds so
// machine noise hits every target alike. Prints one JSON object per target and depth.
//   DNS_BENCH_OUTSTANDING  dnsperf -q, or several (e.g. "4,500"), each measured in the same run (100)
//   DNS_BENCH_SECONDS, DNS_BENCH_ROUNDS  per run (5) and rounds (3)
//   DNS_BENCH_DNSPERF_BUFFER_KB  dnsperf -b, its socket buffers in KB (default 4096; "" for the
//                          system's 208 KB, with which dnsperf's own socket drops replies at -q 500)
//   DNS_BENCH_CLIENTS      dnsperf -c, its client sockets (default 1)
//   DNS_BENCH_NAIVE=0      leave the dns2 floor out
//   DNS_BENCH_UDP_PROCESSES  the embedded responder's udpProcesses, or several (e.g. "1,2"), each
//                          its own target in the same rounds (default 1)
// Every run also reports where datagrams were dropped (drops.ts): by the kernel at the server's
// socket, or at dnsperf's own.
import { createSocket } from "node:dgram";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startDnsResponder } from "../../src/dns/server/index.js";
import { haveNamed, startNamed } from "./bind.js";
import { dnsperf, type DnsperfResult } from "./dnsperf.js";
import { processCpuMs, responderCpuMs } from "./cpu.js";
import { DropWatch, type DropCounts } from "./drops.js";
import { benchModel, benchQueries, VLAN_SOURCE } from "./model.js";
import { startNaive } from "./naive.js";

const SECONDS = Number(process.env["DNS_BENCH_SECONDS"] ?? 5);
const ROUNDS = Number(process.env["DNS_BENCH_ROUNDS"] ?? 3);
// dnsperf's default; higher values saturate BIND harder.
const DEPTHS = (process.env["DNS_BENCH_OUTSTANDING"] ?? "100").split(",").map(Number);
const optional = (name: string): number | undefined => {
  const v = process.env[name];
  return v === undefined || v === "" ? undefined : Number(v);
};
// dnsperf's socket must hold every reply in flight, or the figure counts its drops as lost.
const BUFFER_KB =
  optional("DNS_BENCH_DNSPERF_BUFFER_KB") ?? (process.env["DNS_BENCH_DNSPERF_BUFFER_KB"] === "" ? undefined : 4096);
const CLIENTS = optional("DNS_BENCH_CLIENTS");
const UDP_PROCESSES = (process.env["DNS_BENCH_UDP_PROCESSES"] ?? "1").split(",").map(Number);

interface Run extends DnsperfResult {
  readonly drops: DropCounts;
  /** CPU the answering processes spent over the run, ms (cpu.ts). */
  readonly cpuMs: number;
}

interface Target {
  readonly name: string;
  readonly port: number;
  readonly runs: Map<number, Run[]>;
  /** Cumulative CPU ms of the processes answering for this target. */
  readonly cpu: () => number;
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
}

async function freePort(): Promise<number> {
  const s = createSocket("udp4");
  await new Promise<void>((resolve) => s.bind(0, "127.0.0.1", resolve));
  const { port } = s.address();
  await new Promise<void>((resolve) => {
    s.close(() => {
      resolve();
    });
  });
  return port;
}

async function main(): Promise<void> {
  if (!haveNamed()) throw new Error("named not found: apt-get install -y bind9 (the benchmark's reference)");
  const dir = mkdtempSync(join(tmpdir(), "oooi-bench-dns-"));
  const model = benchModel();
  const queryFile = join(dir, "queries.txt");
  writeFileSync(queryFile, benchQueries());

  const named = await startNamed(model, dir, await freePort());
  const embedded = await Promise.all(
    UDP_PROCESSES.map((udpProcesses) =>
      startDnsResponder(model, { host: "127.0.0.1", port: 0, resolvConfPath: "/dev/null", udpProcesses }),
    ),
  );
  const naive = await startNaive(model);
  const targets: Target[] = [
    { name: "dns/bind9", port: named.port, runs: new Map(), cpu: () => processCpuMs(named.pid) },
    ...embedded.map((e, i) => {
      const n = UDP_PROCESSES[i] ?? 1;
      return {
        name: n === 1 ? "dns/oooi-embedded" : `dns/oooi-embedded-${String(n)}-processes`,
        port: e.address.udpPort,
        runs: new Map(),
        cpu: responderCpuMs,
      };
    }),
    ...(process.env["DNS_BENCH_NAIVE"] === "0"
      ? []
      : [{ name: "dns/dns2-naive", port: naive.port, runs: new Map(), cpu: () => processCpuMs(process.pid) }]),
  ];
  try {
    for (const outstanding of DEPTHS) {
      for (let round = 0; round < ROUNDS; round++) {
        for (const t of targets) {
          const watch = new DropWatch(t.port, VLAN_SOURCE);
          const cpuBefore = t.cpu();
          const result = await dnsperf({
            host: "127.0.0.1",
            port: t.port,
            source: VLAN_SOURCE,
            queryFile,
            seconds: SECONDS,
            outstanding,
            bufferKb: BUFFER_KB,
            clients: CLIENTS,
          });
          const runs = t.runs.get(outstanding) ?? [];
          runs.push({ ...result, drops: watch.stop(), cpuMs: t.cpu() - cpuBefore });
          t.runs.set(outstanding, runs);
        }
      }
    }
  } finally {
    await Promise.all([named.stop(), ...embedded.map((e) => e.close()), naive.stop()]);
    rmSync(dir, { recursive: true, force: true });
  }
  for (const outstanding of DEPTHS) report(targets, outstanding);
}

function report(targets: readonly Target[], outstanding: number): void {
  const bindQps = median(targets[0]?.runs.get(outstanding)?.map((r) => r.qps) ?? []);
  for (const t of targets) {
    const runs = t.runs.get(outstanding) ?? [];
    const qps = median(runs.map((r) => r.qps));
    const rcodes: Record<string, number> = {};
    for (const r of runs) for (const [code, n] of Object.entries(r.rcodes)) rcodes[code] = (rcodes[code] ?? 0) + n;
    const sum = (f: (r: Run) => number): number => runs.reduce((n, r) => n + f(r), 0);
    console.log(
      JSON.stringify({
        name: t.name,
        qps: Math.round(qps),
        lost: sum((r) => r.lost),
        sent: sum((r) => r.sent),
        // Datagrams the kernel dropped for want of receive buffer, at each end (summed over rounds).
        server_socket_drops: sum((r) => r.drops.server),
        dnsperf_socket_drops: sum((r) => r.drops.client),
        server_max_rx_queue_bytes: Math.max(...runs.map((r) => r.drops.server_max_rx_queue_bytes)),
        dnsperf_max_rx_queue_bytes: Math.max(...runs.map((r) => r.drops.client_max_rx_queue_bytes)),
        avg_latency_ms: Number(median(runs.map((r) => r.avgLatencyMs)).toFixed(3)),
        ratio_vs_bind: Number((qps / bindQps).toFixed(3)),
        // CPU of the answering processes per answered query (all rounds): the cost a core pays.
        cpu_us_per_query: Number(
          (
            (sum((r) => r.cpuMs) * 1000) /
            Math.max(
              1,
              sum((r) => r.completed),
            )
          ).toFixed(2),
        ),
        runs_qps: runs.map((r) => Math.round(r.qps)),
        runs_lost: runs.map((r) => r.lost),
        rcodes,
        seconds_per_run: SECONDS,
        outstanding,
        dnsperf_buffer_kb: BUFFER_KB ?? "default",
        dnsperf_clients: CLIENTS ?? 1,
      }),
    );
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exitCode = 1;
});
