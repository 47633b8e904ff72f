// `npm run bench:dns`: dnsperf against BIND 9 (reference), the embedded responder and a naive
// dns2 handler (floor), all serving the same two views on loopback, interleaved in rounds so
// machine noise hits every target alike. Prints one JSON object per target.
import { createSocket } from "node:dgram";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startDnsResponder } from "../../src/dns/server/index.js";
import { haveNamed, startNamed } from "./bind.js";
import { dnsperf, type DnsperfResult } from "./dnsperf.js";
import { benchModel, benchQueries, VLAN_SOURCE } from "./model.js";
import { startNaive } from "./naive.js";

const SECONDS = Number(process.env["DNS_BENCH_SECONDS"] ?? 5);
const ROUNDS = Number(process.env["DNS_BENCH_ROUNDS"] ?? 3);
// dnsperf's default; higher values saturate BIND harder but also make the load generator drop.
const OUTSTANDING = Number(process.env["DNS_BENCH_OUTSTANDING"] ?? 100);

interface Target {
  readonly name: string;
  readonly port: number;
  readonly runs: DnsperfResult[];
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
  const embedded = await startDnsResponder(model, { host: "127.0.0.1", port: 0, resolvConfPath: "/dev/null" });
  const naive = await startNaive(model);
  const targets: Target[] = [
    { name: "dns/bind9", port: named.port, runs: [] },
    { name: "dns/oooi-embedded", port: embedded.address.udpPort, runs: [] },
    { name: "dns/dns2-naive", port: naive.port, runs: [] },
  ];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const t of targets) {
        t.runs.push(
          await dnsperf({
            host: "127.0.0.1",
            port: t.port,
            source: VLAN_SOURCE,
            queryFile,
            seconds: SECONDS,
            outstanding: OUTSTANDING,
          }),
        );
      }
    }
  } finally {
    await Promise.all([named.stop(), embedded.close(), naive.stop()]);
    rmSync(dir, { recursive: true, force: true });
  }

  const bindQps = median(targets[0]?.runs.map((r) => r.qps) ?? []);
  for (const t of targets) {
    const qps = median(t.runs.map((r) => r.qps));
    const rcodes: Record<string, number> = {};
    for (const r of t.runs) for (const [code, n] of Object.entries(r.rcodes)) rcodes[code] = (rcodes[code] ?? 0) + n;
    console.log(
      JSON.stringify({
        name: t.name,
        qps: Math.round(qps),
        lost: t.runs.reduce((sum, r) => sum + r.lost, 0),
        avg_latency_ms: Number(median(t.runs.map((r) => r.avgLatencyMs)).toFixed(3)),
        ratio_vs_bind: Number((qps / bindQps).toFixed(3)),
        runs_qps: t.runs.map((r) => Math.round(r.qps)),
        rcodes,
        seconds_per_run: SECONDS,
        outstanding: OUTSTANDING,
      }),
    );
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exitCode = 1;
});
