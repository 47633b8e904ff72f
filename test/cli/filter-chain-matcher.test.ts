// --filter-chain-matcher through the built CLI (docs/cli.md): `oooi render` writes the TLS listeners
// in the filter_chain_matcher form only when asked, and `oooi serve` with the flag pushes a worker
// leaving to an Envoy-like client as a matcher-only update — the other worker's open connection is
// not drained (the stand-in drains as Envoy documents it, test/support/envoy/drain.ts).
import { cpSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { LISTENER_TYPE_URL } from "../../src/xds/resource/protos.js";
import { EnvoyLikeClient } from "../support/envoy/client.js";
import { oooi, ROOT, ServeProcess, until } from "../support/cli.js";

const scratch = mkdtempSync(join(tmpdir(), "oooi-fcm-"));
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

interface Listener {
  name: string;
  filter_chains: { name: string; filter_chain_match?: unknown }[];
  filter_chain_matcher?: unknown;
}

async function renderedListeners(flags: readonly string[], out: string): Promise<Listener[]> {
  const r = await oooi(["render", "--manifests", join(ROOT, "examples", "standalone"), "--out", out, ...flags]);
  expect(r.code, r.stderr).toBe(0);
  const envoy = JSON.parse(readFileSync(join(out, "clusters", "tenant-vlan-proxy", "envoy.json"), "utf8")) as {
    listeners: Listener[];
  };
  return envoy.listeners;
}

describe("--filter-chain-matcher", () => {
  it("oooi render: matcher form with the flag, filter_chain_match without", async () => {
    const plain = await renderedListeners([], join(scratch, "plain"));
    const matcher = await renderedListeners(["--filter-chain-matcher"], join(scratch, "matcher"));
    expect(plain.map((l) => l.filter_chain_matcher)).toEqual(plain.map(() => undefined));
    expect(plain.some((l) => l.filter_chains.some((c) => c.filter_chain_match !== undefined))).toBe(true);
    const tls = matcher.filter((l) => l.name !== "http-80");
    expect(tls.map((l) => l.name)).toEqual(["https-443", "kube-6443"]);
    for (const l of tls) {
      expect(l.filter_chain_matcher).toBeDefined();
      expect(l.filter_chains.map((c) => c.filter_chain_match)).toEqual(l.filter_chains.map(() => undefined));
    }
  });

  it("oooi serve: a worker leaving drains no other connection", async () => {
    const dir = join(scratch, "serve");
    cpSync(join(ROOT, "examples", "standalone"), dir, { recursive: true });
    const serve = new ServeProcess([
      ...["--manifests", dir, "--xds-listen", "127.0.0.1:0", "--no-dns", "--debounce", "20"],
      "--filter-chain-matcher",
    ]);
    let envoy: EnvoyLikeClient | undefined;
    try {
      await until(() => /xDS \(ADS\) server listening on [\d.]+:\d+/.test(serve.log), "xDS server listening");
      const port = /xDS \(ADS\) server listening on [\d.]+:(\d+)/.exec(serve.log)?.[1] ?? "";
      const client = new EnvoyLikeClient({
        address: `127.0.0.1:${port}`,
        node: { id: "envoy-0", cluster: "clusters/tenant-vlan-proxy" },
      });
      envoy = client;
      client.connect();
      const kube = (src: string) => ({ destinationPort: 6443, sourceIp: src, transportProtocol: "tls" as const });
      await client.waitFor(() => client.route(kube("127.0.8.11")) !== undefined, "the workers routed");
      const stays = client.openConnection(kube("127.0.8.10"));
      const goes = client.openConnection(kube("127.0.8.11"));
      expect([stays?.chain, goes?.chain]).toEqual(["clusters/alpha/kubernetes-service", stays?.chain]);
      const before = client.version(LISTENER_TYPE_URL);

      const file = join(dir, "observed.yaml");
      const docs = readFileSync(file, "utf8").split(/^---$/m);
      writeFileSync(`${file}.tmp`, docs.filter((d) => !/^ {2}name: alpha-workers-1$/m.test(d)).join("---"));
      renameSync(`${file}.tmp`, file);
      await client.waitFor(() => client.route(kube("127.0.8.11")) === undefined, "the gone worker no longer routed");

      expect(client.version(LISTENER_TYPE_URL)).not.toBe(before);
      expect(client.drained).toEqual([]);
      expect(client.openConnections.map((o) => o.conn.sourceIp)).toEqual(["127.0.8.10", "127.0.8.11"]);
      expect(client.violations).toEqual([]);
    } finally {
      envoy?.close();
      await serve.stop();
    }
  });
});
