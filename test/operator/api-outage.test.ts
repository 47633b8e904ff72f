// The running operator losing its API server (issue 27, finding 3): the Lease renewals, replica
// reports and reconcile passes that fail meanwhile make one warning, then one summary line per
// interval, and one info line when the API server answers again — not a warning per attempt. First
// the rule on a ManualClock, then a real operator (Lease, replica reports, reconcile) against the
// fake API server taken down and brought back, its log lines counted.
import { afterEach, describe, expect, it } from "vitest";
import { KubeApiError } from "../../src/kube/rest.js";
import { ApiOutage } from "../../src/operator/process/api-outage.js";
import type { Logger } from "../../src/util/logger.js";
import { SnapshotCache } from "../../src/xds/cache/index.js";
import { startXdsServer, type XdsServer } from "../../src/xds/server/index.js";
import { checkEnvoySnapshot } from "../../src/envoy/snapshot.js";
import { eventually, type FakeApiServer } from "../support/fake-apiserver/index.js";
import { ManualClock } from "../support/manual-clock.js";
import { seededFake, startOperator, stored } from "./support.js";

interface Line {
  readonly level: "debug" | "info" | "warn" | "error";
  readonly msg: string;
}

function capture(): { lines: Line[]; log: Logger } {
  const lines: Line[] = [];
  const at =
    (level: Line["level"]) =>
    (_obj: object, msg: string): void => {
      lines.push({ level, msg });
    };
  return { lines, log: { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") } };
}

const refused = new Error("connect ECONNREFUSED 127.0.0.1:6443");

describe("ApiOutage", () => {
  it("one warning when lost, one summary per interval naming what failed, one line when back", () => {
    const clock = new ManualClock();
    const { lines, log } = capture();
    const outage = new ApiOutage({ clock, log, intervalMs: 30_000 });
    outage.transportFailed();
    // Every 2 s for 85 s: the Lease, the report heartbeat and a reconcile pass each fail.
    for (let t = 0; t <= 85_000; t += 2_000) {
      for (const what of ["leader Lease", "report heartbeat", "reconcile"])
        expect(outage.unreachable(what, refused)).toBe(true);
      clock.advance(2_000);
    }
    outage.answered();
    expect(lines.map((l) => `${l.level} ${l.msg}`)).toEqual([
      "warn API server unreachable for 2s (leader Lease, reconcile, report heartbeat): connect ECONNREFUSED 127.0.0.1:6443; retrying, one summary line per 30s",
      "warn API server unreachable for 32s, 49 attempts (leader Lease, reconcile, report heartbeat), last error: connect ECONNREFUSED 127.0.0.1:6443",
      "warn API server unreachable for 1m 2s, 94 attempts (leader Lease, reconcile, report heartbeat), last error: connect ECONNREFUSED 127.0.0.1:6443",
      "info API server answered again after 1m 26s, 129 failed attempts",
    ]);
  });

  it("says nothing of a failure answered within a second (a connection cut while the API server answers)", () => {
    const clock = new ManualClock();
    const { lines, log } = capture();
    const outage = new ApiOutage({ clock, log });
    outage.transportFailed();
    expect(outage.unreachable("reconcile", new Error("socket hang up"))).toBe(true);
    clock.advance(500);
    expect(outage.unreachable("leader Lease", refused)).toBe(true);
    outage.answered();
    expect(lines).toEqual([]);
  });

  it("leaves to the caller an error the API server answered with, and any error while it answers", () => {
    const clock = new ManualClock();
    const { lines, log } = capture();
    const outage = new ApiOutage({ clock, log });
    expect(outage.unreachable("reconcile", new TypeError("a bug"))).toBe(false);
    outage.transportFailed();
    expect(outage.unreachable("reconcile", new KubeApiError(409, "Conflict", "conflict"))).toBe(false);
    outage.answered();
    expect(lines).toEqual([]);
  });
});

let fake: FakeApiServer | undefined;
const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
  await fake?.stop();
  fake = undefined;
});

describe("the running operator without its API server", () => {
  it("logs the loss once, then summaries, then its return — no warning per Lease renewal, report or pass", async () => {
    fake = await seededFake();
    const f = fake;
    const cache = new SnapshotCache({ check: checkEnvoySnapshot });
    const xds: XdsServer = await startXdsServer({ cache, listen: "127.0.0.1:0" });
    closers.push(() => xds.close());
    const { lines, log } = capture();
    const { op } = startOperator(f, {
      logger: log,
      xds: { status: xds.status, cache },
      fleetTiming: { heartbeatMs: 100, expiryMs: 1_000, minIntervalMs: 100 },
      apiRetryMaxMs: 500,
    });
    closers.push(() => op.close());
    await op.ready;
    await eventually(() => {
      expect(op.isLeader()).toBe(true);
      expect(stored(f, "apps/v1", "Deployment", "clusters", "tenant-vlan-proxy")).toBeDefined();
    });
    const before = lines.length;

    await f.goDown();
    // The Lease (every 100 ms), the heartbeat (every 100 ms) and the passes keep failing meanwhile.
    await eventually(() => {
      expect(lines.slice(before).filter((l) => / attempts \(/.test(l.msg)).length).toBe(2);
    }, 10_000);
    await f.goUp();
    await eventually(() => {
      expect(lines.slice(before).some((l) => l.msg.startsWith("API server answered again"))).toBe(true);
    }, 10_000);

    const during = lines.slice(before);
    const lost = during.filter((l) => l.level === "warn" && /^API server unreachable for \S+ \(/.test(l.msg));
    const back = during.filter((l) => l.msg.startsWith("API server answered again"));
    expect([lost.length, back.length, back[0]?.level], during.map((l) => `${l.level} ${l.msg}`).join("\n")).toEqual([
      1,
      1,
      "info",
    ]);
    const perAttempt = during.filter((l) =>
      /leader Lease update failed|could not renew this replica's report|could not write this replica's report|reconcile failed/.test(
        l.msg,
      ),
    );
    expect(perAttempt.map((l) => l.msg)).toEqual([]);
  }, 30_000);
});
