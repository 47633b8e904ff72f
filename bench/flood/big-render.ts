// Issue 25 row 12 / issue 30 target 2: one Infra with 5,000 attachments (each with its hosted
// cluster's namespace, 4 Services, NodePool and one worker Machine: bench/xds/state.ts) added to a
// running built `oooi serve` (served.ts, a child process), then one attachment changed again and
// again. A legitimate DNS client (probe.ts, its own process) asks every 10 ms the whole time; its
// answers are cut into windows by when each query was sent:
//   baseline — the 5 s before the Infra is added (nothing rendering), same serve, same run;
//   first_render — from the rename of the Infra's folder into --manifests until an LDS client of the
//     new node group holds its first Listener, plus 2 s (the log and status work after the push);
//   changes — from the first attachment change until 2 s after the last one's LDS.
// Beside it, a new Envoy of the example's node group (this process) opens a stream, takes its first
// Listener and goes, one after another (`xds_*`: stream opened → first Listener; lost past 5 s).
// Figures: first render (rename → LDS), change → LDS p50/p99 and each change's, DNS and new-Envoy
// p50/p99/max/lost per window.
// RENDER_BENCH_ATTACHMENTS (5000), RENDER_BENCH_CHANGES (20), RENDER_BENCH_GAP_MS (500, between
// changes), RENDER_BENCH_OUT=0 (no --out: nothing written), FLOOD_NODE_ARGS as for bench:flood.
// Run `npm run build` first (`npm run bench:render` does).
import { spawn } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { mkdir, rename, writeFile } from "node:fs/promises";
import { loadavg } from "node:os";
import { join } from "node:path";
import { Client, Metadata, type ClientDuplexStream } from "@grpc/grpc-js";
import { stringify } from "yaml";
import { LISTENER_TYPE_URL } from "../../src/xds/resource/type-urls.js";
import { attachment, NS } from "../../test/support/fixtures.js";
import { ENVOY_CHANNEL_OPTIONS, METHODS } from "../../test/support/envoy/raw.js";
import { encodeSotwRequest, type SotwRequestInit } from "../../test/support/envoy/wire.js";
import { decodeHead } from "../xds/decode.js";
import { clusterName, infraName, infraState, type InfraShape } from "../xds/state.js";
import { emit, round, summary } from "../xds/stats.js";
import { GROUP, makePki, Served } from "./served.js";

const progress = (msg: string): void => {
  process.stderr.write(`[bench:render] ${msg}\n`);
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const now = (): number => performance.timeOrigin + performance.now();
const env = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);

const ATTACHMENTS = env("RENDER_BENCH_ATTACHMENTS", 5000);
const CHANGES = env("RENDER_BENCH_CHANGES", 20);
const GAP_MS = env("RENDER_BENCH_GAP_MS", 500);
const WITH_OUT = process.env["RENDER_BENCH_OUT"] !== "0";
const PROBE_GAP_MS = 10;
const XDS_PROBE_GAP_MS = 50;
const XDS_PROBE_LOST_MS = 5000;
const SETTLE_MS = 2000;

const SHAPE: InfraShape = {
  index: 1,
  base: (10 << 24) + (128 << 16),
  prefix: 18,
  clusters: ATTACHMENTS,
  workers: 1,
  layout: "interleaved",
};

/** The DNS client: runs until its standard input is closed, then reports every query. */
function startProbe(port: number): { stop: () => Promise<[number, number][]> } {
  const child = spawn(process.execPath, [join(import.meta.dirname, "probe.js"), String(port), "0", `${PROBE_GAP_MS}`], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
  const exited = new Promise<[number, number][]>((resolve, reject) => {
    child.once("exit", (code) => {
      if (code === 0) resolve((JSON.parse(out) as { samples: [number, number][] }).samples);
      else reject(new Error(`probe exited ${String(code)}`));
    });
  });
  return {
    stop: () => {
      child.stdin.end();
      return exited;
    },
  };
}

/**
 * Figures of the samples ([sent at, ms or -1 when lost]) taken in [from, to): how many under
 * `count`, then `<prefix>_p50_ms`, `_p99_ms`, `_max_ms` and `_lost`.
 */
function window(
  samples: readonly [number, number][],
  from: number,
  to: number,
  count: string,
  prefix: string,
): Record<string, number> {
  const inside = samples.filter(([at]) => at >= from && at < to);
  const s = summary(inside.filter(([, ms]) => ms >= 0).map(([, ms]) => ms));
  return {
    [count]: inside.length,
    [`${prefix}_p50_ms`]: s.p50,
    [`${prefix}_p99_ms`]: s.p99,
    [`${prefix}_max_ms`]: s.max,
    [`${prefix}_lost`]: inside.filter(([, ms]) => ms < 0).length,
  };
}

/** New Envoys of GROUP one after another until stopped: [opened at, ms to the first Listener or -1]. */
function startXdsProbe(
  port: number,
  creds: ConstructorParameters<typeof Client>[1],
): { stop: () => Promise<[number, number][]> } {
  const samples: [number, number][] = [];
  let stopped = false;
  const one = async (id: number): Promise<void> => {
    const opened = now();
    const lds = new LdsClient(port, creds, GROUP, `bench-probe-${String(id)}`);
    try {
      samples.push([opened, (await lds.next(0, XDS_PROBE_LOST_MS)) - opened]);
    } catch {
      samples.push([opened, -1]);
    } finally {
      lds.close();
    }
  };
  const loop = (async () => {
    for (let id = 0; !stopped; id += 1) {
      await one(id);
      await sleep(XDS_PROBE_GAP_MS);
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
      return samples;
    },
  };
}

/** An Envoy-like LDS-only SotW stream that ACKs everything and records when each version arrived. */
class LdsClient {
  readonly versions: { version: string; at: number }[] = [];
  readonly #client: Client;
  readonly #call: ClientDuplexStream<SotwRequestInit, Buffer>;

  constructor(port: number, creds: ConstructorParameters<typeof Client>[1], group: string, id = "bench-render") {
    this.#client = new Client(`localhost:${String(port)}`, creds, {
      ...ENVOY_CHANNEL_OPTIONS,
      "grpc.max_receive_message_length": -1,
    });
    this.#call = this.#client.makeBidiStreamRequest(
      METHODS.adsSotw,
      encodeSotwRequest,
      (b: Buffer) => b,
      new Metadata(),
    );
    this.#call.on("error", () => undefined);
    this.#call.on("data", (bytes: Buffer) => {
      const at = now();
      const head = decodeHead(bytes, false, false);
      this.versions.push({ version: head.version, at });
      this.#call.write({ type_url: head.typeUrl, version_info: head.version, response_nonce: head.nonce });
    });
    this.#call.write({ node: { id, cluster: group }, type_url: LISTENER_TYPE_URL });
  }

  /** Resolves with the arrival time of the first version after the `seen`-th one. */
  async next(seen: number, timeoutMs: number): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    while (this.versions.length <= seen) {
      if (Date.now() > deadline) throw new Error(`no new Listener within ${String(timeoutMs)} ms`);
      await sleep(5);
    }
    return (this.versions[seen] as { at: number }).at;
  }

  close(): void {
    this.#call.cancel();
    this.#client.close();
  }
}

const yamlDocs = (objects: readonly object[]): string => objects.map((o) => stringify(o)).join("---\n");

/** The changing attachment (cluster 0), alone in its file so a change is a small file's save. */
const changed = (k: number) =>
  attachment(clusterName(1, 0), {
    infra: infraName(1),
    baseDomain: k % 2 === 0 ? "bench.example.com" : "other.example.com",
  });

/** Writes the Infra into `dir`: its own objects in files of 500 objects; attachment 0 alone. */
async function writeInfra(dir: string): Promise<number> {
  const s = infraState(SHAPE);
  await mkdir(dir, { recursive: true });
  const rest = [...s.infras, ...s.attachments.slice(1), ...s.namespaces, ...s.services, ...s.nodePools, ...s.machines];
  for (let i = 0; i < rest.length; i += 500)
    await writeFile(join(dir, `part-${String(i / 500).padStart(3, "0")}.yaml`), yamlDocs(rest.slice(i, i + 500)));
  await writeFile(join(dir, "attachment-0.yaml"), yamlDocs([changed(0)]));
  return rest.length + 1;
}

async function main(): Promise<void> {
  const pki = await makePki();
  const out = join(pki.dir, "out");
  mkdirSync(out);
  const served = new Served(pki, WITH_OUT ? ["--out", out] : [], "big-render");
  const staging = join(pki.dir, "staging");
  const objects = await writeInfra(staging);
  progress(`${String(objects)} objects written`);
  let lds: LdsClient | undefined;
  try {
    await served.ready();
    const probe = startProbe(served.dnsPort);
    const xdsProbe = startXdsProbe(served.xdsPort, await pki.client("clusters", "tenant-vlan-proxy"));
    const t0 = now();
    await sleep(5000);
    lds = new LdsClient(served.xdsPort, await pki.client(NS, `${infraName(1)}-proxy`), `${NS}/${infraName(1)}-proxy`);
    const cpuBefore = served.cpuMs();
    const added = now();
    await rename(staging, join(served.manifests, "big"));
    progress("Infra added; waiting for its first Listener");
    const firstLds = await lds.next(0, 1_800_000);
    progress(`first Listener after ${String(Math.round(firstLds - added))} ms`);
    await sleep(SETTLE_MS);
    const cpuFirst = served.cpuMs() - cpuBefore;
    const changesFrom = now();
    const latencies: number[] = [];
    for (let k = 1; k <= CHANGES; k += 1) {
      const seen = lds.versions.length;
      const file = join(served.manifests, "big", "attachment-0.yaml");
      const started = now();
      await writeFile(`${file}.tmp`, yamlDocs([changed(k)]));
      await rename(`${file}.tmp`, file);
      latencies.push((await lds.next(seen, 600_000)) - started);
      await sleep(GAP_MS);
    }
    const changesTo = now() + SETTLE_MS;
    await sleep(SETTLE_MS);
    const samples = await probe.stop();
    const xdsSamples = await xdsProbe.stop();
    const both = (from: number, to: number): Record<string, number> => ({
      ...window(samples, from, to, "queries", "dns"),
      ...window(xdsSamples, from, to, "xds_streams", "xds"),
    });
    const change = summary(latencies);
    emit({
      name: "render.big_infra",
      attachments: ATTACHMENTS,
      objects,
      out: WITH_OUT,
      first_render_ms: round(firstLds - added),
      first_render_cpu_ms: cpuFirst,
      changes: CHANGES,
      change_lds_p50_ms: change.p50,
      change_lds_p99_ms: change.p99,
      change_lds_max_ms: change.max,
      change_lds_ms: latencies.map(round),
      baseline: both(t0, added),
      first_render: both(added, firstLds + SETTLE_MS),
      during_changes: both(changesFrom, changesTo),
      rss_mib: round(served.rssMiB()),
      loadavg_1m: round(loadavg()[0] ?? Number.NaN),
    });
  } finally {
    lds?.close();
    await served.stop();
    rmSync(pki.dir, { recursive: true, force: true });
  }
}

await main();
