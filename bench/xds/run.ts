// xDS benchmark (issue 3): three scenarios, each printed as one JSON line on stdout (progress on
// stderr). `node dist-bench/bench/xds/run.js` runs every scenario in a fresh child process of its
// own (with --expose-gc), so one scenario's heap never weighs on another's timings or memory
// figures; the clients of each scenario run in further child processes (see clients.ts).
//   XDS_BENCH_ONLY=1,2,3,4 scenarios to run (default 1,2,3; 4 is the whole serve path, issue 16)
//   XDS_BENCH_QUICK=1      small sizes, for a smoke test of the harness
//   XDS_BENCH_SERVE_INFRAS, _WORKERS, _CHANGES  scenario 4's size (300 Infras × 5 × 100 workers, 60
//                          changes per shape)
//   XDS_BENCH_SERVE_SHAPES scenario 4's change shapes, comma-separated (default every one:
//                          atomic,in-place,new-file,deleted-file)
//   XDS_BENCH_SERVE_LOAD   scenario 4: in-place edits per second of other Infras' files meanwhile (default 0)
//   XDS_BENCH_SERVE_DEBOUNCE  scenario 4: serve's --debounce in ms (default 100, serve's own default)
//   XDS_BENCH_SERVE_FIRST_RENDER_MS  scenario 4: how long serve's first rendering may take (default 30 min)
//   XDS_BENCH_CPU_PROFILE=FILE  scenario 4: a CPU profile of the large run's changes (not its loading);
//                          scenario 2: of the interleaved layout's change loop
//   XDS_BENCH_FIRST_RENDER_PROFILE=FILE  scenario 4: a CPU profile of the large run's first rendering
//   XDS_BENCH_ALLOC_PROFILE=FILE  scenario 4: a sampling allocation profile of the large run's changes
//                          (garbage included; `node dist-bench/bench/operator/alloc-summary.js FILE`)
//   XDS_BENCH_SERVE_HEAP_SNAPSHOT=PREFIX  scenario 4: a heap snapshot after each run's first rendering,
//                          PREFIX-1.heapsnapshot and PREFIX-<infras>.heapsnapshot (compare with heap-diff.js)
//   XDS_BENCH_CHANGES      scenario 2's changes in the interleaved layout (default 8)
//   XDS_BENCH_BIG_CLUSTERS scenario 2's hosted clusters of 100 workers each (default 500: 50,000 workers;
//                          at most 640, the /16 the model allows a VLAN; the blocks layout at most 500)
//   XDS_BENCH_FULL_CHANGES scenario 1's full-path changes (default 3; each takes tens of seconds)
//   XDS_BENCH_ROUNDS       scenario 3's push rounds (default 30; the idle-memory figures need none)
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { bigVlan, fitsOneVlan } from "./big-vlan.js";
import { fanout } from "./fanout.js";
import { manyInfras } from "./many-infras.js";
import { servePath, SHAPES, type ChangeShape } from "./serve-path.js";
import { emit, progress } from "./stats.js";

const quick = process.env["XDS_BENCH_QUICK"] === "1";

function shapesOf(list: string | undefined): ChangeShape[] | undefined {
  if (list === undefined || list === "") return undefined;
  return list.split(",").map((name) => {
    const shape = SHAPES.find((s) => s === name.trim());
    if (shape === undefined)
      throw new Error(`XDS_BENCH_SERVE_SHAPES: unknown shape ${name} (known: ${SHAPES.join(", ")})`);
    return shape;
  });
}

async function scenario(n: string): Promise<void> {
  if (n === "1") {
    const fullChanges = Number(process.env["XDS_BENCH_FULL_CHANGES"] ?? "3");
    emit(
      await manyInfras(
        quick
          ? { infras: 20, replicas: 3, clusters: 5, workers: 100, changes: 20, fullChanges: 2, processes: 2 }
          : { infras: 300, replicas: 3, clusters: 5, workers: 100, changes: 150, fullChanges, processes: 2 },
      ),
    );
  } else if (n === "2") {
    const interleaved = await bigVlan(
      quick
        ? { clusters: 50, workers: 100, replicas: 3, changes: 3, layout: "interleaved", renderAll: true }
        : {
            clusters: Number(process.env["XDS_BENCH_BIG_CLUSTERS"] ?? "500"),
            workers: 100,
            replicas: 3,
            changes: Number(process.env["XDS_BENCH_CHANGES"] ?? "8"),
            layout: "interleaved",
            renderAll: true,
            cpuProfile: process.env["XDS_BENCH_CPU_PROFILE"],
          },
    );
    const blockClusters = Number(process.env["XDS_BENCH_BIG_CLUSTERS"] ?? "500");
    // The blocks layout pads each cluster to 128 addresses: past 500 clusters it leaves the /16.
    const blocks = fitsOneVlan(blockClusters, 100, "blocks")
      ? await bigVlan(
          quick
            ? { clusters: 50, workers: 100, replicas: 3, changes: 3, layout: "blocks", renderAll: false }
            : { clusters: blockClusters, workers: 100, replicas: 3, changes: 8, layout: "blocks", renderAll: false },
        )
      : { name: "skipped", why: `${String(blockClusters)} clusters of 128 addresses do not fit one /16` };
    // One line per scenario: the blocks layout nested in the (worst-case) interleaved result.
    emit({ ...interleaved, blocks_layout: Object.fromEntries(Object.entries(blocks).filter(([k]) => k !== "name")) });
  } else if (n === "3") {
    emit(
      await fanout(
        quick
          ? { streams: 100, clusters: 12, workers: 140, rounds: 5, processes: 2 }
          : {
              streams: 1000,
              clusters: 12,
              workers: 140,
              rounds: Number(process.env["XDS_BENCH_ROUNDS"] ?? "30"),
              processes: 2,
            },
      ),
    );
  } else if (n === "4") {
    const lines = await servePath(
      quick
        ? { infras: 20, clusters: 5, workers: 100, changes: 10, gapMs: 300, loadPerSecond: 20 }
        : {
            infras: Number(process.env["XDS_BENCH_SERVE_INFRAS"] ?? "300"),
            clusters: 5,
            workers: Number(process.env["XDS_BENCH_SERVE_WORKERS"] ?? "100"),
            changes: Number(process.env["XDS_BENCH_SERVE_CHANGES"] ?? "60"),
            gapMs: 300,
            cpuProfile: process.env["XDS_BENCH_CPU_PROFILE"],
            firstRenderProfile: process.env["XDS_BENCH_FIRST_RENDER_PROFILE"],
            allocProfile: process.env["XDS_BENCH_ALLOC_PROFILE"],
            heapSnapshot: process.env["XDS_BENCH_SERVE_HEAP_SNAPSHOT"],
            shapes: shapesOf(process.env["XDS_BENCH_SERVE_SHAPES"]),
            loadPerSecond: Number(process.env["XDS_BENCH_SERVE_LOAD"] ?? "0"),
            debounceMs: Number(process.env["XDS_BENCH_SERVE_DEBOUNCE"] ?? "100"),
          },
    );
    for (const line of lines) emit(line);
  } else {
    throw new Error(`unknown scenario ${n}`);
  }
}

const one = process.env["XDS_BENCH_SCENARIO"];
if (one !== undefined) {
  await scenario(one);
  process.exit(0);
} else {
  const started = Date.now();
  const self = fileURLToPath(import.meta.url);
  for (const n of (process.env["XDS_BENCH_ONLY"] ?? "1,2,3").split(",").map((s) => s.trim())) {
    const code = await new Promise<number | null>((resolve) => {
      fork(self, [], {
        execArgv: ["--expose-gc"],
        env: { ...process.env, XDS_BENCH_SCENARIO: n },
        stdio: "inherit",
      }).on("exit", (c) => {
        resolve(c);
      });
    });
    if (code !== 0) {
      progress(`scenario ${n} failed (exit ${String(code)})`);
      process.exitCode = 1;
    }
  }
  progress(`done in ${String(Math.round((Date.now() - started) / 1000))} s`);
}
