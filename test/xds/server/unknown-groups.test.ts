// Nodes declaring a node group the cache does not hold are warned about once each, and what
// remembers "already warned" is bounded: node ids and groups are the client's to choose, so a
// flood of them must not grow the process (issue 25, row 20).
import { afterEach, expect, test } from "vitest";
import type { Logger } from "../../../src/util/logger.js";
import { LISTENER_TYPE_URL } from "../../../src/xds/resource/type-urls.js";
import { openSotw, type SotwStream } from "../../support/envoy/raw.js";
import { eventually } from "../introspect/fixtures.js";
import { startRig, type Rig } from "./fixtures.js";

let rig: Rig | undefined;
const streams: SotwStream[] = [];
afterEach(async () => {
  for (const s of streams.splice(0)) s.close();
  await rig?.close();
  rig = undefined;
});

function recordingLogger(): { logger: Logger; warned: () => string[] } {
  const lines: { node: string; msg: string }[] = [];
  const logger: Logger = {
    debug() {},
    info() {},
    error() {},
    warn(obj: object, msg: string) {
      if (msg.includes("no known node group")) lines.push({ node: String((obj as { node?: unknown }).node), msg });
    },
  };
  return { logger, warned: () => lines.map((l) => l.node) };
}

test("the set of warned-about nodes in unknown groups is bounded: the oldest is forgotten (and warned again)", async () => {
  const { logger, warned } = recordingLogger();
  const r = (rig = await startRig({ logger, maxWarnedNodes: 4 }));
  const connect = (id: string): void => {
    const s = openSotw(r.address);
    streams.push(s);
    s.send({ node: { id, cluster: "typo/proxy" }, type_url: LISTENER_TYPE_URL });
  };
  const ids = Array.from({ length: 6 }, (_, i) => `envoy-${String(i)}`);
  for (const id of ids) {
    connect(id);
    await eventually(() => (warned().includes(id) ? true : undefined), `the warning about ${id}`);
  }
  // The newest is still remembered: said once.
  connect("envoy-5");
  await eventually(() => (r.server.streamCount() === 7 ? true : undefined), "the seventh stream");
  // envoy-0 was forgotten among four newer ones: it is warned about again.
  connect("envoy-0");
  await eventually(() => (warned().length === 7 ? true : undefined), "a second warning about envoy-0");
  expect(warned()).toEqual([...ids, "envoy-0"]);
});
