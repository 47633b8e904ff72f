// `oooi serve --xds-tls-cert/--xds-tls-key/--xds-tls-ca` through the built CLI: mTLS with the
// authorization rules of the operator (docs/reference.md "Identity on the xDS port"): a client gets
// only the node group its certificate names, another group's certificate is refused and logged, and
// `oooi debug` works with the administrator's certificate only; `oooi explain --xds` as the group's proxy.
import { mkdtempSync, rmSync, writeFileSync, cpSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { credentials, status as GrpcStatus } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { issueCa, issueLeaf, loadCa, type IssuedCertificate } from "../../src/pki/issue.js";
import { ADMIN_URI, nodeGroupUri } from "../../src/pki/spiffe.js";
import { LISTENER_TYPE_URL } from "../../src/xds/resource/type-urls.js";
import { oooi, ROOT, ServeProcess, until } from "../support/cli.js";
import { EnvoyLikeClient } from "../support/envoy/client.js";
import { openSotw } from "../support/envoy/raw.js";

const GROUP = "clusters/tenant-vlan-proxy"; // the example's ProxyServer
const DAY = 86_400_000;
const dir = mkdtempSync(join(tmpdir(), "oooi-serve-tls-"));
const file = (name: string): string => join(dir, name);
let caPem = "";
let mine: IssuedCertificate;
let other: IssuedCertificate;

beforeAll(async () => {
  const validity = { now: Date.now(), lifetimeMs: DAY };
  const ca = await issueCa("serve test CA", validity);
  caPem = ca.certPem;
  const loaded = await loadCa(ca.certPem, ca.keyPem);
  const leaf = (uri: string): Promise<IssuedCertificate> => issueLeaf(loaded, { kind: "client", uri }, validity);
  const server = await issueLeaf(loaded, { kind: "server", commonName: "oooi", dnsNames: ["localhost"] }, validity);
  let admin: IssuedCertificate;
  [mine, other, admin] = await Promise.all([
    leaf(nodeGroupUri("clusters", "tenant-vlan-proxy")),
    leaf(nodeGroupUri("clusters", "someone-else-proxy")),
    leaf(ADMIN_URI),
  ]);
  const pairs: [string, IssuedCertificate][] = [
    ["server", server],
    ["mine", mine],
    ["other", other],
    ["admin", admin],
  ];
  for (const [name, c] of pairs) {
    writeFileSync(file(`${name}.crt`), c.certPem);
    writeFileSync(file(`${name}.key`), c.keyPem);
  }
  writeFileSync(file("ca.crt"), ca.certPem);
  cpSync(join(ROOT, "examples", "standalone"), file("manifests"), { recursive: true });
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const creds = (leaf: IssuedCertificate) =>
  credentials.createSsl(Buffer.from(caPem), Buffer.from(leaf.keyPem), Buffer.from(leaf.certPem));

describe("oooi serve with --xds-tls-*", () => {
  test("one group's certificate gets its group, another's is refused and logged, debug needs the admin", async () => {
    const serve = new ServeProcess([
      "--manifests",
      file("manifests"),
      "--xds-listen",
      "127.0.0.1:0",
      "--no-dns",
      "--xds-tls-cert",
      file("server.crt"),
      "--xds-tls-key",
      file("server.key"),
      "--xds-tls-ca",
      file("ca.crt"),
    ]);
    const clients: EnvoyLikeClient[] = [];
    try {
      await until(() => /xDS \(ADS\) server listening on [\d.]+:\d+/.test(serve.log), "xDS server listening");
      const port = /xDS \(ADS\) server listening on [\d.]+:(\d+)/.exec(serve.log)?.[1] ?? "";
      const address = `localhost:${port}`;

      const envoy = new EnvoyLikeClient({ address, node: { id: "envoy-0", cluster: GROUP }, credentials: creds(mine) });
      clients.push(envoy);
      envoy.connect();
      await until(() => envoy.version(LISTENER_TYPE_URL) !== "", "the listeners of its own group");

      const intruder = openSotw(address, undefined, creds(other));
      intruder.send({ node: { id: "intruder", cluster: GROUP }, type_url: LISTENER_TYPE_URL });
      const end = await intruder.ended();
      intruder.close();
      expect(end.code).toBe(GrpcStatus.PERMISSION_DENIED);
      expect(intruder.received).toEqual([]);
      await until(() => serve.lines().some((l) => l.msg === "xDS call refused"), "the refusal in the log");
      expect(serve.lines().find((l) => l.msg === "xDS call refused")).toMatchObject({
        level: 40,
        reason: `node group clusters/someone-else-proxy may not receive node group ${GROUP}`,
      });

      const debug = (who: string) =>
        oooi([
          "debug",
          "nodes",
          "--xds",
          address,
          "--tls-ca",
          file("ca.crt"),
          "--tls-cert",
          file(`${who}.crt`),
          "--tls-key",
          file(`${who}.key`),
        ]);
      const refused = await debug("mine");
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("node group clusters/tenant-vlan-proxy may not call /oooi.debug.v1.");
      const admin = await debug("admin");
      expect(admin.stderr).toBe("");
      expect(admin.stdout).toMatch(/^envoy-0\s+clusters\/tenant-vlan-proxy\s/m);

      // explain fetches the group's snapshot over ADS as that group's proxy: the same TLS flags.
      const explain = (tls: string[]) =>
        oooi([
          "explain",
          "--xds",
          address,
          "--group",
          GROUP,
          "--from",
          "127.0.8.50",
          "--port",
          "443",
          "--sni",
          "oauth.alpha.clusters.example.com",
          ...tls,
        ]);
      const plain = await explain([]);
      expect(plain.code).toBe(1);
      const asProxy = await explain([
        "--tls-ca",
        file("ca.crt"),
        "--tls-cert",
        file("mine.crt"),
        "--tls-key",
        file("mine.key"),
      ]);
      expect([asProxy.code, asProxy.stderr]).toEqual([0, ""]);
      expect(asProxy.stdout).toMatch(/chain\s+clusters\/alpha\/oauth-openshift/);
      const unreadable = await explain(["--tls-ca", file("missing.crt")]);
      expect(unreadable.stderr).toContain(`cannot read the TLS CA ${file("missing.crt")}`);
    } finally {
      for (const c of clients) c.close();
      await serve.stop();
    }
  });
});
