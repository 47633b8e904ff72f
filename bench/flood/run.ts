// Issue 25's floods against the built `oooi serve` (run `npm run build` first; `npm run bench:flood`
// does): per flood, the serve process's memory and a legitimate client's DNS answer latency (UDP,
// p50/p99 of spaced queries from a separate process) beside the same with no flood, measured in
// the same run; then CPU per Delta subscription update at two subscription sizes. One JSON line each.
// FLOOD_ONLY=name[,name] runs a subset (and the baseline).
import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { summary, round, emit } from "../xds/stats.js";
import { deltaCpuPerUpdate } from "./delta-cpu.js";
import {
  bigManifestFile,
  deltaOneMoreName,
  dnsTcpPipelined,
  dnsTcpTrickle,
  sseNeverRead,
  unknownNodeIds,
  xdsIdleConnections,
  type Flood,
} from "./floods.js";
import { makePki, Served, type Pki } from "./served.js";

/** Progress to stderr, so stdout stays one JSON object per flood. */
const progress = (msg: string): void => {
  process.stderr.write(`[bench:flood] ${msg}\n`);
};

const PROBE_QUERIES = 300;
const PROBE_GAP_MS = 40;

interface Probe {
  readonly latencies: number[];
  readonly lost: number;
  readonly tcpTried: number;
  readonly tcpAnswered: number;
}

/** The legitimate client (probe.ts) in its own process. */
function probe(port: number, tcpEveryMs: number): Promise<Probe> {
  const child = spawn(
    process.execPath,
    [
      join(import.meta.dirname, "probe.js"),
      String(port),
      String(PROBE_QUERIES),
      String(PROBE_GAP_MS),
      String(tcpEveryMs),
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
  return new Promise((resolve, reject) => {
    child.once("exit", (code) => {
      if (code === 0) resolve(JSON.parse(out) as Probe);
      else reject(new Error(`probe exited ${String(code)}`));
    });
  });
}

const NONE: Flood = { name: "none", start: () => Promise.resolve(() => Promise.resolve({})) };

/** One flood on a fresh serve: RSS before, the flood with the probe running, RSS after it stopped. */
async function measure(pki: Pki, flood: Flood): Promise<Record<string, unknown>> {
  const served = new Served(pki, flood.serveArgs ?? [], flood.name);
  try {
    await served.ready();
    await new Promise((r) => setTimeout(r, 1000));
    const rssBefore = served.rssMiB();
    const stop = await flood.start(served, pki);
    progress(`${flood.name}: flooding`);
    let rssMax = served.rssMiB();
    const sampler = setInterval(() => {
      rssMax = Math.max(rssMax, served.rssMiB());
    }, 250);
    const p = await probe(served.dnsPort, flood.tcpProbe === true ? 1000 : 0);
    clearInterval(sampler);
    rssMax = Math.max(rssMax, served.rssMiB());
    const rssDuring = served.rssMiB();
    const did = await stop();
    await new Promise((r) => setTimeout(r, 3000));
    const s = summary(p.latencies);
    return {
      rss_before_mib: round(rssBefore),
      rss_max_mib: round(rssMax),
      rss_end_of_flood_mib: round(rssDuring),
      rss_3s_after_mib: round(served.rssMiB()),
      dns_p50_ms: s.p50,
      dns_p99_ms: s.p99,
      dns_max_ms: s.max,
      dns_lost: p.lost,
      ...(flood.tcpProbe === true ? { dns_tcp_answered: `${String(p.tcpAnswered)}/${String(p.tcpTried)}` } : {}),
      flood: did,
      loadavg_1m: round(loadavg()[0] ?? Number.NaN),
    };
  } finally {
    await served.stop();
  }
}

const FLOODS: readonly Flood[] = [
  xdsIdleConnections(4096 + 64),
  sseNeverRead(64 + 16),
  dnsTcpPipelined(16),
  dnsTcpTrickle(1024 + 16, 4000),
  deltaOneMoreName(),
  unknownNodeIds(5000),
  bigManifestFile(8 * 1024 * 1024 - 16 * 1024),
];

async function main(): Promise<void> {
  const only = process.env["FLOOD_ONLY"]?.split(",");
  const pki = await makePki();
  progress("baseline: no flood");
  const baseline = await measure(pki, NONE);
  emit({ name: "flood.baseline", ...baseline, queries: PROBE_QUERIES, gap_ms: PROBE_GAP_MS });
  for (const flood of FLOODS) {
    if (only !== undefined && !only.includes(flood.name)) continue;
    progress(flood.name);
    const m = await measure(pki, flood);
    emit({
      name: `flood.${flood.name}`,
      ...m,
      baseline_rss_max_mib: baseline["rss_max_mib"],
      baseline_dns_p50_ms: baseline["dns_p50_ms"],
      baseline_dns_p99_ms: baseline["dns_p99_ms"],
    });
  }
  if (only === undefined || only.includes("delta_cpu")) {
    progress("delta_cpu");
    emit(await deltaCpuPerUpdate([1000, 10_000], 1000));
  }
  rmSync(pki.dir, { recursive: true, force: true });
}

await main();
