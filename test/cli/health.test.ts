// One health view through the built `oooi serve` and CLI, with real gRPC clients: a client that
// NACKs a new cluster list is in ERROR, and the endpoints the server holds back from it read BEHIND
// (not SYNCED) with the group's current version; a client with a typo in its node group is named
// with the nearest served group — in /status.json's headline and in `oooi debug nodes`; a client that
// disconnects is GONE since then, and `oooi verify`'s probe leaves nothing behind.
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CLUSTER_TYPE_URL } from "../../src/xds/resource/protos.js";
import { FETCH_NODE_ID, fetchSnapshot } from "../../src/verify/fetch-snapshot.js";
import type { StatusView } from "../../src/status-page/index.js";
import { EnvoyLikeClient } from "../support/envoy/client.js";
import { ROOT, ServeProcess, oooi, until } from "../support/cli.js";

const dir = mkdtempSync(join(tmpdir(), "oooi-health-"));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("one health view", () => {
  it("shows a NACKing client in ERROR, what it is held back from as BEHIND, and a typo'd group with the nearest name", async () => {
    cpSync(join(ROOT, "examples", "standalone"), dir, { recursive: true });
    const serve = new ServeProcess([
      "--manifests",
      dir,
      "--xds-listen",
      "127.0.0.1:0",
      "--http-listen",
      "127.0.0.1:0",
      "--no-dns",
      "--debounce",
      "20",
    ]);
    const clients: EnvoyLikeClient[] = [];
    try {
      await until(() => /xDS \(ADS\) server listening on [\d.]+:\d+/.test(serve.log), "xDS listening");
      await until(() => /status page on http:\/\/127\.0\.0\.1:\d+\//.test(serve.log), "the status page listening");
      const address = `127.0.0.1:${/xDS \(ADS\) server listening on [\d.]+:(\d+)/.exec(serve.log)?.[1] ?? ""}`;
      const url = /status page on (http:\/\/127\.0\.0\.1:\d+\/)/.exec(serve.log)?.[1] ?? "";
      // Accepts the first cluster list, rejects every later one.
      let firstClusters: string | undefined;
      const nacker = new EnvoyLikeClient({
        address,
        node: { id: "envoy-nacker", cluster: "clusters/tenant-vlan-proxy" },
        validate: (typeUrl, resources) => {
          if (typeUrl !== CLUSTER_TYPE_URL) return undefined;
          const names = resources.map((r) => r.name).join(",");
          firstClusters ??= names;
          return names === firstClusters ? undefined : "too many clusters for this test";
        },
      });
      const typo = new EnvoyLikeClient({ address, node: { id: "envoy-typo", cluster: "clusters/tenant-vlan-prxy" } });
      clients.push(nacker, typo);
      nacker.connect();
      typo.connect();
      await nacker.waitFor(() => nacker.listeners.size > 0 && nacker.clusters.size > 0, "the example's listeners");

      // Every attachment gone: a new cluster list the nacker rejects, and new endpoints it is not sent.
      rmSync(join(dir, "attachments.yaml"));
      const status = async (): Promise<StatusView> => (await (await fetch(`${url}status.json`)).json()) as StatusView;
      await until(async () => (await status()).health.error === 1, "the NACK in /status.json");
      const view = await status();
      expect(view.headline).toBe(
        "1 in error · unknown group clusters/tenant-vlan-prxy (did you mean clusters/tenant-vlan-proxy?)",
      );
      const group = view.nodeGroups.find((g) => g.group === "clusters/tenant-vlan-proxy");
      const types = group?.clients.find((c) => c.id === "envoy-nacker")?.types ?? [];
      expect(types.find((t) => t.type === "cds")).toMatchObject({
        state: "ERROR",
        nack: "too many clusters for this test",
      });
      const eds = types.find((t) => t.type === "eds");
      expect(eds).toMatchObject({
        state: "BEHIND",
        reason: "held-back-after-nack",
        currentVersion: group?.versions["eds"],
      });
      expect(eds?.ackedVersion).not.toBe(eds?.currentVersion);

      const nodes = await oooi(["debug", "nodes", "--xds", address]);
      expect(nodes.code, nodes.stderr).toBe(0);
      const line = nodes.stdout.split("\n").find((l) => l.startsWith("envoy-nacker ")) ?? "";
      expect(line).toMatch(/BEHIND \S+→\S+ \(held-back-after-nack\)/);
      expect(line).toMatch(/NACK /);
      expect(nodes.stdout).toMatch(/^group clusters\/tenant-vlan-proxy current: .*eds [0-9a-f]+/m);
      expect(nodes.stdout).toContain(
        "unknown group clusters/tenant-vlan-prxy: no node group of this name is served (did you mean clusters/tenant-vlan-proxy?)",
      );

      // oooi verify's fetch: a probe while it runs, nothing left of it once it closed.
      await fetchSnapshot({ address, group: "clusters/tenant-vlan-proxy", timeoutMs: 10_000 });
      await until(async () => {
        const live = await oooi(["debug", "nodes", "--xds", address]);
        return live.code === 0 && !live.stdout.includes(FETCH_NODE_ID);
      }, "the probe's stream closed");
      // The typo'd client disconnects: GONE since then, no longer in the headline.
      typo.close();
      await until(async () => (await status()).headline === "1 in error", "the gone client out of the headline");
      const gone = (await status()).nodeGroups
        .find((g) => g.group === "clusters/tenant-vlan-prxy")
        ?.clients.find((c) => c.id === "envoy-typo");
      expect(gone).toMatchObject({ connected: false, probe: false });
      expect(gone?.goneSince).toBeGreaterThan(0);
      expect((await status()).nodeGroups.flatMap((g) => g.clients.map((c) => c.id))).not.toContain(FETCH_NODE_ID);
      const all = await oooi(["debug", "nodes", "--all", "--xds", address]);
      expect(all.code, all.stderr).toBe(0);
      const goneLine = all.stdout.split("\n").find((l) => l.startsWith("envoy-typo ")) ?? "";
      expect(goneLine).toMatch(/GONE since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(\S+ ago\)/);
      expect(all.stdout).not.toContain(FETCH_NODE_ID);
      const json = await oooi(["debug", "nodes", "--all", "--xds", address, "-o", "json"]);
      const listed = JSON.parse(json.stdout) as { id: string; gone_since?: string }[];
      expect(listed.find((n) => n.id === "envoy-typo")?.gone_since).toBe(new Date(gone?.goneSince ?? 0).toISOString());
      expect(listed.find((n) => n.id === "envoy-nacker")?.gone_since).toBeUndefined();
    } finally {
      for (const c of clients) c.close();
      await serve.stop();
    }
  });
});
