// Parts of the applier that need no Kea: backoff pacing (with injected timers and randomness),
// the overlay that keeps Kea reachable, canonical hashing and the lease-status arithmetic.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  KeaApplier,
  addressCapacity,
  backoffDelay,
  canonicalJson,
  configHash,
  countActiveLeases,
  overlay,
  type ApplyResult,
  type Timers,
} from "../../src/dhcp/kea/index.js";

describe("backoffDelay", () => {
  it("doubles from the initial delay up to the cap; jitter only shortens", () => {
    const none = { initialMs: 100, maxMs: 1_000, factor: 2, jitter: 0 };
    expect([1, 2, 3, 4, 5, 9].map((n) => backoffDelay(n, none))).toEqual([100, 200, 400, 800, 1_000, 1_000]);
    const half = { ...none, jitter: 0.5 };
    expect(backoffDelay(3, half, () => 0)).toBe(400);
    expect(backoffDelay(3, half, () => 0.999999)).toBe(200);
    expect(backoffDelay(3, half, () => 0.5)).toBe(300);
  });
});

describe("KeaApplier without Kea", () => {
  it("retries on the injected timers while the socket is missing; close() resolves 'stopped'", async () => {
    const dir = mkdtempSync(join(tmpdir(), "oooi-ap-"));
    const scheduled: { ms: number; fire: () => void }[] = [];
    const timers: Timers = {
      setTimeout: (fire, ms) => {
        scheduled.push({ ms, fire });
        return scheduled.length;
      },
      clearTimeout: () => undefined,
    };
    const applier = new KeaApplier(join(dir, "absent"), {
      timers,
      random: () => 0,
      backoff: { initialMs: 10, maxMs: 50, factor: 2 },
    });
    let settled: ApplyResult | undefined;
    const p = applier.apply({ Dhcp4: {} }).then((r) => {
      settled = r;
      return r;
    });
    for (let i = 0; i < 4; i++) {
      while (scheduled.length <= i) await new Promise((r) => setImmediate(r));
      expect(settled).toBeUndefined();
      scheduled[i]?.fire();
    }
    while (scheduled.length < 5) await new Promise((r) => setImmediate(r));
    expect(scheduled.map((s) => s.ms)).toEqual([10, 20, 40, 50, 50]);
    applier.close();
    expect(await p).toEqual({ status: "stopped" });
    expect(await applier.apply({ Dhcp4: {} })).toEqual({ status: "stopped" });
    rmSync(dir, { recursive: true, force: true });
  });
});

describe("overlay", () => {
  const cfg = {
    "control-socket": { "socket-name": "/default", "socket-type": "unix" },
    "interfaces-config": { "dhcp-socket-type": "raw", interfaces: ["net1"] },
    subnet4: [],
  };
  it("keeps Kea's control socket and interfaces, and the rest of interfaces-config", () => {
    const out = overlay(cfg, {
      controlSocket: { "socket-name": "/run/x", "socket-type": "unix" },
      interfaces: ["eth0"],
      serving: false,
    });
    expect(out).toEqual({
      ...cfg,
      "control-socket": { "socket-name": "/run/x", "socket-type": "unix" },
      "interfaces-config": { "dhcp-socket-type": "raw", interfaces: ["eth0"] },
    });
  });
  it("lets the config choose interfaces when Kea was started listening nowhere", () => {
    expect(overlay(cfg, { controlSocket: cfg["control-socket"], interfaces: undefined, serving: false })).toEqual(cfg);
  });
  it("keeps Kea's own lease database when told to (serve --kea-socket without --kea-lease-file)", () => {
    const own = { type: "memfile", name: "/srv/kea/own-leases.csv", persist: true };
    const rendered = { ...cfg, "lease-database": { type: "memfile", name: "/var/lib/kea/kea-leases4.csv" } };
    expect(
      overlay(rendered, {
        controlSocket: cfg["control-socket"],
        interfaces: undefined,
        leaseDatabase: own,
        serving: false,
      })["lease-database" as keyof object],
    ).toEqual(own);
  });
});

describe("canonical hashing", () => {
  it("ignores key order, not array order", () => {
    expect(canonicalJson({ b: 1, a: { d: [2, 1], c: null } })).toBe('{"a":{"c":null,"d":[2,1]},"b":1}');
    expect(configHash({ x: 1, y: 2 })).toBe(configHash({ y: 2, x: 1 }));
    expect(configHash({ x: [1, 2] })).not.toBe(configHash({ x: [2, 1] }));
  });
});

describe("lease status", () => {
  it("counts unexpired leases in the default state only", () => {
    const now = 1_700_000_000;
    const leases = [
      { cltt: now - 10, "valid-lft": 3600, state: 0 },
      { cltt: now - 7200, "valid-lft": 3600, state: 0 },
      { cltt: now - 10, "valid-lft": 3600, state: 1 },
      { cltt: now - 10, "valid-lft": 3600, state: 2 },
      { cltt: now, "valid-lft": 60 },
    ];
    expect(countActiveLeases(leases, now)).toBe(2);
    expect(countActiveLeases(undefined, now)).toBe(0);
  });

  it("capacity = pool sizes + reservations outside every pool", () => {
    const dhcp4 = {
      subnet4: [
        {
          pools: [{ pool: "192.0.2.100 - 192.0.2.199" }, { pool: "192.0.2.224/28" }],
          reservations: [
            { "ip-address": "192.0.2.10" },
            { "ip-address": "192.0.2.150" },
            { "ip-address": "192.0.2.230" },
          ],
        },
        { pools: [], reservations: [{ "ip-address": "198.51.100.9" }] },
      ],
    };
    expect(addressCapacity(dhcp4)).toBe(100 + 16 + 1 + 1);
    expect(addressCapacity({})).toBe(0);
  });
});
