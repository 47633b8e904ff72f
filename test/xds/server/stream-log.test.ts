// Every xDS stream's connect and disconnect is one log line at info: who (node id, node group, the
// verified identity on an mTLS port), which kind of stream (ADS, Delta ADS), and on disconnect how
// long it lasted and why it ended — a proxy that went away was otherwise only missing from the page
// (issue 27, finding 4). Real gRPC streams on loopback, plaintext and mTLS.
import { afterEach, beforeAll, describe, expect, test } from "vitest";
import type { Logger } from "../../../src/util/logger.js";
import { nodeGroupUri } from "../../../src/pki/spiffe.js";
import type { IssuedCertificate } from "../../../src/pki/issue.js";
import { LISTENER_TYPE_URL } from "../../../src/xds/resource/type-urls.js";
import { METHODS, openDelta, openSotw } from "../../support/envoy/raw.js";
import { eventually } from "../introspect/fixtures.js";
import { ALPHA, GROUP, publish, rendered, startRig, type Rig } from "./fixtures.js";
import { authority, clientCert, clientCreds, mtlsServer, type Authority } from "./mtls-fixtures.js";

interface Line {
  readonly level: string;
  readonly msg: string;
  readonly fields: Record<string, unknown>;
}

/** A logger keeping the stream lines (connected, disconnected) of every level. */
function recordingLogger(): { logger: Logger; lines: Line[] } {
  const lines: Line[] = [];
  const keep =
    (level: string) =>
    (obj: object, msg: string): void => {
      if (msg.startsWith("xDS stream")) lines.push({ level, msg, fields: obj as Record<string, unknown> });
    };
  return { logger: { debug: keep("debug"), info: keep("info"), warn: keep("warn"), error: keep("error") }, lines };
}

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

/** The one line with this message about `node`, once logged. */
function lineOf(lines: readonly Line[], msg: string, node: string): Promise<Line> {
  return eventually(() => lines.find((l) => l.msg === msg && l.fields["node"] === node), `${msg} for ${node}`);
}

describe("xDS stream connect and disconnect lines", () => {
  test("a SotW ADS stream: connected with node and group, disconnected with duration and reason", async () => {
    const { logger, lines } = recordingLogger();
    const r = (rig = await startRig({ logger }));
    publish(r.cache, GROUP, rendered([ALPHA]));
    const s = openSotw(r.address);
    s.send({ node: { id: "envoy-a", cluster: GROUP }, type_url: LISTENER_TYPE_URL });
    await s.next();
    const connected = await lineOf(lines, "xDS stream connected", "envoy-a");
    expect(connected.level).toBe("info");
    expect(connected.fields).toMatchObject({ node: "envoy-a", group: GROUP, kind: "ADS" });
    expect(connected.fields).not.toHaveProperty("identity");

    s.close();
    const disconnected = await lineOf(lines, "xDS stream disconnected", "envoy-a");
    expect(disconnected.level).toBe("info");
    expect(disconnected.fields).toMatchObject({
      node: "envoy-a",
      group: GROUP,
      kind: "ADS",
      stream: connected.fields["stream"],
    });
    expect(disconnected.fields["durationMs"]).toEqual(expect.any(Number));
    expect(disconnected.fields["reason"]).toMatch(/cancelled|closed/);
    expect(lines.filter((l) => l.fields["node"] === "envoy-a").map((l) => l.msg)).toEqual([
      "xDS stream connected",
      "xDS stream disconnected",
    ]);
  });

  test("a Delta ADS stream the server ends says Delta ADS and the server's reason", async () => {
    const { logger, lines } = recordingLogger();
    const r = (rig = await startRig({ logger }));
    publish(r.cache, GROUP, rendered([ALPHA]));
    const s = openDelta(r.address, METHODS.adsDelta);
    s.send({ node: { id: "envoy-d", cluster: GROUP }, type_url: LISTENER_TYPE_URL });
    await s.next();
    expect((await lineOf(lines, "xDS stream connected", "envoy-d")).fields).toMatchObject({ kind: "Delta ADS" });
    await r.close();
    rig = undefined;
    const disconnected = await lineOf(lines, "xDS stream disconnected", "envoy-d");
    expect(disconnected.fields).toMatchObject({
      kind: "Delta ADS",
      group: GROUP,
      reason: "UNAVAILABLE: xDS server shutting down",
    });
    s.close();
  });

  describe("on an mTLS port", () => {
    let ca: Authority;
    let cert: IssuedCertificate;
    beforeAll(async () => {
      ca = await authority("oooi test CA");
      cert = await clientCert(ca, nodeGroupUri("oooi-system", "infra-proxy"));
    });

    test("both lines carry the verified identity of the client certificate", async () => {
      const { logger, lines } = recordingLogger();
      const r = (rig = await startRig({ logger, credentials: await mtlsServer(ca), requireIdentity: true }));
      publish(r.cache, GROUP, rendered([ALPHA]));
      const s = openSotw(`localhost:${String(r.server.port)}`, METHODS.adsSotw, clientCreds(ca, cert));
      s.send({ node: { id: "envoy-m", cluster: GROUP }, type_url: LISTENER_TYPE_URL });
      await s.next();
      const identity = "spiffe://oooi/ns/oooi-system/infra-proxy";
      expect((await lineOf(lines, "xDS stream connected", "envoy-m")).fields).toMatchObject({ identity });
      s.close();
      expect((await lineOf(lines, "xDS stream disconnected", "envoy-m")).fields).toMatchObject({ identity });
    });
  });
});
