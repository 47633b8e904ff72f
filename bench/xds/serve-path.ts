// Scenario 4, the whole `oooi serve` path (issue 16 target 1, issue 30 target 1): a manifest folder
// with N Infras × 5 hosted clusters × W workers, one YAML file per hosted cluster's Machines, and
// one Machine change at a time in each of the shapes a user makes one (SHAPES): the file saved
// atomically (written beside, renamed over, as editors and kubectl-like tools do), edited in place,
// a new file holding a new worker, that file deleted. The clock runs from before the write until
// an xDS client of that Infra's node group holds the new Listener. With `loadPerSecond`, other
// Infras' Machines files are edited in place at that rate the whole time (agentgateway's "under
// load" case). The real serve(): chokidar, the manifest reader, the incremental model and renderers,
// the cache and the ADS server; the client is bench/xds/clients.ts in a child process. The baseline
// is the same changes with 1 Infra and no load, measured in the same run.
import { mkdtemp, mkdir, rename, rm, unlink, writeFile } from "node:fs/promises";
import type { Session } from "node:inspector/promises";
import { createServer } from "node:net";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { writeHeapSnapshot } from "node:v8";
import { pino } from "pino";
import { stringify } from "yaml";
import { serve } from "../../src/cli/serve.js";
import type { ClusterState } from "../../src/model/types.js";
import { machine, NS } from "../../test/support/fixtures.js";
import { Fleet } from "./fleet.js";
import { startProfile, stopProfile } from "./profile.js";
import { sampleAllocations } from "../operator/gc.js";
import { nowMs, TYPE_CODES, type StreamSpec } from "./protocol.js";
import { clusterName, groupOf, infraState, spareAddress, workerAddress, workerName, type InfraShape } from "./state.js";
import { progress, round, seeded, summary } from "./stats.js";

/** Resolves once `ready()` holds, checked every 500 ms; rejects after `timeoutMs`. */
async function poll(ready: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = nowMs() + timeoutMs;
  while (!(await ready())) {
    if (nowMs() > deadline) throw new Error(`timed out after ${String(timeoutMs)} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** How one Machine change reaches the folder. */
export const SHAPES = ["atomic", "in-place", "new-file", "deleted-file"] as const;
export type ChangeShape = (typeof SHAPES)[number];

/** Sizes of scenario 4. */
export interface ServePathOptions {
  readonly infras: number;
  readonly clusters: number;
  readonly workers: number;
  /** Counted changes per shape. */
  readonly changes: number;
  /** The shapes measured, in this order (default: all). */
  readonly shapes?: readonly ChangeShape[] | undefined;
  /** In-place edits per second of other Infras' files during the changes (0: none). */
  readonly loadPerSecond?: number | undefined;
  /** Pause between changes, beyond serve's coalescing window, so each change is isolated. */
  readonly gapMs: number;
  /** Write a CPU profile of the changes (not the loading) of the large run to this file (.cpuprofile). */
  readonly cpuProfile?: string | undefined;
  /** Write a sampling allocation profile of the changes of the large run to this file (.heapprofile). */
  readonly allocProfile?: string | undefined;
  /** Write a heap snapshot after each run's first rendering to `${heapSnapshot}-${infras}.heapsnapshot`. */
  readonly heapSnapshot?: string | undefined;
  /** serve's --debounce (its default: 100 ms). */
  readonly debounceMs?: number | undefined;
  /** Write a CPU profile of the large run's first rendering (serve started → /readyz) to this file. */
  readonly firstRenderProfile?: string | undefined;
}

const yamlDocs = (objects: readonly object[]): string => objects.map((o) => stringify(o)).join("---\n");

/** Writes one Infra's manifests: its objects, and per hosted cluster a file of its Machines. */
async function writeInfra(dir: string, s: ClusterState, i: number): Promise<void> {
  const sub = join(dir, `infra-${String(i)}`);
  await mkdir(sub, { recursive: true });
  const rest = [...s.infras, ...s.attachments, ...s.namespaces, ...s.services, ...s.nodePools];
  await writeFile(join(sub, "infra.yaml"), yamlDocs(rest));
  const byCp = new Map<string, object[]>();
  for (const m of s.machines) byCp.set(m.metadata.namespace, [...(byCp.get(m.metadata.namespace) ?? []), m]);
  for (const [cp, machines] of byCp) await writeFile(join(sub, `${cp}-machines.yaml`), yamlDocs(machines));
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const a = srv.address();
      const port = typeof a === "object" && a !== null ? a.port : 0;
      srv.close(() => {
        resolve(port);
      });
    });
  });
}

/**
 * One size: per shape, the latencies (ms) of `changes` isolated Machine changes, manifest write →
 * LDS at the client, and those of the uncounted first ones (the first after start is reported apart:
 * it used to rebuild every Infra, the first rendering's claims having had no incumbents).
 */
async function run(o: ServePathOptions): Promise<{
  byShape: Map<ChangeShape, number[]>;
  warmup: number[];
  loadWrites: number;
  firstRenderMs: number;
  heapMib: number;
}> {
  const firstId = 0;
  const shapes: InfraShape[] = Array.from({ length: o.infras }, (_, i) => ({
    index: i,
    base: ((10 << 24) >>> 0) + i * 2048,
    prefix: 21,
    clusters: o.clusters,
    workers: o.workers,
    layout: "interleaved" as const,
  }));
  const dir = await mkdtemp(join(tmpdir(), "oooi-bench-serve-"));
  const parts = shapes.map(infraState);
  for (const [i, s] of parts.entries()) await writeInfra(dir, s, i);
  const port = await freePort();
  const httpPort = await freePort();
  const fleet = Fleet.start(2);
  const firstProfiler = o.firstRenderProfile === undefined ? undefined : await startProfile();
  const served = serve(
    {
      manifests: dir,
      debounceMs: o.debounceMs ?? 100,
      xdsListen: `127.0.0.1:${String(port)}`,
      httpListen: { host: "127.0.0.1", port: httpPort },
      // One connection per stream, like separate Envoys: above the default cap at 3,000 Infras.
      xdsMaxConnections: o.infras + 100,
    },
    pino({ level: "silent" }),
  );
  let load: { stop(): Promise<number> } | undefined;
  const serving = nowMs();
  try {
    await served.ready;
    // Streams open once the first rendering is done (/readyz): the first load of a large folder
    // holds the event loop longer than a client waits for the HTTP/2 handshake.
    await poll(
      async () => (await fetch(`http://127.0.0.1:${String(httpPort)}/readyz`).catch(() => undefined))?.ok === true,
      Number(process.env["XDS_BENCH_SERVE_FIRST_RENDER_MS"] ?? "1800000"),
      "serve's first rendering",
    );
    const firstRenderMs = nowMs() - serving;
    // The live heap once loaded (serve runs in this process; --expose-gc from run.ts).
    (globalThis as { gc?: () => void }).gc?.();
    const heapMib = process.memoryUsage().heapUsed / 2 ** 20;
    if (o.heapSnapshot !== undefined) {
      const file = writeHeapSnapshot(`${o.heapSnapshot}-${String(o.infras)}.heapsnapshot`);
      progress(`serve-path ${String(o.infras)}: heap snapshot written to ${file}`);
    }
    if (firstProfiler !== undefined && o.firstRenderProfile !== undefined)
      await stopProfile(firstProfiler, o.firstRenderProfile);
    progress(
      `serve-path ${String(o.infras)}: ready (first rendering done) after ${String(Math.round(firstRenderMs))} ms`,
    );
    const specs: StreamSpec[] = shapes.map((s) => ({
      id: firstId + s.index,
      address: `127.0.0.1:${String(port)}`,
      kind: "sotw" as const,
      node: `${groupOf(s.index)}/envoy-0`,
      group: groupOf(s.index),
    }));
    const started = nowMs();
    fleet.open(specs);
    await fleet.until(
      () => specs.every((s) => fleet.latest(s.id, TYPE_CODES.listener) !== undefined),
      300_000,
      "every stream's first listener",
    );
    progress(
      `serve-path ${String(o.infras)}: ${String(specs.length)} streams have listeners after ${String(Math.round(nowMs() - started))} ms`,
    );

    // Changes go to the lower half of the Infras, the load to the upper half: never the same file.
    const measured = o.infras > 1 && (o.loadPerSecond ?? 0) > 0 ? Math.ceil(o.infras / 2) : o.infras;
    if (measured < o.infras) load = startLoad(dir, shapes.slice(measured), o.loadPerSecond ?? 0);

    const pick = seeded(4);
    const byShape = new Map<ChangeShape, number[]>();
    const warmups: number[] = [];
    const warmup = 3;
    let profiler: Session | undefined;
    let allocations: { stop(): Promise<void> } | undefined;
    let k = 0;
    /** Extra files of the new-file shape, for the deleted-file shape to remove. */
    const extras: { i: number; file: string }[] = [];
    let extraCount = 0;
    const change = async (i: number, write: () => Promise<unknown>): Promise<number> => {
      const id = firstId + i;
      const before = fleet.latest(id, TYPE_CODES.listener)?.version;
      const t0 = nowMs();
      await write();
      await fleet.until(
        () => fleet.latest(id, TYPE_CODES.listener)?.version !== before,
        60_000,
        `the new listener of Infra ${String(i)}`,
      );
      const at = fleet.latest(id, TYPE_CODES.listener)?.at ?? Number.NaN;
      await new Promise((r) => setTimeout(r, o.gapMs));
      return at - t0;
    };
    const addExtra = async (): Promise<number> => {
      const i = pick(measured);
      const c = pick(o.clusters);
      const hc = clusterName(i, c);
      const cp = `${NS}-${hc}`;
      const x = (extraCount += 1);
      const file = join(dir, `infra-${String(i)}`, `${cp}-extra-${String(x)}.yaml`);
      const text = yamlDocs([
        machine(cp, `${hc}-extra-${String(x)}`, `${hc}-workers`, [spareAddress(shapes[i] as InfraShape, 800 + x)]),
      ]);
      extras.push({ i, file });
      return change(i, () => writeFile(file, text));
    };
    for (const shape of o.shapes ?? SHAPES) {
      const latencies: number[] = [];
      byShape.set(shape, latencies);
      // The deleted-file shape removes files the new-file shape made; made here (uncounted) without it.
      if (shape === "deleted-file") while (extras.length < o.changes + (k === 0 ? warmup : 0)) await addExtra();
      for (let n = 0; n < o.changes + (k === 0 ? warmup : 0); n += 1, k += 1) {
        if (k === warmup && o.cpuProfile !== undefined) profiler = await startProfile();
        if (k === warmup && o.allocProfile !== undefined) allocations = await sampleAllocations(o.allocProfile);
        let ms: number;
        if (shape === "new-file") ms = await addExtra();
        else if (shape === "deleted-file") {
          const extra = extras.shift();
          if (extra === undefined) throw new Error("no extra file left to delete");
          ms = await change(extra.i, () => unlink(extra.file));
        } else {
          const i = pick(measured);
          const c = pick(o.clusters);
          const w = pick(o.workers);
          const hc = clusterName(i, c);
          const cp = `${NS}-${hc}`;
          const text = yamlDocs(
            Array.from({ length: o.workers }, (_, x) =>
              machine(cp, workerName(i, c, x), `${hc}-workers`, [
                x === w ? spareAddress(shapes[i] as InfraShape, k + 1) : workerAddress(shapes[i] as InfraShape, c, x),
              ]),
            ),
          );
          const file = join(dir, `infra-${String(i)}`, `${cp}-machines.yaml`);
          ms = await change(i, async () => {
            if (shape === "in-place") return writeFile(file, text);
            await writeFile(`${file}.oooi-tmp`, text);
            return rename(`${file}.oooi-tmp`, file);
          });
        }
        (k >= warmup ? latencies : warmups).push(ms);
      }
    }
    if (profiler !== undefined && o.cpuProfile !== undefined) await stopProfile(profiler, o.cpuProfile);
    await allocations?.stop();
    const loadWrites = (await load?.stop()) ?? 0;
    load = undefined;
    return { byShape, warmup: warmups, loadWrites, firstRenderMs, heapMib };
  } finally {
    await load?.stop();
    await fleet.stop();
    await served.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Edits the Machines files of `infras` in place, `perSecond` writes a second, round robin, each
 * write moving one worker there and back (two prepared texts per file: the load costs the bench
 * process a write, not a YAML rendering). Each hosted cluster's worker moves to an address of its own:
 * a shared one would be a DuplicateSourceIP conflict, appearing and going with every write. Returns how many writes it made when stopped.
 */
function startLoad(dir: string, infras: readonly InfraShape[], perSecond: number): { stop(): Promise<number> } {
  const files = infras.flatMap((shape) =>
    Array.from({ length: shape.clusters }, (_, c) => {
      const hc = clusterName(shape.index, c);
      const cp = `${NS}-${hc}`;
      const texts = [0, 1].map((moved) =>
        yamlDocs(
          Array.from({ length: shape.workers }, (_, x) =>
            machine(cp, workerName(shape.index, c, x), `${hc}-workers`, [
              x === 0 && moved === 1 ? spareAddress(shape, 1500 + c) : workerAddress(shape, c, x),
            ]),
          ),
        ),
      );
      return { file: join(dir, `infra-${String(shape.index)}`, `${cp}-machines.yaml`), texts, next: 1 };
    }),
  );
  let writes = 0;
  let inFlight: Promise<unknown> = Promise.resolve();
  const timer = setInterval(
    () => {
      const f = files[writes % files.length];
      if (f === undefined) return;
      const text = f.texts[f.next] ?? "";
      f.next = 1 - f.next;
      writes += 1;
      inFlight = Promise.all([inFlight, writeFile(f.file, text)]);
    },
    Math.max(1, Math.round(1000 / perSecond)),
  );
  return {
    async stop() {
      clearInterval(timer);
      await inFlight;
      return writes;
    },
  };
}

/** Runs scenario 4 at `infras` and, as its baseline in the same run, at 1 Infra without load: one JSON line per shape. */
export async function servePath(o: ServePathOptions): Promise<Record<string, unknown>[]> {
  const single = await run({
    ...o,
    infras: 1,
    loadPerSecond: 0,
    cpuProfile: undefined,
    firstRenderProfile: undefined,
    allocProfile: undefined,
  });
  const large = await run(o);
  return [...large.byShape].map(([shape, latencies]) => {
    const one = summary(single.byShape.get(shape) ?? []);
    const many = summary(latencies);
    return {
      name: "xds.serve_path_manifest_to_lds",
      shape,
      infras: o.infras,
      clusters_per_infra: o.clusters,
      workers_per_cluster: o.workers,
      changes: latencies.length,
      load_writes_per_s: o.loadPerSecond ?? 0,
      debounce_ms: o.debounceMs ?? 100,
      load_writes: large.loadWrites,
      first_render_ms: round(large.firstRenderMs),
      baseline_1_infra_first_render_ms: round(single.firstRenderMs),
      heap_after_first_render_mib: round(large.heapMib),
      p50_ms: many.p50,
      p99_ms: many.p99,
      max_ms: many.max,
      baseline_1_infra_p50_ms: one.p50,
      baseline_1_infra_p99_ms: one.p99,
      ratio_p99: round(many.p99 / one.p99),
      ratio_p50: round(many.p50 / one.p50),
      uncounted_first_changes_ms: large.warmup.map(round),
      baseline_uncounted_first_changes_ms: single.warmup.map(round),
      loadavg_1m: round(loadavg()[0] ?? Number.NaN),
    };
  });
}
