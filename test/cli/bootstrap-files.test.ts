// Issue 15 item 4 / issue 13 item 1 through the built CLI: `oooi render` and `oooi serve` write a
// bootstrap.yaml per Envoy node group beside envoy.json, indexed like their other files, pointing at
// the xDS server — and an Envoy stand-in started from that file alone joins its node group.
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { afterAll, describe, expect, it } from "vitest";
import { roundTripBootstrap } from "../support/bootstrap-check.js";
import { ROOT, ServeProcess, oooi, until } from "../support/cli.js";
import { adsTarget } from "../support/envoy/bootstrap.js";
import { EnvoyLikeClient } from "../support/envoy/client.js";

const scratch = mkdtempSync(join(tmpdir(), "oooi-bootstrap-files-"));
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

const BOOTSTRAP = join("clusters", "tenant-vlan-proxy", "bootstrap.yaml");
const index = (out: string): string[] =>
  (JSON.parse(readFileSync(join(out, ".oooi-index.json"), "utf8")) as { files: string[] }).files;
/** The index, or nothing while serve has not written it yet. */
const indexed = (out: string): string[] => {
  try {
    return index(out);
  } catch {
    return [];
  }
};
const readBootstrap = (out: string): object => parse(readFileSync(join(out, BOOTSTRAP), "utf8")) as object;

describe("oooi render writes bootstrap.yaml", () => {
  it("refuses an --xds-address without a usable port, naming the option, and writes nothing", async () => {
    const out = join(scratch, "refused");
    for (const bad of ["oooi-xds", "127.0.0.1:0", "127.0.0.1:70000"]) {
      const r = await oooi([
        "render",
        "--manifests",
        join(ROOT, "examples", "standalone"),
        "--out",
        out,
        "--xds-address",
        bad,
      ]);
      expect(r.code, bad).not.toBe(0);
      expect(r.stderr).toMatch(/--xds-address .*expected host:port with a port 1-65535/);
      expect(r.stderr).not.toMatch(/\bat .*\.js:\d+/);
    }
    expect(existsSync(out)).toBe(false);
  });

  it("points at serve's default listen address unless told otherwise; the index lists the file", async () => {
    const out = join(scratch, "default");
    expect((await oooi(["render", "--manifests", join(ROOT, "examples", "standalone"), "--out", out])).code).toBe(0);
    expect(index(out)).toContain("clusters/tenant-vlan-proxy/bootstrap.yaml");
    const bootstrap = roundTripBootstrap(readBootstrap(out));
    expect(adsTarget(bootstrap)).toMatchObject({
      address: "127.0.0.1:18000",
      nodeCluster: "clusters/tenant-vlan-proxy",
    });

    const moved = join(scratch, "moved");
    const args = ["render", "--manifests", join(ROOT, "examples", "standalone"), "--out", moved];
    expect((await oooi([...args, "--xds-address", "xds.example.test:19000"])).code).toBe(0);
    expect(adsTarget(readBootstrap(moved)).address).toBe("xds.example.test:19000");
  });
});

describe("oooi serve writes bootstrap.yaml", () => {
  it("names the port the xDS server bound (--xds-listen :0), and an Envoy started from it gets its group", async () => {
    const manifests = join(scratch, "serve-manifests");
    const out = join(scratch, "serve-out");
    cpSync(join(ROOT, "examples", "standalone"), manifests, { recursive: true });
    const serve = new ServeProcess([
      "--manifests",
      manifests,
      "--out",
      out,
      "--xds-listen",
      "0.0.0.0:0",
      "--no-dns",
      "--debounce",
      "20",
    ]);
    let client: EnvoyLikeClient | undefined;
    try {
      await until(() => /xDS \(ADS\) server listening on [\d.]+:\d+/.test(serve.log), "xDS server listening");
      const port = /xDS \(ADS\) server listening on [\d.]+:(\d+)/.exec(serve.log)?.[1] ?? "";
      // The sink indexes a file before writing it: wait for both.
      await until(
        () => indexed(out).includes("clusters/tenant-vlan-proxy/bootstrap.yaml") && existsSync(join(out, BOOTSTRAP)),
        "bootstrap.yaml indexed and written",
      );
      const target = adsTarget(roundTripBootstrap(readBootstrap(out)));
      // Listening on every interface, the bootstrap dials loopback on the port actually bound.
      expect(target.address).toBe(`127.0.0.1:${port}`);
      client = new EnvoyLikeClient({ address: target.address, node: { id: "envoy-0", cluster: target.nodeCluster } });
      client.connect();
      const held = client;
      await held.waitFor(() => held.listeners.size > 0, "listeners of the bootstrap's node group", 20_000);
      expect(held.violations).toEqual([]);
    } finally {
      client?.close();
      await serve.stop();
    }
  });
});
