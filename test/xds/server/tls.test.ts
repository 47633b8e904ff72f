// TLS and mTLS on the xDS port with certificates made by `openssl` at test time: an Envoy-like
// client with a certificate from the trusted CA gets its configuration; one without a certificate,
// with a certificate from another CA, or without TLS at all is refused. `oooi debug` connects the same way.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { credentials } from "@grpc/grpc-js";
import { Command } from "commander";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { registerDebugCommand } from "../../../src/cli/commands/debug.js";
import type { DebugIo } from "../../../src/cli/debug.js";
import { DebugClient, XdsUnreachableError } from "../../../src/xds/introspect/debug-client.js";
import { clientCredentials, serverCredentials, serverCredentialsFromFiles } from "../../../src/xds/server/tls.js";
import { EnvoyLikeClient } from "../../support/envoy/client.js";
import { ALPHA, GROUP, publish, rendered, versionsOf } from "./fixtures.js";
import { closeAll, envoy, startIntrospectRig, type IntrospectRig } from "../introspect/fixtures.js";

const dir = mkdtempSync(join(tmpdir(), "oooi-tls-"));
const file = (name: string): string => join(dir, name);
const pem = (name: string): Buffer => readFileSync(file(name));

function openssl(...args: string[]): void {
  execFileSync("openssl", args, { stdio: ["ignore", "ignore", "pipe"] });
}

/** A CA, and a leaf certificate it signs with the given extensions. */
function makeCa(name: string): void {
  openssl(
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-keyout",
    file(`${name}.key`),
    "-out",
    file(`${name}.crt`),
    "-subj",
    `/CN=${name}`,
    "-days",
    "2",
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
  );
}

function makeLeaf(name: string, ca: string, ext: string): void {
  writeFileSync(file(`${name}.ext`), ext);
  openssl(
    "req",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-keyout",
    file(`${name}.key`),
    "-out",
    file(`${name}.csr`),
    "-subj",
    `/CN=${name}`,
  );
  openssl(
    "x509",
    "-req",
    "-in",
    file(`${name}.csr`),
    "-CA",
    file(`${ca}.crt`),
    "-CAkey",
    file(`${ca}.key`),
    "-CAcreateserial",
    "-out",
    file(`${name}.crt`),
    "-days",
    "2",
    "-extfile",
    file(`${name}.ext`),
  );
}

beforeAll(() => {
  makeCa("oooi-test-ca");
  makeCa("stranger-ca");
  makeLeaf("server", "oooi-test-ca", "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n");
  makeLeaf("envoy", "oooi-test-ca", "extendedKeyUsage=clientAuth\n");
  makeLeaf("intruder", "stranger-ca", "extendedKeyUsage=clientAuth\n");
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

let rig: IntrospectRig | undefined;
const debugClients: DebugClient[] = [];
afterEach(async () => {
  closeAll();
  for (const c of debugClients.splice(0)) c.close();
  await rig?.close();
  rig = undefined;
});

async function mtlsRig(): Promise<IntrospectRig> {
  rig = await startIntrospectRig({
    credentials: serverCredentials({ cert: pem("server.crt"), key: pem("server.key"), ca: pem("oooi-test-ca.crt") }),
  });
  publish(rig.cache, GROUP, rendered([ALPHA]));
  return rig;
}

/** Resolves with the stream's end status; fails if the client ever received configuration. */
function refused(c: EnvoyLikeClient): Promise<number> {
  return new Promise((resolve, reject) => {
    c.events.once("response", () => {
      reject(new Error("a refused client received configuration"));
    });
    c.events.once("disconnected", (s) => {
      resolve(s.code);
    });
  });
}

describe("mTLS on the xDS port", () => {
  test("a client with a certificate from the trusted CA gets its configuration", async () => {
    const r = await mtlsRig();
    const c = envoy(r.address, "envoy-0", GROUP, {
      credentials: clientCredentials({ ca: pem("oooi-test-ca.crt"), cert: pem("envoy.crt"), key: pem("envoy.key") }),
    });
    await c.waitForVersions(versionsOf(r.cache, GROUP));
    expect(r.server.streamCount()).toBe(1);
  });

  test("clients without a certificate, with a stranger's, or without TLS are refused", async () => {
    const r = await mtlsRig();
    const noCert = envoy(r.address, "anon-0", GROUP, {
      credentials: clientCredentials({ ca: pem("oooi-test-ca.crt") }),
    });
    const stranger = envoy(r.address, "intruder-0", GROUP, {
      credentials: clientCredentials({
        ca: pem("oooi-test-ca.crt"),
        cert: pem("intruder.crt"),
        key: pem("intruder.key"),
      }),
    });
    const plain = envoy(r.address, "plain-0", GROUP, { credentials: credentials.createInsecure() });
    const codes = await Promise.all([noCert, stranger, plain].map(refused));
    expect(codes).toEqual([14, 14, 14]); // UNAVAILABLE: no stream was ever established
    expect(r.server.status.nodes()).toEqual([]);
  });

  test("oooi debug connects with --tls-ca/--tls-cert/--tls-key and is refused without a certificate", async () => {
    const r = await mtlsRig();
    const c = envoy(r.address, "envoy-0", GROUP, {
      credentials: clientCredentials({ ca: pem("oooi-test-ca.crt"), cert: pem("envoy.crt"), key: pem("envoy.key") }),
    });
    await c.waitForVersions(versionsOf(r.cache, GROUP));

    const run = async (...args: string[]): Promise<{ code: number; out: string; err: string }> => {
      let out = "";
      let err = "";
      let code = 0;
      const io: DebugIo = {
        out: (t) => {
          out += t;
        },
        err: (t) => {
          err += t;
        },
        exit: (x) => {
          code = x;
        },
        now: () => Date.now(),
        color: false,
      };
      const program = new Command().exitOverride();
      registerDebugCommand(program, io);
      await program.parseAsync(["debug", "nodes", "--xds", r.address, ...args], { from: "user" });
      return { code, out, err };
    };
    const ok = await run(
      "--tls-ca",
      file("oooi-test-ca.crt"),
      "--tls-cert",
      file("envoy.crt"),
      "--tls-key",
      file("envoy.key"),
    );
    expect(ok.err).toBe("");
    expect(ok.out).toMatch(/^envoy-0\s+oooi-system\/infra-proxy\s/m);

    const anon = await run("--tls-ca", file("oooi-test-ca.crt"));
    expect(anon.code).toBe(1);
    expect(anon.err).toContain(`cannot reach the xDS server at ${r.address}`);

    const unreadable = await run("--tls-ca", file("missing.crt"));
    expect(unreadable.code).toBe(1);
    expect(unreadable.err).toContain(`cannot read the TLS CA ${file("missing.crt")}: ENOENT`);

    const client = new DebugClient({
      address: r.address,
      credentials: clientCredentials({ ca: pem("stranger-ca.crt"), cert: pem("envoy.crt"), key: pem("envoy.key") }),
    });
    debugClients.push(client);
    // The server's certificate is not signed by the CA this client trusts.
    await expect(client.listNodes()).rejects.toBeInstanceOf(XdsUnreachableError);
  });

  test("server-only TLS (no client CA) accepts clients without a certificate", async () => {
    rig = await startIntrospectRig({
      credentials: serverCredentials({ cert: pem("server.crt"), key: pem("server.key") }),
    });
    publish(rig.cache, GROUP, rendered([ALPHA]));
    const c = envoy(rig.address, "envoy-0", GROUP, { credentials: clientCredentials({ ca: pem("oooi-test-ca.crt") }) });
    await c.waitForVersions(versionsOf(rig.cache, GROUP));
  });

  test("credentials from files (what --xds-tls-cert/key/ca pass) enforce mTLS the same way", async () => {
    rig = await startIntrospectRig({
      credentials: serverCredentialsFromFiles({
        cert: file("server.crt"),
        key: file("server.key"),
        ca: file("oooi-test-ca.crt"),
      }),
    });
    publish(rig.cache, GROUP, rendered([ALPHA]));
    const ok = envoy(rig.address, "envoy-0", GROUP, {
      credentials: clientCredentials({ ca: pem("oooi-test-ca.crt"), cert: pem("envoy.crt"), key: pem("envoy.key") }),
    });
    await ok.waitForVersions(versionsOf(rig.cache, GROUP));
    const anon = envoy(rig.address, "anon-0", GROUP, {
      credentials: clientCredentials({ ca: pem("oooi-test-ca.crt") }),
    });
    expect(await refused(anon)).toBe(14);
    expect(() => serverCredentialsFromFiles({ cert: file("server.crt") })).toThrow(/certificate and its key/);
    expect(() => serverCredentialsFromFiles({ cert: file("server.crt"), key: file("nope.key") })).toThrow(
      /cannot read the TLS key .*nope\.key: ENOENT/,
    );
  });

  test("a client certificate without its key is a usage error", () => {
    expect(() => clientCredentials({ cert: pem("envoy.crt") })).toThrow(/needs its key/);
  });
});
