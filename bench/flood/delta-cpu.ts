// Row 9's cost: CPU of the serve process per Delta subscription update (one more name per request,
// each acknowledging the previous answer), at two sizes of what the stream already subscribes. An
// update that costs what it changes costs the same at both; one that walks the subscription grows
// with it. Read from outside as /proc/PID/stat utime + stime (10 ms ticks), so `updates` is large.
import { rmSync } from "node:fs";
import { loadavg } from "node:os";
import { deltaStream, subscribe } from "./floods.js";
import { makePki, Served } from "./served.js";

const round = (n: number) => Math.round(n * 1000) / 1000;

export async function deltaCpuPerUpdate(sizes: readonly number[], updates: number): Promise<Record<string, unknown>> {
  const pki = await makePki();
  const largest = Math.max(...sizes);
  const served = new Served(
    pki,
    ["--xds-max-names-per-stream", String(largest + updates * sizes.length + 10)],
    "delta-cpu",
  );
  const out: Record<string, unknown> = { name: "flood.delta_cpu_per_update", updates_per_size: updates };
  try {
    await served.ready();
    const stream = await deltaStream(served, pki);
    let nonce = stream.received[0]?.nonce ?? "";
    let subscribed = 1;
    const perUpdate: number[] = [];
    for (const size of sizes) {
      // Up to `size` in one request (not measured).
      const batch = Array.from({ length: Math.max(0, size - subscribed) }, (_, i) => `flood-${String(subscribed + i)}`);
      nonce = await subscribe(stream, nonce, batch);
      subscribed += batch.length;
      await new Promise((r) => setTimeout(r, 500));
      const cpu0 = served.cpuMs();
      const t0 = performance.now();
      for (let i = 0; i < updates; i += 1) {
        nonce = await subscribe(stream, nonce, [`flood-${String(subscribed)}`]);
        subscribed += 1;
      }
      const wall = performance.now() - t0;
      const cpu = served.cpuMs() - cpu0;
      perUpdate.push(cpu / updates);
      out[`at_${String(size)}_cpu_ms_per_update`] = round(cpu / updates);
      out[`at_${String(size)}_wall_ms_per_update`] = round(wall / updates);
    }
    stream.close();
    out["ratio_largest_to_smallest"] = round(
      (perUpdate[perUpdate.length - 1] ?? Number.NaN) / (perUpdate[0] ?? Number.NaN),
    );
    out["rss_mib_at_end"] = round(served.rssMiB());
    out["loadavg_1m"] = round(loadavg()[0] ?? Number.NaN);
    return out;
  } finally {
    await served.stop();
    rmSync(pki.dir, { recursive: true, force: true });
  }
}
