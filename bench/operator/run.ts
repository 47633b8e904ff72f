// Operator benchmark (issue 6): `oooi operator`'s composition against the fake API server seeded
// with INFRAS × ATTACHMENTS × MACHINES, in four processes so each one's memory and CPU are its own:
//   driver  — the measured operator (runOperator + SnapshotCache + startXdsServer + publishSnapshots)
//             and the scenario; forked with --expose-gc so RSS is read after a full collection
//   fake    — the fake API server (seeded, plus a Deployment-controller stand-in)
//   envoys  — one Envoy-like ADS client per proxy node group
//   cache    — first, alone: the memory baseline, a bare informer cache of the same lists
//   baseline — afterwards, alone: the pure build+render+publish path for the same cluster
// Prints one JSON object per line (progress on stderr). Environment:
//   OPERATOR_BENCH_QUICK=1       10 × 5 × 50, 5 isolated + 100 streamed changes (harness smoke test)
//   OPERATOR_BENCH_SCALE=I,A,M   Infras, attachments per Infra, Machines per attachment (100,5,50)
//   OPERATOR_BENCH_SIZES="I,A,M I,A,M"  a driver run per size, then one operator.sizes line: RSS per
//                                additional watched object (the slope) and the fixed cost (no baseline run)
//   OPERATOR_BENCH_ISOLATED      changes made one at a time (20)
//   OPERATOR_BENCH_STREAM        changes made at a fixed rate (1000)
//   OPERATOR_BENCH_RATE          their rate per second (10)
//   OPERATOR_BENCH_BASELINE      changes through the pure path (10)
//   OPERATOR_BENCH_CONVERGE_S    give up converging after this long (600 s: the machine is shared)
//   OPERATOR_BENCH_OBJECTS       "realistic" (default): Machines, Services and Namespaces carry what
//                                CAPI, HyperShift and Kubernetes put on them; "minimal": only what is read
//   OPERATOR_BENCH_HEAP_SNAPSHOT FILE: the driver writes a heap snapshot there once converged, and
//                                FILE.after after the changes (diff them with bench/xds/heap-diff.ts)
//   OPERATOR_BENCH_ALLOC_PROF    FILE: a sampling allocation profile of the stream (collected objects
//                                included), as a .heapprofile; summarize with bench/operator/alloc-summary.ts
//   OPERATOR_BENCH_CPU_PROF      DIR: the driver runs under --cpu-prof, its profile written there
//   OPERATOR_BENCH_STREAM_CPU_PROF FILE: a CPU profile of the stream alone (.cpuprofile)
//   OPERATOR_BENCH_ISOLATED_CPU_PROF FILE: likewise of the isolated changes
//   OPERATOR_BENCH_IDLE_CPU_PROF FILE: likewise of the idle window (35 s, one resync pass)
//   OPERATOR_BENCH_FAKE_CPU_PROF DIR: the fake API server's process likewise
//   OPERATOR_BENCH_DEBOUNCE_MS   runOperator's coalescing window (default: runOperator's own)
//   OPERATOR_BENCH_HEAP_MIB      the operator's --max-old-space-size (in a pod, Node derives one from the memory limit)
import { fork } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { purePath } from "./baseline.js";
import { driverMain, type Plan } from "./driver.js";
import { cacheMain } from "./cache-process.js";
import { envoysMain } from "./envoys-process.js";
import { fakeMain } from "./fake-process.js";
import type { Scale } from "./scale.js";
import { pointOf, sizesReport, type SizePoint } from "./sizes.js";
import { emit, progress, summary } from "./stats.js";

const quick = process.env["OPERATOR_BENCH_QUICK"] === "1";
const env = (name: string, dflt: number): number => {
  const v = process.env[name];
  return v === undefined || v === "" ? dflt : Number(v);
};

function scale(): Scale {
  const given = process.env["OPERATOR_BENCH_SCALE"];
  const [infras = 100, attachments = 5, machines = 50] =
    given === undefined ? (quick ? [10, 5, 50] : [100, 5, 50]) : given.split(",").map(Number);
  if (attachments * machines > 254)
    throw new Error("at most 254 Machines per Infra (their addresses fill 10.<i>.1.0/24)");
  if (infras > 16_384) throw new Error("at most 16,384 Infras (a /22 VLAN each in 10.0.0.0/8)");
  const objects = process.env["OPERATOR_BENCH_OBJECTS"] ?? "realistic";
  if (objects !== "realistic" && objects !== "minimal") throw new Error("OPERATOR_BENCH_OBJECTS: realistic or minimal");
  return { infras, attachments, machines, realistic: objects === "realistic" };
}

function plan(): Plan {
  return {
    scale: scale(),
    isolated: env("OPERATOR_BENCH_ISOLATED", quick ? 5 : 20),
    stream: env("OPERATOR_BENCH_STREAM", quick ? 100 : 1000),
    streamPerSecond: env("OPERATOR_BENCH_RATE", 10),
    quietMs: 5_000,
    convergeTimeoutMs: env("OPERATOR_BENCH_CONVERGE_S", 600) * 1000,
    ...(process.env["OPERATOR_BENCH_DEBOUNCE_MS"] === undefined
      ? {}
      : { debounceMs: env("OPERATOR_BENCH_DEBOUNCE_MS", 0) }),
  };
}

function baseline(): void {
  const s = scale();
  const changes = env("OPERATOR_BENCH_BASELINE", 10);
  const t = purePath(s, changes);
  emit({
    name: "operator.baseline_pure_path",
    scale: s,
    what: "as the operator: copy the changed map + buildObserved after the previous snapshot + renderAll with its keyed changes and last-good + publishSnapshots after the previous publish; one Machine address change each (after 5 untimed), no API server, no reconcile",
    changes,
    total_ms: summary(t.total),
    observe_ms: summary(t.observe),
    render_all_ms: summary(t.renderAll),
    publish_ms: summary(t.publish),
    groups_changed_per_change: summary(t.groupsChanged),
  });
}

/** One driver run at `scale` ("I,A,M"), its JSON lines passed through and returned. */
async function sizedDriver(scale: string): Promise<{ code: number | null; lines: Record<string, unknown>[] }> {
  const lines: Record<string, unknown>[] = [];
  const code = await child("driver", { OPERATOR_BENCH_SCALE: scale }, (line) => {
    process.stdout.write(`${line}\n`);
    try {
      lines.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // not a figure
    }
  });
  return { code, lines };
}

async function child(
  role: string,
  extraEnv: Record<string, string> = {},
  onLine?: (line: string) => void,
): Promise<number | null> {
  const self = fileURLToPath(import.meta.url);
  const profile = process.env["OPERATOR_BENCH_CPU_PROF"];
  const profiled = role === "driver" && profile !== undefined && profile !== "";
  // The driver process hosts the operator: its heap cap is the Deployment's.
  const heap = role === "driver" ? process.env["OPERATOR_BENCH_HEAP_MIB"] : undefined;
  return new Promise((resolve) => {
    const forked = fork(self, [], {
      execArgv: [
        "--expose-gc",
        ...(profiled ? ["--cpu-prof", `--cpu-prof-dir=${profile}`] : []),
        ...(heap === undefined || heap === "" ? [] : [`--max-old-space-size=${heap}`]),
      ],
      env: { ...process.env, ...extraEnv, OPERATOR_BENCH_ROLE: role },
      stdio: onLine === undefined ? "inherit" : ["inherit", "pipe", "inherit", "ipc"],
    });
    if (onLine !== undefined && forked.stdout !== null) createInterface({ input: forked.stdout }).on("line", onLine);
    forked.on("exit", (code) => {
      resolve(code);
    });
  });
}

const role = process.env["OPERATOR_BENCH_ROLE"];
if (role === "fake") await fakeMain(scale());
else if (role === "envoys") envoysMain();
else if (role === "cache") cacheMain();
else if (role === "driver") {
  await driverMain(plan());
  process.exit(0);
} else if (role === "baseline") {
  baseline();
  process.exit(0);
} else if (process.env["OPERATOR_BENCH_SIZES"] !== undefined) {
  const started = Date.now();
  const points: SizePoint[] = [];
  for (const size of process.env["OPERATOR_BENCH_SIZES"].trim().split(/\s+/)) {
    const { code, lines } = await sizedDriver(size);
    const point = pointOf(size, lines);
    if (code !== 0 || point === undefined) {
      progress(`driver at ${size} failed (exit ${String(code)}) or did not converge`);
      process.exitCode = 1;
    } else points.push(point);
  }
  if (points.length >= 2) emit(sizesReport(points));
  progress(`done in ${String(Math.round((Date.now() - started) / 1000))} s`);
} else {
  const started = Date.now();
  for (const r of ["driver", "baseline"]) {
    const code = await child(r);
    if (code !== 0) {
      progress(`${r} failed (exit ${String(code)})`);
      process.exitCode = 1;
    }
  }
  progress(`done in ${String(Math.round((Date.now() - started) / 1000))} s`);
}
