// `oooi debug nodes` through the built CLI against the built `oooi serve`: per node and type, how
// many resources the node holds, so an Envoy that ACKed an empty configuration stands out; a node
// whose node.cluster names no group shows "not sent"; and `-o json` carries the same counts.
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CLUSTER_TYPE_URL, LISTENER_TYPE_URL } from "../../src/xds/resource/protos.js";
import { EnvoyLikeClient } from "../support/envoy/client.js";
import { ROOT, ServeProcess, oooi, until } from "../support/cli.js";

const dir = mkdtempSync(join(tmpdir(), "oooi-debug-nodes-"));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

interface JsonType {
  type: string;
  status: string;
  acked_resources?: number;
  sent_resources?: number;
}
interface JsonNode {
  id: string;
  streams: { types: JsonType[] }[];
}

/** The `debug nodes` row of `id`, split on its aligned columns, keyed by the header. */
function row(table: string, id: string): Record<string, string> {
  const lines = table.split("\n");
  const header = lines[0] ?? "";
  const line = lines.find((l) => l.startsWith(`${id} `)) ?? "";
  const starts = [...header.matchAll(/\S+/g)].map((m) => m.index);
  const names = [...header.matchAll(/\S+/g)].map((m) => m[0]);
  return Object.fromEntries(names.map((name, i) => [name, line.slice(starts[i], starts[i + 1] ?? line.length).trim()]));
}

describe("oooi debug nodes shows resource counts per type", () => {
  it("counts what each Envoy holds, marks an empty configuration and a typo'd node group", async () => {
    cpSync(join(ROOT, "examples", "standalone"), dir, { recursive: true });
    const serve = new ServeProcess(["--manifests", dir, "--xds-listen", "127.0.0.1:0", "--no-dns", "--debounce", "20"]);
    const clients: EnvoyLikeClient[] = [];
    try {
      await until(() => /xDS \(ADS\) server listening on [\d.]+:\d+/.test(serve.log), "xDS listening");
      const address = `127.0.0.1:${/xDS \(ADS\) server listening on [\d.]+:(\d+)/.exec(serve.log)?.[1] ?? ""}`;
      const envoy = new EnvoyLikeClient({ address, node: { id: "envoy-full", cluster: "clusters/tenant-vlan-proxy" } });
      const typo = new EnvoyLikeClient({ address, node: { id: "envoy-typo", cluster: "clusters/tenant-vlan-prxy" } });
      clients.push(envoy, typo);
      envoy.connect();
      typo.connect();
      await envoy.waitFor(() => envoy.listeners.size > 0 && envoy.clusters.size > 0, "the example's listeners");

      const full = await oooi(["debug", "nodes", "--xds", address]);
      expect(full.code, full.stderr).toBe(0);
      const cells = row(full.stdout, "envoy-full");
      expect(cells["LDS"]).toBe(`${envoy.version(LISTENER_TYPE_URL).slice(0, 8)} (${String(envoy.listeners.size)})`);
      expect(cells["CDS"]).toBe(`${envoy.version(CLUSTER_TYPE_URL).slice(0, 8)} (${String(envoy.clusters.size)})`);
      expect(row(full.stdout, "envoy-typo")["LDS"]).toBe("not sent");

      const json = await oooi(["debug", "nodes", "--xds", address, "-o", "json"]);
      const nodes = JSON.parse(json.stdout) as JsonNode[];
      const lds = nodes.find((n) => n.id === "envoy-full")?.streams[0]?.types.find((t) => t.type === "lds");
      expect(lds).toMatchObject({
        status: "SYNCED",
        acked_resources: envoy.listeners.size,
        sent_resources: envoy.listeners.size,
      });

      // Every attachment gone: the proxy's configuration is empty, and ACKed as such.
      rmSync(join(dir, "attachments.yaml"));
      await envoy.waitFor(() => envoy.listeners.size === 0 && envoy.clusters.size === 0, "the empty configuration");
      await until(async () => {
        const r = await oooi(["debug", "nodes", "--xds", address]);
        return /\(0, empty\)/.test(row(r.stdout, "envoy-full")["LDS"] ?? "");
      }, "debug nodes showing the empty LDS");
      const empty = row((await oooi(["debug", "nodes", "--xds", address])).stdout, "envoy-full");
      expect(empty["LDS"]).toBe(`${envoy.version(LISTENER_TYPE_URL).slice(0, 8)} (0, empty)`);
      expect(empty["CDS"]).toBe(`${envoy.version(CLUSTER_TYPE_URL).slice(0, 8)} (0, empty)`);
    } finally {
      for (const c of clients) c.close();
      await serve.stop();
    }
  });
});
