// `oooi explain`: on every example, a worker's SNI-less TLS to 6443 (the kubernetes Service path)
// and its `kubernetes` SNI on 443 are explained as its own hosted cluster's chain; an unknown
// source gets "no chain matches" with the nearest miss; DNS names view, zone and record.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { explainCommand, type ExplainCommandOptions, type GroupExplanation } from "../../src/cli/explain.js";
import { renderAll } from "../../src/pipeline/outputs.js";
import { loadManifestDir } from "../../src/watchers/manifests.js";
import { chainMisses, explainConnection } from "../../src/envoy/explain-route.js";
import { readChainMatch } from "../../src/envoy/render/chain-match.js";
import { oooi, ROOT } from "../support/cli.js";

const EXAMPLES = join(ROOT, "examples");
const examples = readdirSync(EXAMPLES, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort();

async function explain(opts: Partial<ExplainCommandOptions> & { from: string }): Promise<{
  code: number;
  out: string;
  err: string;
}> {
  let out = "";
  let err = "";
  const code = await explainCommand(
    { timeout: 2000, output: "json", ...opts },
    {
      out: (t) => (out += t),
      err: (t) => (err += t),
    },
  );
  return { code, out, err };
}

/** Every (example, worker address, hosted cluster) the examples' models know. */
async function workers(): Promise<{ example: string; address: string; hostedCluster: string }[]> {
  const rows: { example: string; address: string; hostedCluster: string }[] = [];
  for (const example of examples) {
    const load = await loadManifestDir(join(EXAMPLES, example));
    if (!load.ok) throw new Error(`${example} unreadable`);
    for (const t of renderAll(load.state).model.topologies) {
      if (t.proxy === undefined) continue;
      for (const a of t.attachments.filter((x) => x.served)) {
        for (const address of a.workerAddresses) rows.push({ example, address, hostedCluster: a.hostedCluster });
      }
    }
  }
  return rows;
}

describe("oooi explain", () => {
  it("names each worker's own hosted cluster on every example (SNI-less 6443 and SNI kubernetes on 443)", async () => {
    const rows = await workers();
    // The examples with workers: shared-vlan (three clusters), standalone, apps-ingress, ...
    expect(new Set(rows.map((r) => r.example)).size).toBeGreaterThanOrEqual(3);
    for (const w of rows) {
      for (const conn of [{ port: 6443 }, { port: 443, sni: "kubernetes.default.svc" }]) {
        const r = await explain({ manifests: join(EXAMPLES, w.example), from: w.address, ...conn });
        const answers = JSON.parse(r.out) as GroupExplanation[];
        const hit = answers.filter((a) => a.explanation.ok);
        expect({ example: w.example, from: w.address, ...conn, clusters: hit.map((a) => a.hostedCluster) }).toEqual({
          example: w.example,
          from: w.address,
          ...conn,
          clusters: [w.hostedCluster],
        });
      }
    }
  });

  it('says "no chain matches" with the nearest miss for a source no worker has', async () => {
    const r = await oooi([
      "explain",
      "--manifests",
      join(EXAMPLES, "shared-vlan"),
      "--from",
      "192.0.2.99",
      "--port",
      "6443",
    ]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("no chain matches: Envoy closes the connection");
    // The nearest miss is a worker chain missed only by its source, not a hostname chain missed by SNI.
    expect(r.stdout).toMatch(
      /^nearest miss +clusters\/\w+\/kubernetes-service: source [0-9./, ]+ does not hold 192\.0\.2\.99$/m,
    );
  });

  it("explains a hostname route and lists why the other chains did not match", async () => {
    const r = await explain({
      manifests: join(EXAMPLES, "standalone"),
      from: "127.0.8.77",
      port: 443,
      sni: "oauth.beta.clusters.example.com",
    });
    expect(r.code).toBe(0);
    const [answer] = JSON.parse(r.out) as GroupExplanation[];
    expect(answer?.explanation).toMatchObject({
      ok: true,
      listener: "https-443",
      chain: "clusters/beta/oauth-openshift",
      cluster: "clusters-beta/oauth-openshift:6443",
      endpoints: ["172.30.2.2:6443"],
    });
    expect(answer?.hostedCluster).toBe("clusters/beta");
    const others = answer?.explanation.ok === true ? answer.explanation.others : [];
    expect(others.find((o) => o.chain === "clusters/alpha/oauth-openshift")?.misses).toEqual([
      "SNI oauth.alpha.clusters.example.com, not oauth.beta.clusters.example.com",
    ]);
  });

  it("names the port that serves the connection when the asked one does not (the API on 6443, not 443)", async () => {
    const opts = {
      manifests: join(EXAMPLES, "standalone"),
      from: "127.0.8.10",
      port: 443,
      sni: "api.alpha.clusters.example.com",
    };
    const r = await explain(opts);
    expect(r.code).toBe(1);
    const [answer] = JSON.parse(r.out) as GroupExplanation[];
    expect(answer?.explanation.ok).toBe(false);
    expect(answer?.servedOn).toEqual({
      port: 6443,
      listener: expect.any(String) as string,
      chain: expect.stringMatching(/^clusters\/alpha\//) as string,
    });
    const text = await explain({ ...opts, output: "text" });
    expect(text.out).toMatch(/^served on 6443 .* takes this connection on port 6443 \(--port 6443\)$/m);
    // A connection no port takes names none (a source no worker has, a name no chain serves).
    const nowhere = await explain({ ...opts, from: "127.0.8.99", sni: "nothing.example.com" });
    expect((JSON.parse(nowhere.out) as GroupExplanation[])[0]?.servedOn).toBeUndefined();
  });

  it("says there is no listener on a port the proxy does not serve", () => {
    const e = explainConnection([{ name: "l", address: { socket_address: { port_value: 443 } } }], [], {
      destinationPort: 8443,
      sourceIp: "192.0.2.1",
      transportProtocol: "tls",
    });
    expect(e).toEqual({ ok: false, reason: "no-listener", ports: [443] });
  });

  it.each([
    { name: "port", match: { destination_port: 443 }, misses: ["destination port 443, not 6443"] },
    { name: "wildcard SNI", match: { server_names: ["*.apps.a.example.com"] }, misses: [] },
    {
      name: "wildcard SNI needs a label",
      match: { server_names: ["*.a.example.com"] },
      sni: "a.example.com",
      misses: ["SNI *.a.example.com, not a.example.com"],
    },
    {
      name: "source and transport",
      match: {
        transport_protocol: "raw_buffer",
        source_prefix_ranges: [{ address_prefix: "10.0.0.0", prefix_len: 8 }],
      },
      misses: ["transport raw_buffer, not tls", "source 10.0.0.0/8 does not hold 192.0.2.1"],
    },
  ])("chainMisses: $name", ({ match, misses, sni }) => {
    const got = chainMisses(readChainMatch({ filter_chain_match: match }), {
      destinationPort: 6443,
      sourceIp: "192.0.2.1",
      transportProtocol: "tls",
      serverName: sni ?? "console.apps.a.example.com",
    });
    expect(got.map((m) => m.text)).toEqual(misses);
  });

  it("explains DNS: the view by source, the zone and the record, or forwarded", async () => {
    const dir = join(EXAMPLES, "standalone");
    const vlan = await explain({ manifests: dir, from: "127.0.8.5", dns: "console.apps.alpha.clusters.example.com" });
    expect(JSON.parse(vlan.out)).toEqual([
      {
        dnsServer: "clusters/tenant-vlan-dns",
        view: "vlan",
        zone: "apps.alpha.clusters.example.com",
        outcome: "answer",
        addresses: ["127.0.8.200"],
      },
    ]);
    const pod = await explain({ manifests: dir, from: "127.0.0.1", dns: "api.beta.clusters.example.com" });
    expect(JSON.parse(pod.out)).toMatchObject([{ view: "default", outcome: "answer", addresses: ["172.30.200.10"] }]);
    const other = await explain({ manifests: dir, from: "127.0.8.5", dns: "www.example.net" });
    expect(JSON.parse(other.out)).toEqual([
      { dnsServer: "clusters/tenant-vlan-dns", view: "vlan", outcome: "forwarded", addresses: [] },
    ]);
  });

  it.each([
    { args: { from: "127.0.8", port: 6443, manifests: "x" }, message: "--from 127.0.8 is not an IPv4 address" },
    { args: { from: "127.0.8.5", manifests: "x" }, message: "give either --port (a connection) or --dns (a query)" },
    { args: { from: "127.0.8.5", port: 443 }, message: "give --manifests DIR or --xds HOST:PORT" },
    {
      args: { from: "127.0.8.5", port: 443, xds: "127.0.0.1:1" },
      message: "--xds without --manifests needs --group NAMESPACE/PROXYSERVER",
    },
    { args: { from: "127.0.8.5", dns: "a.b", xds: "127.0.0.1:1" }, message: "--dns needs --manifests" },
  ])("refuses bad usage: $message", async ({ args, message }) => {
    const r = await explain(args);
    expect(r.code).toBe(2);
    expect(r.err).toContain(message);
  });
});
