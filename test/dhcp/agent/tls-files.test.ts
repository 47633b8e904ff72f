// Issue 13 item 1, the dhcp-agent's side: given --tls-cert/--tls-key/--tls-ca it connects with mTLS
// and re-reads the files for every connection, so a Secret volume whose `..data` symlink the kubelet
// swaps to a new directory (https://kubernetes.io/docs/concepts/configuration/secret/ — mounted
// Secrets are updated in place through that atomic swap) is picked up without a restart.
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import { fileCredentials } from "../../../src/cli/dhcp-agent.js";
import { keaWorkload } from "../../../src/operator/desired/kea.js";
import { infraOwner } from "../../../src/operator/desired/objects.js";
import { DhcpAgent, type AgentEvent } from "../../../src/dhcp/agent/index.js";
import { issueCa, issueLeaf, loadCa, type IssuedCertificate } from "../../../src/pki/issue.js";
import { nodeGroupUri } from "../../../src/pki/spiffe.js";
import { RotatingServerCredentials } from "../../../src/xds/server/tls.js";
import { startXdsServer, type XdsServer } from "../../../src/xds/server/index.js";
import { LISTENER_TYPE_URL } from "../../../src/xds/resource/type-urls.js";
import { openSotw } from "../../support/envoy/raw.js";
import { FakeApplier, keaCache, publish, until } from "./support.js";

const NODE = "clusters/vlan100-dhcp";
const DAY = 24 * 60 * 60 * 1000;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Authority {
  readonly certPem: string;
  readonly client: IssuedCertificate;
  readonly server: IssuedCertificate;
}

/** A CA with a client certificate for the DHCP group and a serving certificate for localhost. */
async function authority(name: string): Promise<Authority> {
  const ca = await issueCa(name, { now: Date.now(), lifetimeMs: DAY });
  const loaded = await loadCa(ca.certPem, ca.keyPem);
  const validity = { now: Date.now(), lifetimeMs: DAY };
  const client = await issueLeaf(loaded, { kind: "client", uri: nodeGroupUri("clusters", "vlan100-dhcp") }, validity);
  const server = await issueLeaf(loaded, { kind: "server", commonName: "oooi", dnsNames: ["localhost"] }, validity);
  return { certPem: ca.certPem, client, server };
}

/** A Secret volume as the kubelet lays it out: files are symlinks through `..data` into a timestamped dir. */
class SecretVolume {
  readonly dir = mkdtempSync(join(tmpdir(), "oooi-secret-volume-"));
  #n = 0;

  constructor(first: Authority) {
    this.#write(first);
    for (const f of ["tls.crt", "tls.key", "ca.crt"]) symlinkSync(join("..data", f), join(this.dir, f));
  }

  /** Writes a new timestamped directory and swaps `..data` to it in one rename, as the kubelet does. */
  swap(next: Authority): void {
    this.#write(next);
  }

  file(name: string): string {
    return join(this.dir, name);
  }

  #write(a: Authority): void {
    const version = `..2026_12_01_00_00_0${String(++this.#n)}`;
    mkdirSync(join(this.dir, version));
    writeFileSync(join(this.dir, version, "tls.crt"), a.client.certPem);
    writeFileSync(join(this.dir, version, "tls.key"), a.client.keyPem);
    writeFileSync(join(this.dir, version, "ca.crt"), a.certPem);
    symlinkSync(version, join(this.dir, "..data_tmp"));
    renameSync(join(this.dir, "..data_tmp"), join(this.dir, "..data"));
  }
}

async function mtlsServer(a: Authority, port = 0): Promise<XdsServer> {
  const cache = keaCache();
  publish(cache, NODE, { "valid-lifetime": 3600 });
  const credentials = new RotatingServerCredentials({ cert: a.server.certPem, key: a.server.keyPem, ca: a.certPem });
  return startXdsServer({ cache, listen: `localhost:${String(port)}`, credentials, requireIdentity: true });
}

const fail = (msg: string): never => {
  throw new Error(msg);
};

describe("dhcp-agent TLS files", () => {
  it("refuses a missing file or a certificate without its key at start, naming the flag and the file", () => {
    expect(() => fileCredentials({ tlsCa: "/nonexistent/ca.crt" }, fail)).toThrow(
      "cannot read --tls-ca /nonexistent/ca.crt: ENOENT",
    );
    expect(() => fileCredentials({ tlsCert: "/x/tls.crt" }, fail)).toThrow(
      "--tls-cert and --tls-key must be given together",
    );
  });

  it("the operator's Kea pod passes the mounted Secret's files to the agent only with mTLS on", () => {
    const input = {
      infraName: "vlan100",
      namespace: "clusters",
      labels: {},
      podLabels: {},
      networksAnnotation: "[]",
      owner: infraOwner("vlan100", "u"),
      node: NODE,
      xdsAddress: "oooi-xds.oooi-system.svc:18000",
      keaImage: "kea",
      agentImage: "oooi",
      hooksDirectory: "/usr/lib/kea/hooks",
      interfaceName: "net1",
      leaseStorage: "128Mi",
      leaseStorageClass: undefined,
    };
    const agentOf = (xdsTls: boolean): { args: string[]; volumeMounts: { name: string }[] } | undefined => {
      const deployment = keaWorkload({ ...input, xdsTls }).find((o) => o.kind === "Deployment");
      const pod = (deployment?.["spec"] as { template: { spec: { containers: { name: string }[] } } }).template.spec;
      return pod.containers.find((c) => c.name === "dhcp-agent") as
        { args: string[]; volumeMounts: { name: string }[] } | undefined;
    };
    const tls = agentOf(true);
    expect(tls?.args.slice(-6)).toEqual([
      "--tls-cert",
      "/etc/oooi/xds-tls/tls.crt",
      "--tls-key",
      "/etc/oooi/xds-tls/tls.key",
      "--tls-ca",
      "/etc/oooi/xds-tls/ca.crt",
    ]);
    expect(tls?.volumeMounts.map((m) => m.name)).toContain("xds-tls");
    expect(agentOf(false)?.args.join(" ")).not.toContain("--tls-");
  });

  it("follows a `..data` symlink swap for its next connection; the open stream is not cut by it", async () => {
    const [first, second] = await Promise.all([authority("first CA"), authority("second CA")]);
    const volume = new SecretVolume(first);
    cleanups.push(() => {
      rmSync(volume.dir, { recursive: true, force: true });
    });
    const provider = fileCredentials(
      { tlsCa: volume.file("ca.crt"), tlsCert: volume.file("tls.crt"), tlsKey: volume.file("tls.key") },
      fail,
    );
    let server = await mtlsServer(first);
    const port = server.port;
    cleanups.push(() => server.close());
    const events: AgentEvent[] = [];
    const agent = new DhcpAgent({
      xds: `localhost:${String(port)}`,
      node: NODE,
      nodeId: "clusters/kea-0",
      applier: new FakeApplier(),
      credentials: provider,
      backoff: { initialMs: 10, maxMs: 100, factor: 2, jitter: 0 },
      onEvent: (e) => events.push(e),
    });
    agent.start();
    cleanups.push(() => agent.close());
    await until(() => events.some((e) => e.type === "ack"), "the first ACK with the first certificate", 20_000);
    const before = provider();
    expect(provider()).toBe(before); // unchanged files: the same credentials, the same channel

    volume.swap(second);
    expect(provider()).not.toBe(before);
    // The stream opened with the first certificate goes on.
    expect(events.some((e) => e.type === "stream-ended")).toBe(false);

    // The old credentials no longer open a stream on a server of the second CA; the agent's next
    // connection, with the swapped files, does.
    await server.close();
    server = await mtlsServer(second, port);
    const stale = openSotw(`localhost:${String(port)}`, undefined, before);
    cleanups.push(() => {
      stale.close();
    });
    stale.send({ node: { id: "stale", cluster: NODE }, type_url: LISTENER_TYPE_URL });
    expect((await stale.ended()).code).toBe(GrpcStatus.UNAVAILABLE);
    const acks = (): number => events.filter((e) => e.type === "ack").length;
    await until(() => acks() >= 2, "an ACK over a connection with the swapped certificate", 20_000);
    expect(events.filter((e) => e.type === "stream-ended").length).toBeGreaterThanOrEqual(1);
  });
});
