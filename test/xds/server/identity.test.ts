// What the server remembers of a client (ACK state across reconnects, status, CSDS) belongs to the
// verified identity that made it: a client of tenant A declaring tenant B's node.id and B's ACKed
// versions (both visible on the status page) is a fresh client of A, and B's status never moves.
// Over real mTLS with certificates of the operator's PKI (issue 25, rows 1 and 2).
import { TLSSocket } from "node:tls";
import { afterEach, beforeAll, describe, expect, test } from "vitest";
import type { IssuedCertificate } from "../../../src/pki/issue.js";
import { ADMIN_URI, nodeGroupUri } from "../../../src/pki/spiffe.js";
import { CLUSTER_TYPE_URL, ENDPOINT_TYPE_URL, LISTENER_TYPE_URL } from "../../../src/xds/resource/type-urls.js";
import { openSotw, type SotwStream } from "../../support/envoy/raw.js";
import { closeAll, envoy, eventually, fetchClientStatus, startIntrospectRig } from "../introspect/fixtures.js";
import type { IntrospectRig } from "../introspect/fixtures.js";
import { ALPHA, BETA, publish, rendered, versionsOf } from "./fixtures.js";
import { authority, clientCert, clientCreds, mtlsServer, type Authority } from "./mtls-fixtures.js";

const GROUP_A = "tenant-a/infra-proxy";
const GROUP_B = "tenant-b/infra-proxy";

let ca: Authority;
let certA: IssuedCertificate;
let certB: IssuedCertificate;
let adminCert: IssuedCertificate;
let rig: IntrospectRig | undefined;
const streams: SotwStream[] = [];

beforeAll(async () => {
  ca = await authority("oooi test CA");
  [certA, certB, adminCert] = await Promise.all([
    clientCert(ca, nodeGroupUri("tenant-a", "infra-proxy")),
    clientCert(ca, nodeGroupUri("tenant-b", "infra-proxy")),
    clientCert(ca, ADMIN_URI),
  ]);
});
afterEach(async () => {
  closeAll();
  for (const s of streams.splice(0)) s.close();
  await rig?.close();
  rig = undefined;
});

async function start(): Promise<IntrospectRig> {
  rig = await startIntrospectRig({ credentials: await mtlsServer(ca), requireIdentity: true });
  publish(rig.cache, GROUP_A, rendered([ALPHA]));
  publish(rig.cache, GROUP_B, rendered([BETA]));
  return rig;
}

const address = (r: IntrospectRig): string => `localhost:${String(r.server.port)}`;

function asA(r: IntrospectRig): SotwStream {
  const s = openSotw(address(r), undefined, clientCreds(ca, certA));
  streams.push(s);
  return s;
}

/** Tenant B's Envoy, synced; returns the versions it ACKed, as /status.json shows them. */
async function connectB(r: IntrospectRig): Promise<{ close(): void; acked: (typeUrl: string) => string }> {
  const b = envoy(address(r), "envoy-b", GROUP_B, { credentials: clientCreds(ca, certB) });
  await b.waitForVersions(versionsOf(r.cache, GROUP_B));
  const acked = (typeUrl: string): string => {
    const node = r.server.status.node("envoy-b", GROUP_B);
    const v = node?.types.find((t) => t.typeUrl === typeUrl)?.lastAcked?.version;
    if (v === undefined) throw new Error(`envoy-b acked no ${typeUrl}`);
    return v;
  };
  return {
    close: () => {
      b.close();
    },
    acked,
  };
}

const namesOf = (r: IntrospectRig, group: string, typeUrl: string): string[] =>
  [...(r.cache.getSnapshot(group)?.types.get(typeUrl)?.resources.keys() ?? [])].sort();

describe("a replayed node id and version from another identity is an unknown version", () => {
  test.each([
    { when: "while B is connected", disconnect: false },
    { when: "after B disconnected", disconnect: true },
  ])("A's client claiming B's node.id and ACKed CDS version gets A's clusters only ($when)", async ({ disconnect }) => {
    const r = await start();
    const b = await connectB(r);
    const cdsVersion = b.acked(CLUSTER_TYPE_URL);
    if (disconnect) {
      b.close();
      await eventually(
        () => (r.server.status.nodes().every((n) => n.connectedStreams === 0) ? true : undefined),
        "B to disconnect",
      );
    }
    const s = asA(r);
    s.send({ node: { id: "envoy-b", cluster: GROUP_A }, type_url: CLUSTER_TYPE_URL, version_info: cdsVersion });
    const cds = await s.next();
    expect(cds.resources.map((x) => x.name).sort()).toEqual(namesOf(r, GROUP_A, CLUSTER_TYPE_URL));
    // The endpoints of B's clusters stay B's too.
    const bEndpoints = namesOf(r, GROUP_B, ENDPOINT_TYPE_URL);
    s.send({
      type_url: ENDPOINT_TYPE_URL,
      resource_names: bEndpoints,
      version_info: b.acked(ENDPOINT_TYPE_URL),
    });
    s.send({ type_url: CLUSTER_TYPE_URL, version_info: cds.versionInfo, response_nonce: cds.nonce });
    const eds = await s.next();
    expect(eds.typeUrl).toBe(ENDPOINT_TYPE_URL);
    expect(eds.resources).toEqual([]);
    expect(JSON.stringify(s.received)).not.toContain("10.128.2.");
  });
});

describe("one identity never changes how another's clients appear", () => {
  test("A's client claiming B's node.id and NACKing: B stays in B's group, synced, in status and CSDS", async () => {
    const r = await start();
    const b = await connectB(r);
    const s = asA(r);
    s.send({ node: { id: "envoy-b", cluster: GROUP_A }, type_url: LISTENER_TYPE_URL });
    const lds = await s.next();
    s.send({
      type_url: LISTENER_TYPE_URL,
      version_info: "",
      response_nonce: lds.nonce,
      error_detail: { code: 3, message: "the attacker's text" },
    });
    await eventually(
      () =>
        r.server.status.nodes().some((n) => n.node.cluster === GROUP_A && n.types.some((t) => t.lastNack))
          ? true
          : undefined,
      "A's NACK to be recorded",
    );
    const ofB = r.server.status.nodes().filter((n) => n.node.cluster === GROUP_B);
    expect(ofB.map((n) => n.node.id)).toEqual(["envoy-b"]);
    expect(ofB[0]?.types.every((t) => t.lastNack === undefined)).toBe(true);
    expect(ofB[0]?.connectedStreams).toBe(1);
    expect(b.acked(CLUSTER_TYPE_URL)).toBe(versionsOf(r.cache, GROUP_B).get(CLUSTER_TYPE_URL));
    expect(JSON.stringify(ofB)).not.toContain("attacker");
    // CSDS (administrator) reports two clients named envoy-b, each with its own group.
    const csds = await fetchClientStatus(address(r), {}, clientCreds(ca, adminCert));
    expect(csds.map((c) => `${c.node.id} ${c.node.cluster}`).sort()).toEqual([
      `envoy-b ${GROUP_A}`,
      `envoy-b ${GROUP_B}`,
    ]);
  });
});

// The interceptor reads the certificate to authorize the call; the stream files its state under
// the identity the interceptor admitted, without asking the TLS socket a second time (each read
// parses the certificate again: ~30 µs per stream in a burst of thousands).
describe("the peer certificate is read once per stream", () => {
  test("5 streams of A: 5 reads on the server's sockets, and each stream is filed under A", async () => {
    const r = await start();
    const proto = TLSSocket.prototype;
    const original = Object.getOwnPropertyDescriptor(proto, "getPeerCertificate");
    const read = original?.value as (this: TLSSocket, detailed?: boolean) => unknown;
    let serverReads = 0;
    Object.defineProperty(proto, "getPeerCertificate", {
      ...original,
      value: function (this: TLSSocket, detailed?: boolean): unknown {
        // A server-side socket is handed the client's certificate; the clients read the server's.
        if ((this as TLSSocket & { server?: unknown }).server !== undefined) serverReads++;
        return read.call(this, detailed);
      },
    });
    try {
      for (let i = 0; i < 5; i++) {
        const s = asA(r);
        s.send({ node: { id: `envoy-a-${String(i)}`, cluster: GROUP_A }, type_url: CLUSTER_TYPE_URL });
        expect((await s.next()).resources.map((x) => x.name).sort()).toEqual(namesOf(r, GROUP_A, CLUSTER_TYPE_URL));
      }
    } finally {
      if (original !== undefined) Object.defineProperty(proto, "getPeerCertificate", original);
    }
    expect(serverReads).toBe(5);
    const filed = r.server.status.nodes().filter((n) => n.node.id.startsWith("envoy-a-"));
    expect(filed.map((n) => n.node.cluster)).toEqual(Array(5).fill(GROUP_A));
  });
});
