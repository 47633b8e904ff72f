// `npm run bench:coredns-reload` (issue 30, target 7): how long real CoreDNS keeps answering a changed
// record's old value after the rendered zone file changed — the time a new apps VIP takes to reach
// a VLAN client. Two Corefiles on the same files, one after the other in each round so that noise
// hits both alike:
//   rendered   the Corefile as oooi renders it (authoritative blocks read the zone file, no cache)
//   cache-30   the same with `cache 30` in every authoritative block (the shape before the change)
// Each round starts CoreDNS, asks the apps name (so a cache holds it), writes the next rendering
// (only the apps VIP differs) as a ConfigMap volume update does, and asks every 100 ms until the new
// address comes back. Prints one JSON line per shape.
//   COREDNS_RELOAD_ROUNDS   rounds (default 5)
// Needs the CoreDNS peer (test/peers/install.sh coredns) and `dig`.
import { addressesOf, digBatch } from "../../test/dns/coredns/batch.js";
import { renderState, withAppsVip, type RenderedExample } from "../../test/dns/coredns/render-state.js";
import { clientIn, COREDNS, loopbackCidr, startCoreDns, type CoreDns } from "../../test/dns/coredns/rig.js";
import { startUpstream } from "../../test/dns/coredns/upstream.js";
import { COREFILE_KEY } from "../../src/dns/render/index.js";
import { loadManifestDir } from "../../src/watchers/manifests.js";

const ROUNDS = Number(process.env["COREDNS_RELOAD_ROUNDS"] ?? 5);
const POLL_MS = 100;
const GIVE_UP_MS = 90_000;
const EXAMPLE = "apps-ingress";
const APPS_NAME = "console-openshift-console.apps.example-hcp.clusters.example.com";
const TARGET_SECONDS = 6;

type Shape = "rendered" | "cache-30";

/** The rendered Corefile with `cache 30` in each block that answers from a zone file. */
function withCacheOnFileBlocks(corefile: string): string {
  return corefile.replace(/^(\s+)file /gm, "$1cache 30\n$1file ");
}

/** The rendering's one DNSServer. */
function only(r: RenderedExample) {
  const [server, ...others] = r.servers;
  if (server === undefined || others.length > 0) throw new Error(`${EXAMPLE}: expected one DNSServer`);
  return server;
}

function shaped(files: Readonly<Record<string, string>>, shape: Shape): Record<string, string> {
  const corefile = files[COREFILE_KEY] ?? "";
  return { ...files, [COREFILE_KEY]: shape === "rendered" ? corefile : withCacheOnFileBlocks(corefile) };
}

async function appsAddress(coredns: CoreDns, source: string): Promise<string> {
  const [reply] = await digBatch(coredns, [{ name: APPS_NAME, type: "A" }], { source });
  return reply === undefined ? "" : addressesOf(reply).join();
}

const quantile = (xs: readonly number[], q: number): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN;
};

async function main(): Promise<void> {
  if (COREDNS.path === undefined) throw new Error(COREDNS.skipReason);
  const upstream = await startUpstream();
  // Run from the repository's root, as `npm run` does.
  const load = await loadManifestDir(`examples/${EXAMPLE}`);
  if (!load.ok) throw new Error(`examples/${EXAMPLE}: ${JSON.stringify(load.error)}`);
  const first = renderState(load.state);
  const before = only(first);
  const after = only(renderState(withAppsVip(load.state, "192.0.2.201"), first));
  const vlan = clientIn(loopbackCidr(before.vlanCidr));
  const seconds: Record<Shape, number[]> = { rendered: [], "cache-30": [] };
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const shapes: Shape[] = round % 2 === 0 ? ["rendered", "cache-30"] : ["cache-30", "rendered"];
      for (const shape of shapes) {
        const coredns = await startCoreDns(shaped(before.files, shape), { upstream, cidr: loopbackCidr });
        try {
          const old = await appsAddress(coredns, vlan);
          if (old !== "192.0.2.200") throw new Error(`${shape}: first answer ${old}, not 192.0.2.200`);
          const start = performance.now();
          coredns.write(shaped(after.files, shape));
          for (;;) {
            if ((await appsAddress(coredns, vlan)) === "192.0.2.201") break;
            if (performance.now() - start > GIVE_UP_MS) throw new Error(`${shape}: no new answer in ${GIVE_UP_MS} ms`);
            await new Promise((r) => setTimeout(r, POLL_MS));
          }
          const s = (performance.now() - start) / 1000;
          seconds[shape].push(s);
          process.stderr.write(`round ${String(round + 1)}/${String(ROUNDS)} ${shape}: ${s.toFixed(2)} s\n`);
        } finally {
          await coredns.close();
        }
      }
    }
  } finally {
    await upstream.close();
  }
  for (const shape of ["rendered", "cache-30"] as const) {
    const xs = seconds[shape];
    console.log(
      JSON.stringify({
        bench: "coredns_reload",
        shape,
        rounds: xs.length,
        seconds: xs.map((x) => Number(x.toFixed(2))),
        p50_s: Number(quantile(xs, 0.5).toFixed(2)),
        max_s: Number(Math.max(...xs).toFixed(2)),
        target_s: TARGET_SECONDS,
      }),
    );
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
