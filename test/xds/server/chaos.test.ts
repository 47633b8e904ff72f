// Chaos (bounded, seeded): 200 Envoy-like clients (half SotW, half Delta) disconnect and
// reconnect at random while 2,000 snapshot changes go out as fast as the server takes them.
// Every client must end at the final version with no make-before-break violation, and the heap
// after a forced GC must be back within 10% of a warmed-up baseline.
import v8 from "node:v8";
import vm from "node:vm";
import { afterAll, expect, test } from "vitest";
import type { EnvoyResources } from "../../../src/envoy/resources.js";
import { EnvoyLikeClient } from "../../support/envoy/client.js";
import { sampleEndpoints } from "../../envoy/proxy-fixture.js";
import { ALPHA, BETA, GAMMA, GROUP, publish, rendered, startRig, versionsOf, type Rig } from "./fixtures.js";

const SEED = 0x5eed_0001;
const CLIENTS = 200;
const CHANGES = 2000;
const WARMUP_CHANGES = 200;
const TOGGLE_PROBABILITY = 0.25;
/** Changes are set back to back; the event loop runs between batches of about five. */
const YIELD_PROBABILITY = 0.2;

/** mulberry32: a small deterministic PRNG. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Every non-empty subset of three attachments, each with two endpoint layouts. */
function configPool(): EnvoyResources[] {
  const all = [ALPHA, BETA, GAMMA];
  const pool: EnvoyResources[] = [];
  for (let mask = 1; mask < 8; mask += 1) {
    const subset = all.filter((_a, i) => (mask & (1 << i)) !== 0);
    pool.push(rendered(subset));
    pool.push(rendered(subset, (name) => sampleEndpoints(name).map((e) => ({ ...e, port: e.port + 1 }))));
  }
  return pool;
}

const gc = (() => {
  v8.setFlagsFromString("--expose-gc");
  return vm.runInNewContext("gc") as () => void;
})();

async function settledHeap(): Promise<number> {
  for (let i = 0; i < 6; i += 1) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return process.memoryUsage().heapUsed;
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

let rig: Rig | undefined;
afterAll(async () => {
  await rig?.close();
});

/** One round: clients connect, changes fly while clients flap, everyone converges, all close. */
async function round(
  r: Rig,
  random: () => number,
  pool: readonly EnvoyResources[],
  changes: number,
): Promise<{ violations: string[]; reconnects: number }> {
  const clients = Array.from(
    { length: CLIENTS },
    (_x, i) =>
      new EnvoyLikeClient({
        address: r.address,
        node: { id: `chaos-${String(i)}`, cluster: GROUP },
        protocol: i % 2 === 0 ? "sotw" : "delta",
      }),
  );
  for (const c of clients) c.connect();
  let current = -1;
  let reconnects = 0;
  for (let i = 0; i < changes; i += 1) {
    let next = Math.floor(random() * pool.length);
    if (next === current) next = (next + 1) % pool.length;
    current = next;
    publish(r.cache, GROUP, pool[next] as EnvoyResources);
    if (random() < TOGGLE_PROBABILITY) {
      const c = clients[Math.floor(random() * clients.length)] as EnvoyLikeClient;
      if (c.connected) c.disconnect();
      else {
        c.connect();
        reconnects += 1;
      }
    }
    if (random() < YIELD_PROBABILITY) await tick();
  }
  for (const c of clients)
    if (!c.connected) {
      c.connect();
      reconnects += 1;
    }
  // The final state: SotW clients at the final version_info of every type; every client holding
  // exactly the final resources (Delta: at their final per-resource versions).
  const final = versionsOf(r.cache, GROUP);
  const snap = r.cache.getSnapshot(GROUP);
  const content = new Map(
    [...(snap?.types ?? new Map<never, never>())].map(([t, ts]) => [
      t,
      new Map([...ts.resources].map(([n, res]) => [n, res.version])),
    ]),
  );
  await Promise.all(
    clients.map(async (c) => {
      if (c.protocol === "sotw") await c.waitForVersions(final, 90_000);
      await c.waitFor(() => c.holds(content), "the final resources", 90_000);
      await c.barrier(90_000);
    }),
  );
  const violations = clients.flatMap((c) => c.violations.map((v) => `${c.options.node.id} (${c.protocol}): ${v}`));
  for (const c of clients) c.close();
  return { violations, reconnects };
}

test("200 flapping clients under 2,000 rapid changes all converge; memory returns to baseline", async () => {
  rig = await startRig();
  const r = rig;
  const random = prng(SEED);
  const pool = configPool();

  const warm = await round(r, random, pool, WARMUP_CHANGES);
  expect(warm.violations).toEqual([]);
  await waitForStreams(r, 0);
  const before = await settledHeap();

  const chaos = await round(r, random, pool, CHANGES);
  expect(chaos.reconnects).toBeGreaterThan(100);
  expect(chaos.violations).toEqual([]);
  await waitForStreams(r, 0);
  const after = await settledHeap();

  const growth = (after - before) / before;
  expect(Math.abs(growth), `heap ${String(before)} → ${String(after)}`).toBeLessThanOrEqual(0.1);
}, 360_000);

/** The server notices closed streams asynchronously; wait until it has seen them all go. */
async function waitForStreams(r: Rig, n: number): Promise<void> {
  for (let i = 0; i < 500 && r.server.streamCount() !== n; i += 1)
    await new Promise((resolve) => setTimeout(resolve, 10));
  expect(r.server.streamCount()).toBe(n);
}
