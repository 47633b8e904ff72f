// The ADS port accepts a bounded number of connections (issue 25, row 5): idle TCP connections
// past --xds-max-connections are closed at once, so they cannot take every file descriptor of the
// process; once one closes, a real Envoy-like client connects again. Real sockets on 127.0.0.1.
import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, test } from "vitest";
import { connectionCap, FILE_HEADROOM } from "../../../src/xds/server/listener.js";
import { closeAll, envoy } from "../introspect/fixtures.js";
import { GROUP, publish, rendered, startRig, versionsOf, type Rig } from "./fixtures.js";

let rig: Rig | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  closeAll();
  for (const s of sockets.splice(0)) s.destroy();
  await rig?.close();
  rig = undefined;
});

/** Opens a TCP connection; resolves with it once connected. */
function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: "127.0.0.1", port }, () => {
      resolve(s);
    });
    sockets.push(s);
    s.on("error", reject);
  });
}

/** Resolves "closed" when the server closes `s`, "open" if it is still open after `ms`. */
function closedWithin(s: Socket, ms: number): Promise<"closed" | "open"> {
  return new Promise((resolve) => {
    const t = setTimeout(() => {
      resolve("open");
    }, ms);
    s.once("close", () => {
      clearTimeout(t);
      resolve("closed");
    });
  });
}

describe("a cap on connections of the xDS port", () => {
  test("past the cap a new connection is closed at once; one closing makes room for an Envoy", async () => {
    const r = (rig = await startRig({ maxConnections: 3 }));
    publish(r.cache, GROUP, rendered());
    expect(r.server.maxConnections).toBe(3);
    const held = [await open(r.server.port), await open(r.server.port), await open(r.server.port)];
    const extra = await open(r.server.port);
    expect(await closedWithin(extra, 5000)).toBe("closed");
    expect(await closedWithin(held[0] as Socket, 100)).toBe("open");
    held[0]?.destroy();
    await closedWithin(held[0] as Socket, 5000);
    const c = envoy(r.address, "envoy-0", GROUP);
    await c.waitForVersions(versionsOf(r.cache, GROUP));
  });

  test.each([
    { requested: 4096, openFiles: 1_048_576, cap: 4096 },
    { requested: 4096, openFiles: 4096, cap: 4096 - FILE_HEADROOM },
    { requested: 4096, openFiles: 1024, cap: 1 },
    { requested: 100, openFiles: undefined, cap: 100 },
  ])("cap $requested with $openFiles open files allowed: $cap", ({ requested, openFiles, cap }) => {
    expect(connectionCap(requested, openFiles)).toBe(cap);
  });
});
