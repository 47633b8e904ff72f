// Authorization by identity on the xDS port (docs/reference.md "Identity on the xDS port"), over
// real mTLS with certificates of the operator's PKI: a client receives only the node group its
// certificate's URI SAN names; a refused client receives nothing and changes no status; CSDS,
// oooi.debug.v1 and reflection need spiffe://oooi/admin; a rotated server certificate and CA are
// used for new connections without a restart.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PeerCertificate } from "node:tls";
import { credentials, Metadata, status as GrpcStatus, type ChannelCredentials, type ServiceError } from "@grpc/grpc-js";
import { afterAll, afterEach, beforeAll, describe, expect, it, test } from "vitest";
import { issueCa, issueLeaf, loadCa, type IssuedCertificate, type LoadedCa } from "../../../src/pki/issue.js";
import { ADMIN_URI, nodeGroupUri } from "../../../src/pki/spiffe.js";
import { DebugClient, DebugRefusedError } from "../../../src/xds/introspect/debug-client.js";
import { RotatingServerCredentials, serverCredentialsFromFiles } from "../../../src/xds/server/tls.js";
import {
  adminDenial,
  identitiesOf,
  identityKey,
  nodeGroupDenial,
  type TokenCheck,
} from "../../../src/xds/server/authz.js";
import { NO_IDENTITY } from "../../../src/xds/client-status.js";
import type { Logger } from "../../../src/util/logger.js";
import { LISTENER_TYPE_URL } from "../../../src/xds/resource/type-urls.js";
import { ManualClock } from "../../support/manual-clock.js";
import { openDelta, openSotw, type SotwStream } from "../../support/envoy/raw.js";
import {
  closeAll,
  envoy,
  fetchClientStatus,
  healthCheck,
  reflect,
  startIntrospectRig,
} from "../introspect/fixtures.js";
import type { IntrospectRig } from "../introspect/fixtures.js";
import { ALPHA, BETA, publish, rendered, versionsOf } from "./fixtures.js";

const GROUP_A = "tenant-a/infra-proxy";
const GROUP_B = "tenant-b/infra-proxy";
const DAY = 86_400_000;

interface Authority {
  readonly issued: IssuedCertificate;
  readonly loaded: LoadedCa;
}

async function authority(name: string): Promise<Authority> {
  const issued = await issueCa(name, { now: Date.now(), lifetimeMs: DAY });
  return { issued, loaded: await loadCa(issued.certPem, issued.keyPem) };
}

async function client(ca: Authority, uri: string): Promise<IssuedCertificate> {
  return issueLeaf(ca.loaded, { kind: "client", uri }, { now: Date.now(), lifetimeMs: DAY });
}

async function serving(ca: Authority): Promise<IssuedCertificate> {
  return issueLeaf(
    ca.loaded,
    { kind: "server", commonName: "oooi-xds", dnsNames: ["localhost"] },
    {
      now: Date.now(),
      lifetimeMs: DAY,
    },
  );
}

function creds(trust: Authority, leaf?: IssuedCertificate): ChannelCredentials {
  return credentials.createSsl(
    Buffer.from(trust.issued.certPem),
    leaf === undefined ? null : Buffer.from(leaf.keyPem),
    leaf === undefined ? null : Buffer.from(leaf.certPem),
  );
}

let ca: Authority;
let stranger: Authority;
let certA: IssuedCertificate;
let adminCert: IssuedCertificate;
let strangerA: IssuedCertificate;
let rig: IntrospectRig | undefined;
const streams: SotwStream[] = [];
const debugClients: DebugClient[] = [];
const dir = mkdtempSync(join(tmpdir(), "oooi-authz-"));

beforeAll(async () => {
  [ca, stranger] = await Promise.all([authority("oooi test CA"), authority("stranger CA")]);
  [certA, adminCert, strangerA] = await Promise.all([
    client(ca, nodeGroupUri("tenant-a", "infra-proxy")),
    client(ca, ADMIN_URI),
    client(stranger, nodeGroupUri("tenant-a", "infra-proxy")),
  ]);
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});
afterEach(async () => {
  closeAll();
  for (const s of streams.splice(0)) s.close();
  for (const c of debugClients.splice(0)) c.close();
  await rig?.close();
  rig = undefined;
});

async function start(credentialsOverride?: RotatingServerCredentials): Promise<IntrospectRig> {
  const server = await serving(ca);
  rig = await startIntrospectRig({
    credentials:
      credentialsOverride ??
      new RotatingServerCredentials({ cert: server.certPem, key: server.keyPem, ca: ca.issued.certPem }),
    requireIdentity: true,
  });
  publish(rig.cache, GROUP_A, rendered([ALPHA]));
  publish(rig.cache, GROUP_B, rendered([BETA]));
  return rig;
}

const address = (r: IntrospectRig): string => `localhost:${String(r.server.port)}`;

function sotw(r: IntrospectRig, c: ChannelCredentials): SotwStream {
  const s = openSotw(address(r), undefined, c);
  streams.push(s);
  return s;
}

describe("identities in a peer certificate", () => {
  const cert = (subjectaltname?: string): PeerCertificate => ({ subjectaltname }) as PeerCertificate;
  it.each([
    { name: "no certificate", cert: undefined, identities: [] },
    { name: "an empty one (grpc-js reports {})", cert: {} as PeerCertificate, identities: [] },
    { name: "DNS names only", cert: cert("DNS:a, DNS:b"), identities: [] },
    { name: "a node group", cert: cert("URI:spiffe://oooi/ns/a/p"), identities: [{ kind: "group", group: "a/p" }] },
    {
      name: "the admin next to a DNS name",
      cert: cert("DNS:x, URI:spiffe://oooi/admin"),
      identities: [{ kind: "admin" }],
    },
    { name: "another trust domain", cert: cert("URI:spiffe://evil/ns/a/p"), identities: [] },
    // Only a URI SAN names an identity: a DNS or email SAN spelled like one is just a name.
    { name: "a DNS SAN spelled as the admin URI", cert: cert("DNS:spiffe://oooi/admin"), identities: [] },
    { name: "an email SAN spelled as a group URI", cert: cert("email:spiffe://oooi/ns/a/p"), identities: [] },
    {
      name: "a group and the admin",
      cert: cert("URI:spiffe://oooi/ns/a/p, IP Address:127.0.0.1, URI:spiffe://oooi/admin"),
      identities: [{ kind: "group", group: "a/p" }, { kind: "admin" }],
    },
  ])("$name", ({ cert: c, identities }) => {
    expect(identitiesOf(c)).toEqual(identities);
  });

  // What the server remembers of a client is filed under this key (client-status.ts clientKey).
  test("the identity key: the certificate's oooi URIs in one order, NO_IDENTITY without any", () => {
    expect(identityKey(undefined)).toBe(NO_IDENTITY);
    expect(identityKey(cert("DNS:a"))).toBe(NO_IDENTITY);
    expect(identityKey(cert("URI:spiffe://oooi/ns/a/p"))).toBe("spiffe://oooi/ns/a/p");
    const both = identityKey(cert("URI:spiffe://oooi/ns/a/p, URI:spiffe://oooi/admin"));
    expect(both).toBe("spiffe://oooi/admin spiffe://oooi/ns/a/p");
    expect(identityKey(cert("URI:spiffe://oooi/admin, URI:spiffe://oooi/ns/a/p"))).toBe(both);
    expect(identityKey(cert("URI:spiffe://oooi/ns/a/q"))).not.toBe(identityKey(cert("URI:spiffe://oooi/ns/a/p")));
  });

  test("a certificate with several identities is allowed what any one of them is allowed", () => {
    const both = [{ kind: "group", group: "a/p" }, { kind: "admin" }] as const;
    expect(nodeGroupDenial(both, "a/p")).toBeUndefined();
    expect(adminDenial(both, "/x.Y/Z")).toBeUndefined();
    expect(nodeGroupDenial([], "a/p")).toBe("a client without an oooi identity may not receive node group a/p");
  });

  it.each([
    { name: "its own group", cluster: "a/p", denied: false },
    { name: "another group", cluster: "b/p", denied: true },
    { name: "an empty node.cluster", cluster: "", denied: true },
  ])("a node-group identity asking for $name", ({ cluster, denied }) => {
    expect(nodeGroupDenial([{ kind: "group", group: "a/p" }], cluster) !== undefined).toBe(denied);
  });

  test("the admin receives no node group; a node group may not use admin services", () => {
    expect(nodeGroupDenial([{ kind: "admin" }], "a/p")).toBe("the administrator may not receive node group a/p");
    expect(adminDenial([{ kind: "group", group: "a/p" }], "/x.Y/Z")).toMatch(
      /^node group a\/p may not call \/x\.Y\/Z: it needs the administrator identity/,
    );
    expect(adminDenial([{ kind: "admin" }], "/x.Y/Z")).toBeUndefined();
  });
});

describe("discovery streams are authorized by the certificate, not by node.cluster", () => {
  test("group A's certificate asking for A gets A's configuration", async () => {
    const r = await start();
    const c = envoy(address(r), "envoy-a", GROUP_A, { credentials: creds(ca, certA) });
    await c.waitForVersions(versionsOf(r.cache, GROUP_A));
    expect(r.server.status.nodes().map((n) => n.node.cluster)).toEqual([GROUP_A]);
  });

  test("group A's certificate asking for B, even with a NACK, gets nothing of B and changes no status", async () => {
    const r = await start();
    const heard: string[] = [];
    for (const event of ["stream-open", "push", "ack", "nack"] as const)
      r.server.status.on(event, () => heard.push(event));
    for (const open of [openSotw, openDelta]) {
      const s = open(address(r), undefined, creds(ca, certA));
      const node = { id: "intruder", cluster: GROUP_B };
      if (open === openSotw)
        (s as SotwStream).send({
          node,
          type_url: LISTENER_TYPE_URL,
          version_info: "attacker",
          response_nonce: "n",
          error_detail: { code: 3, message: "the attacker's text" },
        });
      else (s as ReturnType<typeof openDelta>).send({ node, type_url: LISTENER_TYPE_URL });
      const end = await s.ended();
      expect(end.code).toBe(GrpcStatus.PERMISSION_DENIED);
      expect(end.details).toBe(`node group ${GROUP_A} may not receive node group ${GROUP_B}`);
      expect(s.received).toEqual([]);
      s.close();
    }
    expect(heard).toEqual([]);
    expect(r.server.status.nodes()).toEqual([]);
    expect(r.server.status.streams()).toEqual([]);
    expect(r.server.status.history()).toEqual([]);
  });

  test("a stream opened as A that later names B is ended, and B's status never hears of it", async () => {
    const r = await start();
    const s = sotw(r, creds(ca, certA));
    s.send({ node: { id: "envoy-a", cluster: GROUP_A }, type_url: LISTENER_TYPE_URL });
    const first = await s.next();
    s.send({
      node: { id: "envoy-a", cluster: GROUP_B },
      type_url: LISTENER_TYPE_URL,
      version_info: first.versionInfo,
      response_nonce: first.nonce,
      error_detail: { code: 3, message: "the attacker's text" },
    });
    expect((await s.ended()).code).toBe(GrpcStatus.PERMISSION_DENIED);
    expect(new Set(r.server.status.history().map((p) => p.group))).toEqual(new Set([GROUP_A]));
    const nodes = r.server.status.nodes();
    expect(nodes.map((n) => n.node.cluster)).toEqual([GROUP_A]);
    expect(JSON.stringify(nodes)).not.toContain("attacker");
  });

  // A client may send its next requests without waiting for an answer: once one of them is refused,
  // the stream is over, and a request already on the wire behind it must not reach the server.
  test("requests pipelined behind a refused one reach no session, even when they name A", async () => {
    const r = await start();
    const heard: string[] = [];
    for (const event of ["stream-open", "push", "ack", "nack"] as const)
      r.server.status.on(event, () => heard.push(event));
    const s = sotw(r, creds(ca, certA));
    s.send({ node: { id: "intruder", cluster: GROUP_B }, type_url: LISTENER_TYPE_URL });
    for (let i = 0; i < 5; i++) s.send({ node: { id: "pipelined", cluster: GROUP_A }, type_url: LISTENER_TYPE_URL });
    expect(await s.ended()).toEqual({
      code: GrpcStatus.PERMISSION_DENIED,
      details: `node group ${GROUP_A} may not receive node group ${GROUP_B}`,
    });
    // A client let in after it: once it has its configuration, the server has long read the refused
    // stream's bytes, and the only node it knows is the one let in.
    const after = envoy(address(r), "envoy-a", GROUP_A, { credentials: creds(ca, certA) });
    await after.waitForVersions(versionsOf(r.cache, GROUP_A));
    expect(s.received).toEqual([]);
    expect(r.server.status.nodes().map((n) => n.node.id)).toEqual(["envoy-a"]);
    expect(r.server.status.streams()).toHaveLength(1);
    expect(heard.filter((e) => e === "stream-open")).toHaveLength(1);
  });

  test("no certificate, an unknown CA's certificate, or no TLS: no stream at all", async () => {
    const r = await start();
    const attempts = [creds(ca), creds(ca, strangerA), credentials.createInsecure()].map((c) => {
      const s = sotw(r, c);
      s.send({ node: { id: "x", cluster: GROUP_A }, type_url: LISTENER_TYPE_URL });
      return s.ended();
    });
    const ends = await Promise.all(attempts);
    expect(ends.map((e) => e.code)).toEqual([GrpcStatus.UNAVAILABLE, GrpcStatus.UNAVAILABLE, GrpcStatus.UNAVAILABLE]);
    expect(streams.every((s) => s.received.length === 0)).toBe(true);
    expect(r.server.status.nodes()).toEqual([]);
  });

  test("the administrator's certificate opens no discovery stream", async () => {
    const r = await start();
    const s = sotw(r, creds(ca, adminCert));
    s.send({ node: { id: "admin", cluster: GROUP_A }, type_url: LISTENER_TYPE_URL });
    const end = await s.ended();
    expect(end).toEqual({
      code: GrpcStatus.PERMISSION_DENIED,
      details: "the administrator may not open a discovery stream",
    });
  });
});

describe("introspection needs the administrator", () => {
  test("CSDS, oooi.debug.v1 and reflection refuse a node group's certificate and answer the admin", async () => {
    const r = await start();
    const c = envoy(address(r), "envoy-a", GROUP_A, { credentials: creds(ca, certA) });
    await c.waitForVersions(versionsOf(r.cache, GROUP_A));

    const asGroup = new DebugClient({ address: address(r), credentials: creds(ca, certA) });
    const asAdmin = new DebugClient({ address: address(r), credentials: creds(ca, adminCert) });
    debugClients.push(asGroup, asAdmin);
    await expect(asGroup.listNodes()).rejects.toThrow(
      /node group tenant-a\/infra-proxy may not call \/oooi\.debug\.v1\./,
    );
    expect((await asAdmin.listNodes()).map((n) => n.id)).toEqual(["envoy-a"]);

    await expect(fetchClientStatus(address(r), {}, creds(ca, certA))).rejects.toMatchObject({
      code: GrpcStatus.PERMISSION_DENIED,
    });
    expect((await fetchClientStatus(address(r), {}, creds(ca, adminCert))).map((x) => x.node.id)).toEqual(["envoy-a"]);

    await expect(reflect(address(r), { list_services: "" }, creds(ca, certA))).rejects.toMatchObject({
      code: GrpcStatus.PERMISSION_DENIED,
    });
    expect(await reflect(address(r), { list_services: "" }, creds(ca, adminCert))).toHaveProperty(
      "list_services_response",
    );
  });

  // Only the operator checks tokens (docs/security.md); serve's port, given none, takes a bearer
  // token for nothing: the call is refused as it would be without one.
  test("without a token check, a bearer token lets no certificate past its identity", async () => {
    const r = await start();
    const asGroup = new DebugClient({ address: address(r), credentials: creds(ca, certA), token: "anything" });
    debugClients.push(asGroup);
    const e: unknown = await asGroup.listNodes().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(e).toBeInstanceOf(DebugRefusedError);
    expect((e as DebugRefusedError).code).toBe(GrpcStatus.PERMISSION_DENIED);
    expect((e as DebugRefusedError).details).toMatch(
      /^node group tenant-a\/infra-proxy may not call \/oooi\.debug\.v1\.DebugService\/ListNodes:/,
    );
  });

  test("health stays open to any client the CA admits", async () => {
    const r = await start();
    expect(await healthCheck(address(r), "", creds(ca, certA))).toBe("SERVING");
  });
});

describe("certificate rotation without a restart", () => {
  test("a new server certificate and CA serve new connections; open streams stay", async () => {
    const first = await serving(ca);
    const rotating = new RotatingServerCredentials({ cert: first.certPem, key: first.keyPem, ca: ca.issued.certPem });
    const r = await start(rotating);
    const before = envoy(address(r), "envoy-a", GROUP_A, { credentials: creds(ca, certA) });
    await before.waitForVersions(versionsOf(r.cache, GROUP_A));

    // The next CA: its bundle holds both, as during a CA rotation, so old client certificates still verify.
    const next = await authority("oooi test CA 2");
    const nextServer = await serving(next);
    rotating.update({
      cert: nextServer.certPem,
      key: nextServer.keyPem,
      ca: next.issued.certPem + ca.issued.certPem,
    });
    const nextA = await client(next, nodeGroupUri("tenant-a", "infra-proxy"));
    const after = envoy(address(r), "envoy-a-2", GROUP_A, { credentials: creds(next, nextA) });
    await after.waitForVersions(versionsOf(r.cache, GROUP_A));
    expect(r.server.streamCount()).toBe(2);

    // A client that trusts only the old CA no longer accepts the server's new certificate.
    const stale = sotw(r, creds(ca, certA));
    stale.send({ node: { id: "stale", cluster: GROUP_A }, type_url: LISTENER_TYPE_URL });
    expect((await stale.ended()).code).toBe(GrpcStatus.UNAVAILABLE);
  });

  test("certificate files (--xds-tls-*) are read again on the clock and a renewed one is used", async () => {
    const file = (n: string): string => join(dir, n);
    const write = (leaf: IssuedCertificate, trust: Authority): void => {
      writeFileSync(file("tls.crt"), leaf.certPem);
      writeFileSync(file("tls.key"), leaf.keyPem);
      writeFileSync(file("ca.crt"), trust.issued.certPem);
    };
    write(await serving(ca), ca);
    const clock = new ManualClock();
    const fromFiles = serverCredentialsFromFiles(
      { cert: file("tls.crt"), key: file("tls.key"), ca: file("ca.crt") },
      10_000,
      clock,
    );
    const r = await start(fromFiles);
    const old = envoy(address(r), "envoy-a", GROUP_A, { credentials: creds(ca, certA) });
    await old.waitForVersions(versionsOf(r.cache, GROUP_A));

    const next = await authority("renewed CA");
    write(await serving(next), next);
    const nextA = await client(next, nodeGroupUri("tenant-a", "infra-proxy"));
    clock.advance(9_999); // not yet read again: a client of the new CA is refused
    const early = sotw(r, creds(next, nextA));
    early.send({ node: { id: "early", cluster: GROUP_A }, type_url: LISTENER_TYPE_URL });
    expect((await early.ended()).code).toBe(GrpcStatus.UNAVAILABLE);

    clock.advance(1);
    const renewed = envoy(address(r), "envoy-a-2", GROUP_A, { credentials: creds(next, nextA) });
    await renewed.waitForVersions(versionsOf(r.cache, GROUP_A));
    fromFiles.close();
    expect(clock.pending).toBe(0);
  });
});

// A node group is a whole `<namespace>/<name>`: no prefix, suffix or case variant of it is the same group
// (a certificate for ns/x-proxy must never receive ns/x-proxy-y-proxy).
describe("a node group is matched whole", () => {
  it.each([
    { identity: "ns/x-proxy", cluster: "ns/x-proxy", denied: false },
    { identity: "ns/x-proxy", cluster: "ns/x-proxy-y-proxy", denied: true },
    { identity: "ns/x-proxy", cluster: "ns/x-proxy/", denied: true },
    { identity: "ns/x-proxy", cluster: "ns/x-proxyz", denied: true },
    { identity: "ns/x-proxy", cluster: "ns/x-prox", denied: true },
    { identity: "ns/x-proxy", cluster: "ns/", denied: true },
    { identity: "ns/x-proxy", cluster: "ns", denied: true },
    { identity: "ns/x-proxy", cluster: "ns/x", denied: true },
    { identity: "ns/x-proxy", cluster: "ns/X-PROXY", denied: true },
    { identity: "ns/x-proxy", cluster: "ns2/x-proxy", denied: true },
    { identity: "ns/x-proxy", cluster: "other-ns/x-proxy", denied: true },
    { identity: "ns/x-proxy", cluster: " ns/x-proxy", denied: true },
    { identity: "ns/x-proxy", cluster: "ns/x-proxy ", denied: true },
    { identity: "ns/x-proxy-y-proxy", cluster: "ns/x-proxy", denied: true },
  ])("a certificate for $identity asking for $cluster", ({ identity, cluster, denied }) => {
    const denial = nodeGroupDenial([{ kind: "group", group: identity }], cluster);
    if (denied) expect(denial).toBe(`node group ${identity} may not receive node group ${cluster}`);
    else expect(denial).toBeUndefined();
  });

  test("of several identities, only an exact one admits", () => {
    const identities = [{ kind: "admin" } as const, { kind: "group", group: "ns/x" } as const];
    expect(nodeGroupDenial(identities, "ns/x-proxy")).toBe(
      "the administrator, node group ns/x may not receive node group ns/x-proxy",
    );
    expect(nodeGroupDenial([...identities, { kind: "group", group: "ns/x-proxy" }], "ns/x-proxy")).toBeUndefined();
  });

  test("over mTLS, a certificate whose group is a prefix of the requested one is refused and receives nothing", async () => {
    const r = await start();
    const prefixCert = await client(ca, nodeGroupUri("tenant-a", "infra"));
    const s = sotw(r, creds(ca, prefixCert));
    s.send({ node: { id: "prefix", cluster: GROUP_A }, type_url: LISTENER_TYPE_URL });
    const end = await s.ended();
    expect(end).toEqual({
      code: GrpcStatus.PERMISSION_DENIED,
      details: `node group tenant-a/infra may not receive node group ${GROUP_A}`,
    });
    expect(s.received).toEqual([]);
    expect(r.server.status.nodes()).toEqual([]);
  });
});

describe("a bearer token on the administrative services (the operator's port: client certificate optional)", () => {
  // The token check is the operator's TokenReview + SubjectAccessReview (test/kube/debug-token-auth.test.ts
  // runs it against a real API server); here, what the port does with its answers.
  const asked: string[] = [];
  const tokens: TokenCheck = (authorization) => {
    asked.push(authorization ?? "");
    if (authorization === "Bearer good") return Promise.resolve({ allowed: true, user: "jane" });
    if (authorization === "Bearer busy") return Promise.resolve({ allowed: false, status: 503, reason: "busy" });
    if (authorization === "Bearer review-failed")
      return Promise.resolve({ allowed: false, status: 500, reason: "Access review failed" });
    if (authorization === "Bearer throws") return Promise.reject(new Error("the API server went away"));
    if (authorization === "Bearer nobody")
      return Promise.resolve({ allowed: false, status: 403, reason: 'Forbidden: user "nobody" may not debug' });
    return Promise.resolve({ allowed: false, status: 401, reason: "Unauthorized: not accepted" });
  };
  const logged: { level: "info" | "warn"; obj: object; msg: string }[] = [];
  const logger: Logger = {
    debug() {},
    error() {},
    info: (obj, msg) => logged.push({ level: "info", obj, msg }),
    warn: (obj, msg) => logged.push({ level: "warn", obj, msg }),
  };
  async function startOptional(): Promise<IntrospectRig> {
    const server = await serving(ca);
    rig = await startIntrospectRig({
      logger,
      credentials: new RotatingServerCredentials(
        { cert: server.certPem, key: server.keyPem, ca: ca.issued.certPem },
        { clientCertificate: "optional" },
      ),
      requireIdentity: true,
      tokens,
    });
    return rig;
  }
  const debug = (r: IntrospectRig, c: ChannelCredentials, token?: string): DebugClient => {
    const d = new DebugClient({ address: address(r), credentials: c, ...(token === undefined ? {} : { token }) });
    debugClients.push(d);
    return d;
  };
  const refusedWith = async (d: DebugClient): Promise<{ code: number; details: string }> => {
    const e: unknown = await d.listNodes().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(e).toBeInstanceOf(DebugRefusedError);
    return { code: (e as DebugRefusedError).code, details: (e as DebugRefusedError).details };
  };

  it("the admin certificate needs no token; a client without one is let in by an allowed token only", async () => {
    asked.length = 0;
    const r = await startOptional();
    expect(await debug(r, creds(ca, adminCert)).listNodes()).toEqual([]);
    expect(asked).toEqual([]);
    expect(await debug(r, creds(ca), "good").listNodes()).toEqual([]);
    expect(asked).toEqual(["Bearer good"]);
    expect(await refusedWith(debug(r, creds(ca), "nobody"))).toEqual({
      code: GrpcStatus.PERMISSION_DENIED,
      details: 'Forbidden: user "nobody" may not debug (/oooi.debug.v1.DebugService/ListNodes)',
    });
    expect((await refusedWith(debug(r, creds(ca), "made-up"))).code).toBe(GrpcStatus.UNAUTHENTICATED);
    // Too many reviews in flight: RESOURCE_EXHAUSTED, a retryable error rather than a refusal.
    await expect(debug(r, creds(ca), "busy").listNodes()).rejects.toThrow(
      "busy (/oooi.debug.v1.DebugService/ListNodes)",
    );
    expect((await refusedWith(debug(r, creds(ca)))).details).toMatch(/^a client without an oooi identity may not call/);
  });

  // With a token, CSDS answers as oooi.debug.v1 does; its raw gRPC status is what a client sees.
  const csdsWithToken = (r: IntrospectRig, token: string): Promise<unknown> =>
    fetchClientStatus(
      address(r),
      {},
      credentials.combineChannelCredentials(
        creds(ca),
        credentials.createFromMetadataGenerator((_p, done) => {
          const m = new Metadata();
          m.set("authorization", `Bearer ${token}`);
          done(null, m);
        }),
      ),
    ).then(
      () => ({ code: GrpcStatus.OK }),
      (e: unknown) => ({ code: (e as ServiceError).code, details: (e as ServiceError).details }),
    );
  const CSDS_PATH = "/envoy.service.status.v3.ClientStatusDiscoveryService/FetchClientStatus";

  // A client tells "who are you" (UNAUTHENTICATED: get a token), "no" (PERMISSION_DENIED: get a
  // binding), "try again" (RESOURCE_EXHAUSTED: too many reviews in flight) and "the server failed"
  // (INTERNAL) apart by the code; no failure of the check ever lets a call in.
  it("what the token check answers decides the call's code, and a failing check fails closed", async () => {
    const r = await startOptional();
    expect(await csdsWithToken(r, "good")).toEqual({ code: GrpcStatus.OK });
    expect(await csdsWithToken(r, "made-up")).toEqual({
      code: GrpcStatus.UNAUTHENTICATED,
      details: `Unauthorized: not accepted (${CSDS_PATH})`,
    });
    expect(await csdsWithToken(r, "nobody")).toEqual({
      code: GrpcStatus.PERMISSION_DENIED,
      details: `Forbidden: user "nobody" may not debug (${CSDS_PATH})`,
    });
    expect(await csdsWithToken(r, "busy")).toEqual({
      code: GrpcStatus.RESOURCE_EXHAUSTED,
      details: `busy (${CSDS_PATH})`,
    });
    expect(await csdsWithToken(r, "review-failed")).toEqual({
      code: GrpcStatus.INTERNAL,
      details: `Access review failed (${CSDS_PATH})`,
    });
    expect(await csdsWithToken(r, "throws")).toEqual({
      code: GrpcStatus.INTERNAL,
      details: "token check failed: the API server went away",
    });
  });

  // docs/security.md: a refused call is logged at warn ("xDS call refused", with the peer, the method
  // and the reason); each call let in by a token is logged at info with the user.
  it("a call let in by a token is logged with its user; a refused one with its peer, method and reason", async () => {
    const r = await startOptional();
    logged.length = 0;
    expect(await debug(r, creds(ca, adminCert)).listNodes()).toEqual([]);
    expect(logged).toEqual([]);
    expect(await debug(r, creds(ca), "good").listNodes()).toEqual([]);
    const peer = expect.stringMatching(/:\d+$/) as unknown;
    const method = "/oooi.debug.v1.DebugService/ListNodes";
    expect(logged).toEqual([{ level: "info", obj: { peer, method, user: "jane" }, msg: "debug call by token" }]);
    logged.length = 0;
    await refusedWith(debug(r, creds(ca), "nobody"));
    const s = sotw(r, creds(ca, certA));
    s.send({ node: { id: "intruder", cluster: GROUP_B }, type_url: LISTENER_TYPE_URL });
    await s.ended();
    expect(logged).toEqual([
      {
        level: "warn",
        obj: { peer, method, reason: `Forbidden: user "nobody" may not debug (${method})` },
        msg: "xDS call refused",
      },
      {
        level: "warn",
        obj: {
          peer,
          method: "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources",
          reason: `node group ${GROUP_A} may not receive node group ${GROUP_B}`,
        },
        msg: "xDS call refused",
      },
    ]);
  });

  it("a certificate the CA did not sign gives no identity, even one naming the admin", async () => {
    const r = await startOptional();
    const strangerAdmin = await client(stranger, ADMIN_URI);
    expect(await refusedWith(debug(r, creds(ca, strangerAdmin)))).toMatchObject({
      code: GrpcStatus.PERMISSION_DENIED,
      details: expect.stringMatching(/^a client without an oooi identity may not call/) as unknown,
    });
    const s = sotw(r, creds(ca, strangerA));
    s.send({ node: { id: "x", cluster: GROUP_A }, type_url: LISTENER_TYPE_URL });
    expect((await s.ended()).code).toBe(GrpcStatus.PERMISSION_DENIED);
    expect(s.received).toEqual([]);
  });

  it("a discovery stream never asks about a token", async () => {
    asked.length = 0;
    const r = await startOptional();
    const withToken = credentials.combineChannelCredentials(
      creds(ca),
      credentials.createFromMetadataGenerator((_p, done) => {
        const m = new Metadata();
        m.set("authorization", "Bearer good");
        done(null, m);
      }),
    );
    const s = sotw(r, withToken);
    s.send({ node: { id: "x", cluster: GROUP_A }, type_url: LISTENER_TYPE_URL });
    expect(await s.ended()).toEqual({
      code: GrpcStatus.PERMISSION_DENIED,
      details: "a client without an oooi identity may not open a discovery stream",
    });
    expect(asked).toEqual([]);
    expect(r.server.status.nodes()).toEqual([]);
  });
});
