// The measured process: `oooi operator`'s composition (runOperator → onState → publishSnapshots
// into a SnapshotCache served by a real startXdsServer) against the fake API server in its own
// process, with one Envoy-like client per proxy node group in a third. It drives the scenario:
// converge, then Machine address changes (isolated, then a paced stream), and prints JSON lines.
import { fork } from "node:child_process";
import { loadavg } from "node:os";
import { monitorEventLoopDelay, type IntervalHistogram } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { writeHeapSnapshot } from "node:v8";
import type { Machine } from "../../src/api/external.js";
import type { ListView } from "../../src/util/chunked-list.js";
import { Metrics } from "../../src/metrics/index.js";
import { desiredHash } from "../../src/operator/writing/applied.js";
import { COMPONENT_LABEL, desiredState, operatorSettings } from "../../src/operator/desired/index.js";
import {
  OPERATOR_METRICS,
  type Labels,
  type MetricName,
  type OperatorMetrics,
} from "../../src/operator/process/metrics.js";
import { runOperator } from "../../src/operator/process/run.js";
import type { DataPlaneView } from "../../src/operator/status/dataplane.js";
import { statusUpdates } from "../../src/operator/status/object-status.js";
import { localNodes, XdsDataPlane } from "../../src/operator/status/xds-dataplane.js";
import { renderAll } from "../../src/pipeline/outputs.js";
import { publishSnapshots } from "../../src/pipeline/snapshots.js";
import type { Observed } from "../../src/watchers/kube/observed.js";
import { KEA_CONFIG_TYPE_SPEC, KEA_CONFIG_TYPE_URL } from "../../src/dhcp/kea-config-resource.js";
import { SnapshotCache } from "../../src/xds/cache/index.js";
import { startXdsServer } from "../../src/xds/server/index.js";
import { LISTENER_TYPE_URL } from "../../src/xds/resource/protos.js";
import { kubeConfigFor } from "../../test/support/fake-apiserver/index.js";
import type { CacheReply, CacheRequest } from "./cache-process.js";
import { BenchDataPlane } from "./dataplane.js";
import { memory, perObject } from "./memory.js";
import type { EnvoysReply, EnvoysRequest } from "./envoys-process.js";
import type { CheckResult, ExpectedObject, FakeReply, FakeRequest, FakeStats, WriteRecord } from "./fake-process.js";
import { Peer } from "./peer.js";
import { controlPlane, freshAddress, machineName, OPERATOR_NS, proxyGroup, type Scale } from "./scale.js";
import { emit, mib, monoMs, progress, round, seeded, summary } from "./stats.js";
import { recordGc, sampleAllocations } from "./gc.js";
import { startProfile, stopProfile } from "../xds/profile.js";
import { checkEnvoySnapshot } from "../../src/envoy/snapshot.js";
import type { Logger } from "../../src/util/logger.js";

/** The host's load averages (1, 5, 15 min), as uptime prints them: the machine is shared. */
const load = (): number[] => loadavg().map(round);

/** What the driver runs. */
export interface Plan {
  readonly scale: Scale;
  /** Changes made one at a time, each after the previous one reached the Envoy-like client. */
  readonly isolated: number;
  /** Changes made at a fixed rate regardless of the operator (open loop). */
  readonly stream: number;
  readonly streamPerSecond: number;
  /** No write for this long (with the state checked) = converged. */
  readonly quietMs: number;
  /** Give up converging after this long. */
  readonly convergeTimeoutMs: number;
  /** runOperator's debounceMs (undefined: its default). */
  readonly debounceMs?: number;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Logger keeping counts, printing the first warnings and errors to stderr. */
function countingLogger(): Logger & { counts: Record<string, number> } {
  const counts: Record<string, number> = { warn: 0, error: 0 };
  const print = (level: string, obj: object, msg: string): void => {
    counts[level] = (counts[level] ?? 0) + 1;
    if ((counts[level] ?? 0) <= 5) progress(`operator ${level}: ${msg} ${JSON.stringify(obj).slice(0, 300)}`);
  };
  return {
    counts,
    debug: () => undefined,
    info: () => undefined,
    warn: (o, m) => {
      print("warn", o, m);
    },
    error: (o, m) => {
      print("error", o, m);
    },
  };
}

/** The operator's metrics, with reconcile durations and snapshot counts kept for the report. */
class RecordingMetrics implements OperatorMetrics {
  readonly reconcileMs: number[] = [];
  snapshots = 0;
  readonly #inner = new Metrics().recorder(OPERATOR_METRICS);
  get contentType(): string {
    return this.#inner.contentType;
  }
  inc(name: MetricName, labels?: Labels, value?: number): void {
    if (name === "oooi_cluster_snapshots_total") this.snapshots += value ?? 1;
    this.#inner.inc(name, labels, value);
  }
  set(name: MetricName, value: number, labels?: Labels): void {
    this.#inner.set(name, value, labels);
  }
  remove(name: MetricName, labels: Labels): void {
    this.#inner.remove(name, labels);
  }
  observe(name: MetricName, value: number, labels?: Labels): void {
    if (name === "oooi_reconcile_duration_seconds") this.reconcileMs.push(value * 1000);
    this.#inner.observe(name, value, labels);
  }
  render(): string | Promise<string> {
    return this.#inner.render();
  }
}

/** One Machine address change and when each stage saw it (host monotonic ms). */
interface Change {
  readonly id: number;
  readonly i: number;
  readonly key: string;
  readonly address: string;
  event?: number;
  /** onState called with a state holding the new address (watch + throttle + buildObserved + renderAll done). */
  state?: number;
  /** publishSnapshots returned: the cache holds the new snapshot and the ADS server was told. */
  cached?: number;
  /** The Envoy-like client processed (and ACKed) the LDS response carrying it. */
  lds?: number;
}

/** The Machine "<namespace>/<name>" of ClusterState.machines (sorted by that key), by binary search. */
function machineAt(machines: ListView<Machine>, key: string): Machine | undefined {
  let [lo, hi] = [0, machines.length - 1];
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const m = machines.at(mid);
    const k = `${m?.metadata.namespace ?? ""}/${m?.metadata.name ?? ""}`;
    if (k === key) return m;
    if (k < key) lo = mid + 1;
    else hi = mid - 1;
  }
  return undefined;
}

/** Objects the operator's watch cache holds (every watched resource, its own children included). */
function watchedObjects(obs: Observed | undefined): number {
  return obs === undefined ? 0 : Object.values(obs.raw).reduce((n, m) => n + m.size, 0);
}

function cpuMs(): number {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
}

function diffCounts(after: Record<string, number>, before: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(after)) {
    const d = v - (before[k] ?? 0);
    if (d !== 0) out[k] = d;
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** What the operator should have applied for `obs`, with the hashes it stamps. */
function expectedObjects(obs: Observed, settings: ReturnType<typeof operatorSettings>): ExpectedObject[] {
  // As the reconciler's dnsPrevious: SOA serials continue from the observed ConfigMaps.
  const previous = new Map<string, string>();
  for (const cm of obs.raw.configmaps.values()) {
    if (cm.metadata?.labels?.[COMPONENT_LABEL] !== "dns") continue;
    for (const [k, v] of Object.entries((cm["data"] ?? {}) as Record<string, string>)) {
      previous.set(`${cm.metadata.namespace ?? ""}/${cm.metadata.name ?? ""}/${k}`, v);
    }
  }
  const outputs = renderAll(obs.state, { kea: { hooksDirectory: settings.keaHooksDirectory }, previous });
  const desired = desiredState({ state: obs.state, outputs, settings, networkAttachments: obs.networkAttachments });
  return [...desired.infras.flatMap((d) => d.objects), ...desired.crossNamespace].map((o) => ({
    apiVersion: o.apiVersion,
    kind: o.kind,
    namespace: o.metadata.namespace,
    name: o.metadata.name,
    hash: desiredHash(o),
  }));
}

/** Infras whose computed status (what a reconcile pass would want now) says Ready=True. */
function infrasWantedReady(
  obs: Observed,
  settings: ReturnType<typeof operatorSettings>,
  dataPlane: DataPlaneView,
  names: readonly string[],
): Record<string, string> {
  const previous = new Map<string, string>();
  const outputs = renderAll(obs.state, { kea: { hooksDirectory: settings.keaHooksDirectory }, previous });
  const desired = desiredState({ state: obs.state, outputs, settings, networkAttachments: obs.networkAttachments });
  const out: Record<string, string> = {};
  for (const u of statusUpdates({ observed: obs, outputs, desired, dataPlane, now: Date.now() })) {
    if (u.kind !== "Infra" || !names.includes(u.name)) continue;
    const ready = (u.status["conditions"] as { status?: string }[] | undefined)?.[0];
    out[u.name] = `wanted Ready=${ready?.status ?? "?"}, stored ${u.upToDate ? "the same" : "differs"}`;
  }
  return out;
}

function checkPassed(c: CheckResult): boolean {
  return (
    c.missing.length === 0 &&
    c.stale.length === 0 &&
    Object.values(c.ready).every((r) => r.ready === r.total && r.total > 0)
  );
}

/** The fake's answer times of these writes: all, and server-side applies and /status writes apart. */
function writeMs(writes: readonly WriteRecord[]): Record<string, ReturnType<typeof summary>> {
  const ms = (pick: (w: WriteRecord) => boolean): number[] =>
    writes.flatMap((w) => (w.ms !== null && pick(w) ? [w.ms] : []));
  return {
    all: summary(ms(() => true)),
    apply: summary(ms((w) => w.contentType.startsWith("application/apply-patch"))),
    status: summary(ms((w) => w.resource.endsWith("/status"))),
  };
}

/** Writes grouped by `"<verb> <resource>"`, and the distinct objects written per group. */
function writeSummary(writes: readonly WriteRecord[]): Record<string, { writes: number; objects: number }> {
  const out: Record<string, { writes: number; objects: Set<string> }> = {};
  for (const w of writes) {
    const k = `${w.verb} ${w.resource}`;
    const e = out[k] ?? { writes: 0, objects: new Set<string>() };
    e.writes++;
    e.objects.add(`${w.namespace}/${w.name}`);
    out[k] = e;
  }
  return Object.fromEntries(
    Object.entries(out)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, v]) => [k, { writes: v.writes, objects: v.objects.size }]),
  );
}

/** Runs the scenario; resolves when every child has stopped. */
export async function driverMain(plan: Plan): Promise<void> {
  const { scale } = plan;
  const self = fileURLToPath(new URL("./run.js", import.meta.url));
  const spawn = (role: string, execArgv: string[] = []): ReturnType<typeof fork> =>
    fork(self, [], {
      execArgv,
      env: { ...process.env, OPERATOR_BENCH_ROLE: role },
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
  const fakeProfile = process.env["OPERATOR_BENCH_FAKE_CPU_PROF"];
  const fake = new Peer<FakeRequest, FakeReply>(
    spawn(
      "fake",
      fakeProfile === undefined || fakeProfile === "" ? [] : ["--cpu-prof", `--cpu-prof-dir=${fakeProfile}`],
    ),
  );
  const envoys = new Peer<EnvoysRequest, EnvoysReply>(spawn("envoys"));
  const fakeReady = await fake.next("ready");
  progress(
    `fake API server seeded with ${String(fakeReady.objects)} objects in ${String(Math.round(fakeReady.seedMs))} ms`,
  );
  // The memory baseline, same run: a bare informer cache of the same lists, alone in its process.
  const bare = new Peer<CacheRequest, CacheReply>(spawn("cache", ["--expose-gc"]));
  const bareCache = await bare.ask({ op: "fill", url: fakeReady.url }, "filled");
  bare.kill();
  progress(`bare informer cache: ${String(bareCache.objects)} objects, RSS ${String(bareCache.held.rss_mib)} MiB`);

  const before = memory();
  const settings = operatorSettings({ namespace: OPERATOR_NS });
  const cache = new SnapshotCache({ check: checkEnvoySnapshot });
  cache.registerType(KEA_CONFIG_TYPE_URL, KEA_CONFIG_TYPE_SPEC);
  const xds = await startXdsServer({ cache, listen: "127.0.0.1:0" });
  const groups = Array.from({ length: scale.infras }, (_, i) => proxyGroup(i));
  await envoys.ask({ op: "connect", address: `127.0.0.1:${String(xds.port)}`, groups }, "connected");

  const log = countingLogger();
  const metrics = new RecordingMetrics();
  const pending = new Map<string, Change>();
  let firstPublishAt: number | undefined;
  const publishMs: number[] = [];
  let published: Parameters<typeof publishSnapshots>[3];
  const dataPlane = new BenchDataPlane(new XdsDataPlane(localNodes(xds.status), cache), cache, new Set(groups));
  const started = monoMs();
  const cpuStart = cpuMs();
  const fakeCpuStart = (await fake.ask({ op: "stats" }, "stats")).stats.cpuMs;
  const op = runOperator({
    kubeConfig: kubeConfigFor(fakeReady.url),
    settings,
    dataPlane,
    // No CoreDNS runs here: dnsReady once the ConfigMap carries the current content.
    dnsProbe: false,
    ...(plan.debounceMs === undefined ? {} : { debounceMs: plan.debounceMs }),
    onState: (state, outputs) => {
      const at = monoMs();
      // As `oooi operator` does (src/cli/operator-run.ts): only the groups whose rendering changed since the last publish.
      publishSnapshots(cache, outputs, log, published);
      published = outputs;
      const done = monoMs();
      publishMs.push(done - at);
      firstPublishAt ??= done;
      // The pending Machines only (a scan of every Machine would be the bench's own work on the operator's event loop).
      for (const c of pending.values()) {
        if (machineAt(state.machines, c.key)?.status?.addresses?.[0]?.address !== c.address) continue;
        c.state = at;
        c.cached = done;
        pending.delete(c.key);
      }
    },
    logger: log,
    metrics,
    closeStreams: () => xds.close(),
  });
  await op.ready;
  const readyAt = monoMs();
  progress(`informers synced after ${String(Math.round(readyAt - started))} ms`);

  // ------------------------------------------------------------ phase 1: converge
  const convergeStats = async (): Promise<{
    stats: FakeStats;
    check?: CheckResult;
    rss?: ReturnType<typeof memory>;
  }> => {
    for (;;) {
      await sleep(500);
      const { stats } = await fake.ask({ op: "stats" }, "stats");
      const now = monoMs();
      if (now - started > plan.convergeTimeoutMs) return { stats };
      if (stats.writes === 0 || now - stats.lastWriteAt < plan.quietMs) continue;
      const rss = memory();
      const obs = op.observed();
      if (obs === undefined) continue;
      const { result } = await fake.ask({ op: "check", expected: expectedObjects(obs, settings) }, "check");
      // Writes may have resumed while checking: then it was not quiet after all.
      const again = (await fake.ask({ op: "stats" }, "stats")).stats;
      if (again.writes !== stats.writes) continue;
      if (checkPassed(result)) return { stats, check: result, rss };
      progress(`quiet but not converged: ${JSON.stringify(result).slice(0, 400)}`);
    }
  };
  const phase1 = await convergeStats();
  const cpu1 = cpuMs() - cpuStart;
  const { changes: changes1 } = await fake.ask({ op: "changes", since: started }, "changes");
  const { writes: writes1 } = await fake.ask({ op: "writes", since: started }, "writes");
  progress(
    phase1.check === undefined
      ? "did not converge"
      : `converged after ${String(Math.round(phase1.stats.lastWriteAt - started))} ms`,
  );
  const envoyStats1 = await envoys.ask({ op: "stats" }, "stats");
  const reconcile1 = metrics.reconcileMs.splice(0);
  const publish1 = publishMs.splice(0);
  const converged = phase1.check !== undefined;
  const convergedMemory = phase1.rss ?? memory();
  const watched = watchedObjects(op.observed());
  const snapshotFile = process.env["OPERATOR_BENCH_HEAP_SNAPSHOT"];
  if (snapshotFile !== undefined && snapshotFile !== "") progress(`heap snapshot: ${writeHeapSnapshot(snapshotFile)}`);
  emit({
    name: "operator.converge",
    scale: { ...scale, machines_total: scale.infras * scale.attachments * scale.machines },
    fake_in: "child process (own RSS and CPU)",
    converged,
    informers_synced_ms: round(readyAt - started),
    first_snapshot_published_ms: firstPublishAt === undefined ? null : round(firstPublishAt - started),
    converged_ms: converged ? round(phase1.stats.lastWriteAt - started) : null,
    quiet_ms: plan.quietMs,
    api_requests: phase1.stats.requests,
    api_requests_by_verb: phase1.stats.byVerb,
    writes: phase1.stats.writes,
    lease_writes: phase1.stats.leaseWrites,
    writes_by_resource: Object.fromEntries(
      Object.entries(phase1.stats.byResource).filter(([k]) =>
        /^(create|update|patch|delete|deletecollection) /.test(k),
      ),
    ),
    deployment_status_updates_by_controller_stand_in: phase1.stats.deploymentStatusUpdates,
    check: phase1.check ?? null,
    snapshots: metrics.snapshots,
    publish_ms: summary(publish1),
    reconcile_passes: reconcile1.length,
    reconcile_ms: summary(reconcile1),
    what_the_writes_changed: changes1,
    // Each write's time in the fake, arrival to answer: what the operator waits on per write.
    fake_write_ms: writeMs(writes1),
    cpu_ms_until_quiet: {
      operator: Math.round(cpu1),
      fake: Math.round(phase1.stats.cpuMs - fakeCpuStart),
      envoys: envoyStats1.cpuMs,
    },
    operator_memory_before: before,
    operator_memory_converged: convergedMemory,
    watched_objects: watched,
    // Target (issue 16): ≤ 10 KB RSS per watched object. Baseline: the bare cache of the same lists.
    operator_per_object_kb: perObject(convergedMemory, before, watched),
    bare_cache: {
      objects: bareCache.objects,
      json_mib: mib(bareCache.jsonBytes),
      memory_before: bareCache.before,
      memory_held: bareCache.held,
      per_object_kb: perObject(bareCache.held, bareCache.before, bareCache.objects),
    },
    load_average: load(),
    fake_rss_mib: mib(phase1.stats.rssBytes),
    envoy_clients: { streams: groups.length, ...omitType(envoyStats1) },
    logged: log.counts,
  });

  // ------------------------------------------------------------ phase 2: Machine address changes
  const pick = seeded(42);
  const fresh = new Map<number, number>();
  const changed = new Set<string>();
  let nextId = 0;
  const changeOne = async (): Promise<Change> => {
    // Every change goes to a Machine not changed before, so no change is hidden by a later one.
    let i: number, a: number, m: number;
    do {
      i = pick(scale.infras);
      a = pick(scale.attachments);
      m = pick(scale.machines);
    } while (changed.has(`${String(i)}/${String(a)}/${String(m)}`));
    changed.add(`${String(i)}/${String(a)}/${String(m)}`);
    const n = fresh.get(i) ?? 0;
    fresh.set(i, n + 1);
    const c: Change = {
      id: nextId++,
      i,
      key: `${controlPlane(i, a)}/${machineName(i, a, m)}`,
      address: freshAddress(i, n),
    };
    pending.set(c.key, c);
    const made = fake.reply("changed", c.id, 30_000);
    const seen = envoys.reply("seen", c.id, 60_000);
    envoys.send({ op: "seen", id: c.id, group: proxyGroup(i), address: c.address });
    fake.send({ op: "change", id: c.id, i, a, m, address: c.address });
    const ev = await made;
    if (ev !== undefined) c.event = ev.at;
    const s = await seen;
    if (s?.at !== undefined) c.lds = s.at;
    return c;
  };
  const report = (
    name: string,
    changes: readonly Change[],
    extra: Record<string, unknown>,
  ): Record<string, unknown> => {
    const lat = (f: (c: Change) => number | undefined): number[] =>
      changes.flatMap((c) => {
        const v = f(c);
        return v === undefined || c.event === undefined ? [] : [v - c.event];
      });
    return {
      name,
      changes: changes.length,
      reached_client: changes.filter((c) => c.lds !== undefined).length,
      event_to_snapshot_ms: summary(lat((c) => c.state)),
      event_to_cache_ms: summary(lat((c) => c.cached)),
      event_to_lds_at_client_ms: summary(lat((c) => c.lds)),
      ...extra,
    };
  };

  // How long the operator's event loop was blocked (a watch event waits at most this long to be read).
  const loopDelay = monitorEventLoopDelay({ resolution: 5 });
  const loopStats = (h: IntervalHistogram): Record<string, number> => {
    const ms = (ns: number): number => round(ns / 1e6);
    const out = { p50: ms(h.percentile(50)), p99: ms(h.percentile(99)), max: ms(h.max) };
    h.reset();
    return out;
  };
  loopDelay.enable();
  const mark = monoMs();
  const cpuMark = cpuMs();
  const statsBefore2 = (await fake.ask({ op: "stats" }, "stats")).stats;
  const snapshotsBefore2 = metrics.snapshots;
  const isolated: Change[] = [];
  const gcIsolated = recordGc();
  const isolatedCpuFile = process.env["OPERATOR_BENCH_ISOLATED_CPU_PROF"];
  const isolatedCpu = isolatedCpuFile === undefined || isolatedCpuFile === "" ? undefined : await startProfile();
  for (let k = 0; k < plan.isolated; k++) {
    isolated.push(await changeOne());
    await sleep(300);
  }
  if (isolatedCpu !== undefined && isolatedCpuFile !== undefined) await stopProfile(isolatedCpu, isolatedCpuFile);
  // The operator's CPU per isolated change (issue 30 target 4): the 300 ms pauses included, so
  // whatever runs without a trigger in them counts too.
  const cpuIsolated = cpuMs() - cpuMark;
  const reconcileIsolated = metrics.reconcileMs.splice(0);
  const publishIsolated = publishMs.splice(0);
  emit(
    report("operator.change_to_push.isolated", isolated, {
      operator_cpu_ms_per_change: round(cpuIsolated / Math.max(1, isolated.length)),
      pacing: "one at a time: the next change is made 300 ms after the previous one reached the Envoy-like client",
      snapshots: metrics.snapshots - snapshotsBefore2,
      publish_ms: summary(publishIsolated),
      reconcile_passes: reconcileIsolated.length,
      reconcile_ms: summary(reconcileIsolated),
      event_loop_delay_ms: loopStats(loopDelay),
      gc: gcIsolated.stop(),
      load_average: load(),
    }),
  );

  const snapshotsBeforeStream = metrics.snapshots;
  const interval = 1000 / plan.streamPerSecond;
  const streamStart = monoMs();
  const cpuStreamMark = cpuMs();
  const inFlight: Promise<Change>[] = [];
  const gcStream = recordGc();
  const allocFile = process.env["OPERATOR_BENCH_ALLOC_PROF"];
  const allocations = allocFile === undefined || allocFile === "" ? undefined : await sampleAllocations(allocFile);
  const cpuFile = process.env["OPERATOR_BENCH_STREAM_CPU_PROF"];
  const cpu = cpuFile === undefined || cpuFile === "" ? undefined : await startProfile();
  for (let k = 0; k < plan.stream; k++) {
    const due = streamStart + k * interval;
    const wait = due - monoMs();
    if (wait > 0) await sleep(wait);
    inFlight.push(changeOne());
    if (k % 100 === 99) progress(`stream: ${String(k + 1)} changes made`);
  }
  const streamSentMs = monoMs() - streamStart;
  const stream = await Promise.all(inFlight);
  const cpuStream = cpuMs() - cpuStreamMark;
  const streamGc = gcStream.stop();
  await allocations?.stop();
  if (cpu !== undefined && cpuFile !== undefined) await stopProfile(cpu, cpuFile);
  if (allocFile !== undefined && allocFile !== "") progress(`allocation profile of the stream: ${allocFile}`);
  const streamLoopDelay = loopStats(loopDelay);
  loopDelay.disable();
  if (process.env["OPERATOR_BENCH_DEBUG"] === "1") {
    for (const c of stream.filter((x) => x.lds === undefined).slice(0, 5)) {
      const group = proxyGroup(c.i);
      const seenBy = await envoys.ask({ op: "inspect", group, address: c.address }, "inspect");
      progress(
        `not seen: ${c.key} ${c.address}; cache LDS ${cache.getSnapshot(group)?.types.get(LISTENER_TYPE_URL)?.version.slice(0, 8) ?? "-"}, client ${JSON.stringify(omitType(seenBy))}`,
      );
    }
  }
  const reconcileStream = metrics.reconcileMs.splice(0);
  const publishStream = publishMs.splice(0);
  // Let the writes the changes caused finish before counting them.
  const settleBy = monoMs() + 60_000;
  for (;;) {
    await sleep(500);
    const { stats } = await fake.ask({ op: "stats" }, "stats");
    if (monoMs() - stats.lastWriteAt >= plan.quietMs || monoMs() > settleBy) break;
  }
  const statsAfter2 = (await fake.ask({ op: "stats" }, "stats")).stats;
  const { writes } = await fake.ask({ op: "writes", since: mark }, "writes");
  const { changes: changes2 } = await fake.ask({ op: "changes", since: mark }, "changes");
  const cpu2 = cpuMs() - cpuMark;
  const { result: final } = await fake.ask({ op: "check", expected: [] }, "check");
  const after2 = memory();
  // A second snapshot after the changes, to diff with the converged one (bench/xds/heap-diff.ts).
  if (snapshotFile !== undefined && snapshotFile !== "")
    progress(`heap snapshot after the changes: ${writeHeapSnapshot(`${snapshotFile}.after`)}`);
  const envoyStats2 = await envoys.ask({ op: "stats" }, "stats");
  emit(
    report("operator.change_to_push.stream", stream, {
      pacing: `open loop: ${String(plan.streamPerSecond)} changes/s, each to a random Machine of a random Infra, made whatever the operator is doing`,
      stream_seconds: round(streamSentMs / 1000),
      snapshots: metrics.snapshots - snapshotsBeforeStream,
      changes_per_snapshot: round(stream.length / Math.max(1, metrics.snapshots - snapshotsBeforeStream)),
      operator_cpu_ms_per_change: round(cpuStream / Math.max(1, stream.length)),
      publish_ms: summary(publishStream),
      reconcile_passes: reconcileStream.length,
      reconcile_ms: summary(reconcileStream),
      event_loop_delay_ms: streamLoopDelay,
      gc: streamGc,
      load_average: load(),
    }),
  );
  emit({
    name: "operator.change_writes",
    changes: isolated.length + stream.length,
    api_requests_by_verb: diffCounts(statsAfter2.byVerb, statsBefore2.byVerb),
    lease_writes: statsAfter2.leaseWrites - statsBefore2.leaseWrites,
    writes: writes.length,
    writes_per_change: round(writes.length / Math.max(1, isolated.length + stream.length)),
    writes_by_resource: writeSummary(writes),
    what_the_writes_changed: changes2,
    fake_write_ms: writeMs(writes),
    ready_after_changes: Object.fromEntries(
      Object.entries(final.ready).map(([k, v]) => [k, `${String(v.ready)}/${String(v.total)}`]),
    ),
    deployment_status_updates_by_controller_stand_in:
      statsAfter2.deploymentStatusUpdates - statsBefore2.deploymentStatusUpdates,
    cpu_ms: {
      operator: Math.round(cpu2),
      fake: Math.round(statsAfter2.cpuMs - statsBefore2.cpuMs),
      envoys: envoyStats2.cpuMs - envoyStats1.cpuMs,
    },
    operator_memory_after_changes: after2,
    operator_per_object_kb_after_changes: perObject(after2, before, watchedObjects(op.observed())),
    load_average: load(),
    fake_rss_mib: mib(statsAfter2.rssBytes),
    envoy_clients: omitType(envoyStats2),
    logged: log.counts,
  });

  // A resync pass (every 30 s) re-runs the reconcile without a trigger: does it settle what the
  // changes left behind? (Checked after 35 s, so at least one resync ran.)
  // Nothing changes meanwhile: the CPU spent is the idle cost (resync passes, leases, status
  // heartbeats, xDS keep-alives), issue 30 target 4.
  const idleCpuFile = process.env["OPERATOR_BENCH_IDLE_CPU_PROF"];
  const idleCpu = idleCpuFile === undefined || idleCpuFile === "" ? undefined : await startProfile();
  const cpuIdleMark = cpuMs();
  await sleep(35_000);
  const cpuIdle = cpuMs() - cpuIdleMark;
  if (idleCpu !== undefined && idleCpuFile !== undefined) await stopProfile(idleCpu, idleCpuFile);
  const { result: late } = await fake.ask({ op: "check", expected: [] }, "check");
  const statsLate = (await fake.ask({ op: "stats" }, "stats")).stats;
  const { changes: changesLate } = await fake.ask({ op: "changes", since: monoMs() - 35_000 }, "changes");
  emit({
    name: "operator.after_resync",
    waited_ms: 35_000,
    operator_cpu_ms_per_idle_minute: round((cpuIdle * 60_000) / 35_000),
    ready: Object.fromEntries(Object.entries(late.ready).map(([k, v]) => [k, `${String(v.ready)}/${String(v.total)}`])),
    not_ready_infras: late.ready["Infra"]?.notReady ?? [],
    // What the operator's own status computation wants for them now (renderAll + statusUpdates on its latest snapshot).
    their_computed_status: (() => {
      const obs = op.observed();
      return obs === undefined ? {} : infrasWantedReady(obs, settings, dataPlane, late.ready["Infra"]?.notReady ?? []);
    })(),
    writes: statsLate.writes - statsAfter2.writes,
    what_the_writes_changed: changesLate,
  });

  await op.close();
  envoys.send({ op: "stop" });
  fake.send({ op: "stop" });
  await Promise.all([envoys.exited(), fake.exited()]);
}

function omitType<T extends { type: string }>(o: T): Omit<T, "type"> {
  return Object.fromEntries(Object.entries(o).filter(([k]) => k !== "type")) as Omit<T, "type">;
}
