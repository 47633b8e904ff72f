// Scenario 4, the whole `oooi serve` path (issue 16, target 1): a manifest folder with N Infras
// × 5 hosted clusters × 100 workers, one YAML file per hosted cluster's Machines. One worker
// moves: its file is saved atomically (written beside, renamed over, as editors and kubectl-like
// tools do) and the clock runs until an xDS client of that Infra's node group holds the new
// Listener. The real serve(): chokidar, the manifest reader, the incremental model and
// renderers, the cache and the ADS server; the client is bench/xds/clients.ts in a child process.
// The baseline is the same change with 1 Infra, measured in the same run.
import { mkdtemp, mkdir, rename, rm, writeFile } from "node:fs/promises";
import type { Session } from "node:inspector/promises";
import { createServer } from "node:net";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { stringify } from "yaml";
import { serve } from "../../src/cli/serve.js";
import type { ClusterState } from "../../src/model/types.js";
import { machine, NS } from "../../test/support/fixtures.js";
import { Fleet } from "./fleet.js";
import { startProfile, stopProfile } from "./profile.js";
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

/** Sizes of scenario 4. */
export interface ServePathOptions {
  readonly infras: number;
  readonly clusters: number;
  readonly workers: number;
  readonly changes: number;
  /** Pause between changes, beyond serve's coalescing window, so each change is isolated. */
  readonly gapMs: number;
  /** Write a CPU profile of the changes (not the loading) of the large run to this file (.cpuprofile). */
  readonly cpuProfile?: string | undefined;
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
 * One size: the latencies (ms) of `changes` isolated Machine moves, manifest save → LDS at the
 * client, and those of the uncounted first ones (the first after start is reported apart: it used
 * to rebuild every Infra, the first rendering's claims having had no incumbents).
 */
async function run(o: ServePathOptions): Promise<{ latencies: number[]; warmup: number[] }> {
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
  const served = serve(
    {
      manifests: dir,
      debounceMs: 100,
      xdsListen: `127.0.0.1:${String(port)}`,
      httpListen: { host: "127.0.0.1", port: httpPort },
    },
    pino({ level: "silent" }),
  );
  try {
    await served.ready;
    // Streams open once the first rendering is done (/readyz): the first load of a large folder
    // holds the event loop longer than a client waits for the HTTP/2 handshake.
    await poll(
      async () => (await fetch(`http://127.0.0.1:${String(httpPort)}/readyz`).catch(() => undefined))?.ok === true,
      600_000,
      "serve's first rendering",
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

    const pick = seeded(4);
    const latencies: number[] = [];
    const warmups: number[] = [];
    const warmup = 3;
    let profiler: Session | undefined;
    for (let k = 0; k < o.changes + warmup; k += 1) {
      if (k === warmup && o.cpuProfile !== undefined) profiler = await startProfile();
      const i = pick(o.infras);
      const c = pick(o.clusters);
      const w = pick(o.workers);
      const shape = shapes[i] as InfraShape;
      const hc = clusterName(i, c);
      const cp = `${NS}-${hc}`;
      const machines = Array.from({ length: o.workers }, (_, x) =>
        machine(cp, workerName(i, c, x), `${hc}-workers`, [
          x === w ? spareAddress(shape, k + 1) : workerAddress(shape, c, x),
        ]),
      );
      const file = join(dir, `infra-${String(i)}`, `${cp}-machines.yaml`);
      const text = yamlDocs(machines);
      const id = firstId + i;
      const before = fleet.latest(id, TYPE_CODES.listener)?.version;
      const t0 = nowMs();
      await writeFile(`${file}.oooi-tmp`, text);
      await rename(`${file}.oooi-tmp`, file);
      await fleet.until(
        () => fleet.latest(id, TYPE_CODES.listener)?.version !== before,
        60_000,
        `the new listener of Infra ${String(i)}`,
      );
      const at = fleet.latest(id, TYPE_CODES.listener)?.at ?? Number.NaN;
      (k >= warmup ? latencies : warmups).push(at - t0);
      await new Promise((r) => setTimeout(r, o.gapMs));
    }
    if (profiler !== undefined && o.cpuProfile !== undefined) await stopProfile(profiler, o.cpuProfile);
    return { latencies, warmup: warmups };
  } finally {
    await fleet.stop();
    await served.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Runs scenario 4 at `infras` and, as its baseline in the same run, at 1 Infra. */
export async function servePath(o: ServePathOptions): Promise<Record<string, unknown>> {
  const single = await run({ ...o, infras: 1, cpuProfile: undefined });
  const large = await run(o);
  const one = summary(single.latencies);
  const many = summary(large.latencies);
  return {
    name: "xds.serve_path_manifest_to_lds",
    infras: o.infras,
    clusters_per_infra: o.clusters,
    workers_per_cluster: o.workers,
    changes: o.changes,
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
}
