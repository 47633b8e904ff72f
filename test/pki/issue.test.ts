// The operator's PKI, checked with Node's own X.509 parser and a real TLS handshake, not with the
// library that issued the certificates: a CA that signs only leaves, a serving certificate for the
// xDS Service's names, client certificates with one SPIFFE URI each, rotation at two thirds of the
// lifetime on an injected clock, and the kubernetes.io/tls Secret round trip.
import { createPrivateKey, X509Certificate } from "node:crypto";
import { once } from "node:events";
import { createServer, connect, type TLSSocket } from "node:tls";
import { describe, expect, it, test } from "vitest";
import { issueCa, issueLeaf, loadCa, type IssuedCertificate } from "../../src/pki/issue.js";
import { needsRotation, rotationDueAt } from "../../src/pki/rotation.js";
import { readTlsSecret, tlsSecretData } from "../../src/pki/secret.js";
import { ADMIN_URI, nodeGroupUri, parseIdentityUri } from "../../src/pki/spiffe.js";

const DAY = 24 * 60 * 60 * 1000;
const T0 = Date.UTC(2026, 0, 1);

async function ca(now = T0): Promise<IssuedCertificate> {
  return issueCa("oooi test CA", { now, lifetimeMs: 365 * DAY });
}

describe("issued certificates", () => {
  test("the CA is a CA for leaves only, self-signed, valid from a minute before issue", async () => {
    const issued = await ca();
    const cert = new X509Certificate(issued.certPem);
    expect(cert.ca).toBe(true);
    expect(cert.checkIssued(cert)).toBe(true);
    expect(cert.verify(cert.publicKey)).toBe(true);
    expect(cert.subject).toBe("CN=oooi test CA");
    expect(Date.parse(cert.validFrom)).toBe(T0 - 60_000);
    expect(Date.parse(cert.validTo)).toBe(T0 + 365 * DAY);
    expect(issued).toMatchObject({ notBefore: T0 - 60_000, notAfter: T0 + 365 * DAY });
    expect(cert.keyUsage).toBeUndefined(); // Node reports extended key usage here; a CA has none
  });

  test("a serving certificate names the xDS Service's DNS names and is signed by the CA", async () => {
    const authority = await ca();
    const loaded = await loadCa(authority.certPem, authority.keyPem);
    const names = ["oooi-xds", "oooi-xds.oooi-system", "oooi-xds.oooi-system.svc"];
    const leaf = await issueLeaf(
      loaded,
      { kind: "server", commonName: "oooi-xds", dnsNames: names },
      { now: T0 + DAY, lifetimeMs: 30 * DAY },
    );
    const cert = new X509Certificate(leaf.certPem);
    const caCert = new X509Certificate(authority.certPem);
    expect(cert.ca).toBe(false);
    expect(cert.checkIssued(caCert)).toBe(true);
    expect(cert.verify(caCert.publicKey)).toBe(true);
    expect(cert.subjectAltName).toBe(names.map((n) => `DNS:${n}`).join(", "));
    expect(cert.keyUsage).toEqual(["1.3.6.1.5.5.7.3.1"]); // serverAuth only
    expect(cert.checkHost("oooi-xds.oooi-system.svc")).toBe("oooi-xds.oooi-system.svc");
    expect(cert.checkHost("other.oooi-system.svc")).toBeUndefined();
    expect(leaf.notAfter - leaf.notBefore).toBe(30 * DAY + 60_000);
  });

  test("a client certificate carries exactly one URI SAN and is for client auth only", async () => {
    const authority = await ca();
    const loaded = await loadCa(authority.certPem, authority.keyPem);
    const uri = nodeGroupUri("tenant-a", "vlan100-proxy");
    const leaf = await issueLeaf(loaded, { kind: "client", uri }, { now: T0, lifetimeMs: DAY });
    const cert = new X509Certificate(leaf.certPem);
    expect(cert.subjectAltName).toBe(`URI:${uri}`);
    expect(cert.keyUsage).toEqual(["1.3.6.1.5.5.7.3.2"]);
    expect(cert.checkIssued(new X509Certificate(authority.certPem))).toBe(true);
    expect(cert.checkPrivateKey(createPrivateKey(leaf.keyPem))).toBe(true);
  });

  test("two CAs share nothing: a leaf of one does not verify under the other", async () => {
    const [a, b] = await Promise.all([ca(), ca()]);
    const leaf = await issueLeaf(
      await loadCa(a.certPem, a.keyPem),
      { kind: "client", uri: ADMIN_URI },
      { now: T0, lifetimeMs: DAY },
    );
    const cert = new X509Certificate(leaf.certPem);
    expect(cert.verify(new X509Certificate(b.certPem).publicKey)).toBe(false);
    expect(new X509Certificate(a.certPem).serialNumber).not.toBe(new X509Certificate(b.certPem).serialNumber);
  });

  test("loading a leaf as the CA, or a key that is not PKCS #8, is refused with a message", async () => {
    const authority = await ca();
    const leaf = await issueLeaf(
      await loadCa(authority.certPem, authority.keyPem),
      { kind: "client", uri: ADMIN_URI },
      { now: T0, lifetimeMs: DAY },
    );
    await expect(loadCa(leaf.certPem, leaf.keyPem)).rejects.toThrow(/CN=spiffe:\/\/oooi\/admin is not a CA/);
    await expect(loadCa(authority.certPem, "not a key")).rejects.toThrow();
  });

  test("a real TLS handshake: the server certificate verifies for its name, the client's is accepted", async () => {
    const authority = await ca(Date.now());
    const loaded = await loadCa(authority.certPem, authority.keyPem);
    const validity = { now: Date.now(), lifetimeMs: DAY };
    const server = await issueLeaf(loaded, { kind: "server", commonName: "xds", dnsNames: ["localhost"] }, validity);
    const client = await issueLeaf(loaded, { kind: "client", uri: nodeGroupUri("ns", "p") }, validity);
    const tls = createServer({
      cert: server.certPem,
      key: server.keyPem,
      ca: authority.certPem,
      requestCert: true,
      rejectUnauthorized: true,
    });
    tls.listen(0, "127.0.0.1");
    await once(tls, "listening");
    const peer = once(tls, "secureConnection") as Promise<[TLSSocket]>;
    const port = (tls.address() as { port: number }).port;
    const socket = connect({
      host: "127.0.0.1",
      port,
      servername: "localhost",
      ca: authority.certPem,
      cert: client.certPem,
      key: client.keyPem,
    });
    await once(socket, "secureConnect");
    const [accepted] = await peer;
    expect(socket.authorized).toBe(true);
    expect(accepted.authorized).toBe(true);
    expect(accepted.getPeerCertificate().subjectaltname).toBe("URI:spiffe://oooi/ns/ns/p");
    socket.destroy();
    accepted.destroy();
    tls.close();
  });
});

describe("rotation at two thirds of the lifetime", () => {
  const cert = { notBefore: T0, notAfter: T0 + 30 * DAY };
  it.each([
    { name: "none yet", cert: undefined, now: T0, due: true },
    { name: "fresh", cert, now: T0 + DAY, due: false },
    { name: "just before two thirds", cert, now: T0 + 20 * DAY - 1, due: false },
    { name: "at two thirds", cert, now: T0 + 20 * DAY, due: true },
    { name: "expired", cert, now: T0 + 31 * DAY, due: true },
    { name: "not valid yet (issued by a clock ahead of ours)", cert, now: T0 - 1, due: true },
  ])("$name → $due", ({ cert: c, now, due }) => {
    expect(needsRotation(c, now)).toBe(due);
  });

  test("the due instant of an issued certificate is two thirds into its own validity", async () => {
    const issued = await ca();
    expect(rotationDueAt(issued)).toBe(issued.notBefore + Math.floor(((365 * DAY + 60_000) * 2) / 3));
  });
});

describe("kubernetes.io/tls Secrets", () => {
  test("round trip: what is written reads back with its validity", async () => {
    const authority = await ca();
    const data = tlsSecretData(authority, authority.certPem);
    expect(Object.keys(data).sort()).toEqual(["ca.crt", "tls.crt", "tls.key"]);
    expect(readTlsSecret(data)).toEqual(authority);
  });

  it.each([
    { name: "no Secret", data: undefined },
    { name: "no key", data: { "tls.crt": "eA==" } },
    { name: "garbage certificate", data: { "tls.crt": Buffer.from("nope").toString("base64"), "tls.key": "eA==" } },
  ])("$name reads as nothing (a new certificate is issued)", ({ data }) => {
    expect(readTlsSecret(data)).toBeUndefined();
  });
});

describe("SPIFFE identities", () => {
  it.each([
    { uri: "spiffe://oooi/admin", identity: { kind: "admin" } },
    { uri: "spiffe://oooi/ns/tenant-a/vlan100-proxy", identity: { kind: "group", group: "tenant-a/vlan100-proxy" } },
    { uri: "spiffe://other/ns/tenant-a/vlan100-proxy", identity: undefined },
    { uri: "spiffe://oooi/ns/tenant-a", identity: undefined },
    { uri: "spiffe://oooi/ns/tenant-a/p/extra", identity: undefined },
    { uri: "spiffe://oooi/ns/Tenant/p", identity: undefined },
    { uri: "spiffe://oooi/ns//p", identity: undefined },
    { uri: "spiffe://oooi/admin/", identity: undefined },
    { uri: "https://oooi/admin", identity: undefined },
  ])("$uri", ({ uri, identity }) => {
    expect(parseIdentityUri(uri)).toEqual(identity);
  });

  test("what nodeGroupUri writes, parseIdentityUri reads", () => {
    expect(parseIdentityUri(nodeGroupUri("a", "b"))).toEqual({ kind: "group", group: "a/b" });
  });
});
