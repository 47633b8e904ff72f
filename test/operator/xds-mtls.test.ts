// Issue 13 item 1 on the operator's path: against the fake API server the operator keeps its CA in
// a Secret (one CA for every replica and restart; a conflict on create re-reads the winner), issues
// each data-plane child's client certificate into a Secret of the child's namespace, and serves xDS
// with mTLS. A client holding the issued Secret's certificate gets its own node group and nothing
// else; no certificate, an unknown CA, or the other child's certificate get nothing and no status.
// Rotation: past two thirds of the lifetime the Secrets' content is replaced, the new certificate
// connects, and the stream opened with the old one is not cut.
import { X509Certificate } from "node:crypto";
import { checkServerIdentity, type PeerCertificate } from "node:tls";
import { credentials, status as GrpcStatus, type ChannelCredentials } from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import { issueCa, issueLeaf, loadCa } from "../../src/pki/issue.js";
import { clientSecretName } from "../../src/pki/mount.js";
import { readTlsSecret, tlsSecretData } from "../../src/pki/secret.js";
import { nodeGroupUri } from "../../src/pki/spiffe.js";
import { CA_SECRET, ensureCa, LEAF_LIFETIME_MS, UnusableSecretError } from "../../src/pki/store.js";
import { startOperatorPki } from "../../src/cli/operator-pki.js";
import { publishSnapshots } from "../../src/pipeline/snapshots.js";
import { KubeRest } from "../../src/kube/rest.js";
import { SnapshotCache } from "../../src/xds/cache/index.js";
import { KEA_CONFIG_TYPE_SPEC, KEA_CONFIG_TYPE_URL } from "../../src/dhcp/kea-config-resource.js";
import { LISTENER_TYPE_URL } from "../../src/xds/resource/protos.js";
import { startXdsServer, type XdsServer } from "../../src/xds/server/index.js";
import { EnvoyLikeClient } from "../support/envoy/client.js";
import { openSotw } from "../support/envoy/raw.js";
import { eventually, kubeConfigFor, type FakeApiServer } from "../support/fake-apiserver/index.js";
import { OffsetClock } from "../support/offset-clock.js";
import { quietLogger, seededFake, startOperator, stored } from "./support.js";
import { checkEnvoySnapshot } from "../../src/envoy/snapshot.js";

const NS = "oooi-system";
const PROXY = "clusters/tenant-vlan-proxy";
const DHCP = "clusters/tenant-vlan-dhcp";
const SERVICE_NAME = "oooi-xds.oooi-system.svc";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function secretData(fake: FakeApiServer, namespace: string, name: string): Record<string, string> | undefined {
  return stored(fake, "v1", "Secret", namespace, name)?.["data"] as Record<string, string> | undefined;
}

/** Channel credentials from a kubernetes.io/tls Secret's data, checking the server by the Service's name. */
function secretCreds(data: Record<string, string> | undefined, withCert = true): ChannelCredentials {
  const get = (k: string): Buffer => Buffer.from(data?.[k] ?? "", "base64");
  return credentials.createSsl(get("ca.crt"), withCert ? get("tls.key") : null, withCert ? get("tls.crt") : null, {
    // The operator's serving certificate names the xDS Service, not the loopback address dialled here.
    checkServerIdentity: (_host: string, cert: PeerCertificate) => checkServerIdentity(SERVICE_NAME, cert),
  });
}

describe("the operator's CA Secret", () => {
  it("is created once: two replicas starting together and a restart all get the same CA", async () => {
    const fake = await seededFake();
    cleanups.push(() => fake.stop());
    const rest = () => new KubeRest(kubeConfigFor(fake.url));
    const [a, b] = await Promise.all([ensureCa(rest(), NS, Date.now()), ensureCa(rest(), NS, Date.now())]);
    expect(b.certPem).toBe(a.certPem);
    const again = await ensureCa(rest(), NS, Date.now());
    expect(again.certPem).toBe(a.certPem);
    const secret = stored(fake, "v1", "Secret", NS, CA_SECRET);
    expect(secret?.["type"]).toBe("kubernetes.io/tls");
    expect(readTlsSecret(secret?.["data"] as Record<string, string>)?.certPem).toBe(a.certPem);
  });

  it("a Secret of that name holding no usable CA is refused with its name, and left as it was", async () => {
    const fake = await seededFake();
    cleanups.push(() => fake.stop());
    const leafOnly = await issueCa("someone's", { now: Date.now(), lifetimeMs: LEAF_LIFETIME_MS });
    const data = { ...tlsSecretData(leafOnly, leafOnly.certPem), "tls.key": Buffer.from("garbage").toString("base64") };
    fake.seed({ apiVersion: "v1", kind: "Secret", metadata: { name: CA_SECRET, namespace: NS }, data });
    const rest = new KubeRest(kubeConfigFor(fake.url));
    await expect(ensureCa(rest, NS, Date.now())).rejects.toThrow(UnusableSecretError);
    await expect(ensureCa(rest, NS, Date.now())).rejects.toThrow(`Secret ${NS}/${CA_SECRET} does not hold a usable CA`);
    expect(secretData(fake, NS, CA_SECRET)).toEqual(data);
  });
});

interface Rig {
  readonly fake: FakeApiServer;
  readonly xds: XdsServer;
  readonly clock: OffsetClock;
  readonly address: string;
  /** What the PKI logged (serving certificate issue and rotation). */
  readonly pkiLog: string[];
}

/** Rotation is due this long after issue (plus a margin); a rig started this far in the past can jump to now. */
const PAST_ROTATION_MS = Math.ceil((LEAF_LIFETIME_MS * 2) / 3) + 60 * 60_000;

/**
 * The operator on the fake with its PKI and a real mTLS xDS server. `offsetMs` starts its clock in
 * the past: TLS peers check validity against real time, so a rotated certificate must be issued
 * at (about) the real now, not days ahead of it.
 */
async function operatorWithMtls(offsetMs = 0): Promise<Rig> {
  const fake = await seededFake();
  cleanups.push(() => fake.stop());
  const clock = new OffsetClock(offsetMs);
  cleanups.push(() => {
    clock.stop();
  });
  const pkiLog: string[] = [];
  const log = {
    info: (m: string) => pkiLog.push(m),
    warn: (m: string) => pkiLog.push(m),
    error: (m: string) => pkiLog.push(m),
  };
  const settings = { namespace: NS, xdsAddress: `${SERVICE_NAME}:18000` };
  const pki = await startOperatorPki(new KubeRest(kubeConfigFor(fake.url)), settings, log, clock);
  cleanups.push(() => {
    pki.rotation.stop();
  });
  const cache = new SnapshotCache({ check: checkEnvoySnapshot });
  cache.registerType(KEA_CONFIG_TYPE_URL, KEA_CONFIG_TYPE_SPEC);
  const xds = await startXdsServer({
    cache,
    listen: "127.0.0.1:0",
    credentials: pki.credentials,
    requireIdentity: true,
  });
  const { op } = startOperator(fake, {
    clock,
    leaderElection: false,
    pki: pki.ca,
    xds: { status: xds.status, cache },
    onState: (_s, outputs) => {
      publishSnapshots(cache, outputs, quietLogger);
    },
    closeStreams: () => xds.close(),
  });
  cleanups.push(() => op.close());
  await op.ready;
  return { fake, xds, clock, address: `127.0.0.1:${String(xds.port)}`, pkiLog };
}

function envoy(rig: Rig, id: string, group: string, creds: ChannelCredentials): EnvoyLikeClient {
  const c = new EnvoyLikeClient({ address: rig.address, node: { id, cluster: group }, credentials: creds });
  cleanups.push(() => {
    c.close();
  });
  c.connect();
  return c;
}

describe("mTLS on the operator's xDS port with the Secrets it issues", () => {
  it("each child's Secret gets its group only; no certificate, a stranger's CA or the other child's get nothing", async () => {
    const rig = await operatorWithMtls();
    const proxySecret = clientSecretName("tenant-vlan-proxy");
    const dhcpSecret = clientSecretName("tenant-vlan-dhcp");
    await eventually(() => {
      expect(secretData(rig.fake, "clusters", proxySecret)).toBeDefined();
      expect(secretData(rig.fake, "clusters", dhcpSecret)).toBeDefined();
    }, 20_000);
    const proxy = secretData(rig.fake, "clusters", proxySecret);
    const dhcp = secretData(rig.fake, "clusters", dhcpSecret);
    // Owned by the Infra like the other children, so it goes with them.
    expect(stored(rig.fake, "v1", "Secret", "clusters", proxySecret)?.["metadata"]).toMatchObject({
      ownerReferences: [{ kind: "Infra", name: "tenant-vlan" }],
    });

    const heard: string[] = [];
    for (const event of ["stream-open", "push", "ack", "nack"] as const)
      rig.xds.status.on(event, () => heard.push(event));

    // The DHCP agent's certificate asking for the proxy's group (and NACKing): refused, nothing recorded.
    const intruder = openSotw(rig.address, undefined, secretCreds(dhcp));
    intruder.send({
      node: { id: "intruder", cluster: PROXY },
      type_url: LISTENER_TYPE_URL,
      version_info: "attacker",
      response_nonce: "n",
      error_detail: { code: 3, message: "the attacker's text" },
    });
    const denied = await intruder.ended();
    expect(denied.code).toBe(GrpcStatus.PERMISSION_DENIED);
    expect(denied.details).toBe(`node group ${DHCP} may not receive node group ${PROXY}`);
    // No client certificate, or one of another CA: the connection is made (a debugger may come with
    // a token instead), but the client has no identity and its stream ends before it is heard.
    // The stranger's certificate names the proxy's identity exactly; only its CA is wrong.
    const strangerCa = await issueCa("stranger", { now: Date.now(), lifetimeMs: LEAF_LIFETIME_MS });
    const strangerLeaf = await issueLeaf(
      await loadCa(strangerCa.certPem, strangerCa.keyPem),
      { kind: "client", uri: nodeGroupUri("clusters", "tenant-vlan-proxy") },
      { now: Date.now(), lifetimeMs: LEAF_LIFETIME_MS },
    );
    const ours = proxy?.["ca.crt"] ?? "";
    const strangerData = { ...tlsSecretData(strangerLeaf, strangerCa.certPem), "ca.crt": ours };
    const refused = [secretCreds(proxy, false), secretCreds(strangerData)].map((c) => {
      const s = openSotw(rig.address, undefined, c);
      s.send({ node: { id: "x", cluster: PROXY }, type_url: LISTENER_TYPE_URL });
      return s;
    });
    for (const s of refused)
      expect(await s.ended()).toMatchObject({
        code: GrpcStatus.PERMISSION_DENIED,
        details: "a client without an oooi identity may not open a discovery stream",
      });
    expect([intruder, ...refused].every((s) => s.received.length === 0)).toBe(true);
    expect(heard).toEqual([]);
    expect(rig.xds.status.nodes()).toEqual([]);

    // The proxy's own Secret: its group's listeners.
    const c = envoy(rig, "envoy-0", PROXY, secretCreds(proxy));
    await c.waitFor(() => c.listeners.size > 0, "the proxy's listeners", 20_000);
    expect(rig.xds.status.nodes().map((n) => n.node.cluster)).toEqual([PROXY]);
  });

  it("past two thirds of the lifetime the Secret's certificate is replaced; it connects, the old stream stays", async () => {
    const rig = await operatorWithMtls(-PAST_ROTATION_MS);
    const name = clientSecretName("tenant-vlan-proxy");
    await eventually(() => {
      expect(secretData(rig.fake, "clusters", name)).toBeDefined();
    }, 20_000);
    const first = secretData(rig.fake, "clusters", name);
    const old = envoy(rig, "envoy-old", PROXY, secretCreds(first));
    await old.waitFor(() => old.listeners.size > 0, "listeners with the first certificate", 20_000);
    const streams = old.streamCount;
    const deployment = stored(rig.fake, "apps/v1", "Deployment", "clusters", "tenant-vlan-proxy");
    const template = JSON.stringify((deployment?.["spec"] as { template?: unknown } | undefined)?.template);

    rig.clock.jump(PAST_ROTATION_MS);
    await eventually(() => {
      expect(secretData(rig.fake, "clusters", name)?.["tls.crt"]).not.toBe(first?.["tls.crt"]);
    }, 20_000);
    const second = secretData(rig.fake, "clusters", name);
    // The server's own certificate was re-issued too, in place.
    await eventually(() => {
      expect(rig.pkiLog.some((m) => m.startsWith("xDS serving certificate rotated"))).toBe(true);
    }, 20_000);
    const due = (readTlsSecret(first)?.notBefore ?? 0) + (LEAF_LIFETIME_MS * 2) / 3;
    expect(readTlsSecret(second)?.notBefore).toBeGreaterThan(due);
    expect(second?.["ca.crt"]).toBe(first?.["ca.crt"]);
    const fresh = envoy(rig, "envoy-new", PROXY, secretCreds(second));
    await fresh.waitFor(() => fresh.listeners.size > 0, "listeners with the rotated certificate", 20_000);
    expect(old.connected).toBe(true);
    expect(old.streamCount).toBe(streams);
    // The pod template names the Secret, not its content: nothing rolls.
    const after = stored(rig.fake, "apps/v1", "Deployment", "clusters", "tenant-vlan-proxy");
    expect(JSON.stringify((after?.["spec"] as { template?: unknown } | undefined)?.template)).toBe(template);
    const cert = new X509Certificate(Buffer.from(second?.["tls.crt"] ?? "", "base64"));
    expect(cert.subjectAltName).toBe(`URI:${nodeGroupUri("clusters", "tenant-vlan-proxy")}`);
  });
});
