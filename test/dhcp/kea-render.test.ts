// Shape of the rendered Kea Dhcp4 configuration for hand-built models (no Kea needed; the real
// daemon checks the same models in kea-real.test.ts).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_CONTROL_SOCKET,
  DEFAULT_HOOKS_DIRECTORY,
  DEFAULT_LEASE_FILE,
  renderKea,
  type KeaDhcp4Config,
  type KeaSubnet4,
} from "../../src/dhcp/render/index.js";
import type { DhcpModel } from "../../src/model/types.js";
import { openPool, reservation, reservationInPool, reservationsOnly, wideDeny } from "./support/models.js";

function subnetOf(cfg: KeaDhcp4Config): KeaSubnet4 {
  expect(cfg.subnet4).toHaveLength(1);
  return cfg.subnet4[0] as KeaSubnet4;
}

function option(cfg: KeaDhcp4Config, name: string): string | undefined {
  return subnetOf(cfg)["option-data"].find((o) => o.name === name)?.data;
}

/** Every object's keys, at every depth, are in sorted order. */
function keysSorted(v: unknown): boolean {
  if (Array.isArray(v)) return v.every(keysSorted);
  if (v === null || typeof v !== "object") return true;
  const keys = Object.keys(v);
  return keys.join("\0") === [...keys].sort().join("\0") && Object.values(v).every(keysSorted);
}

describe("renderKea", () => {
  it("renders the global settings: interface, raw sockets, control socket, memfile, lease_cmds, loggers", () => {
    const { Dhcp4: cfg } = renderKea(wideDeny);
    expect(cfg["interfaces-config"]).toEqual({ "dhcp-socket-type": "raw", interfaces: ["net1"] });
    expect(cfg["control-socket"]).toEqual({ "socket-name": DEFAULT_CONTROL_SOCKET, "socket-type": "unix" });
    expect(cfg["lease-database"]).toEqual({
      "lfc-interval": 3600,
      name: DEFAULT_LEASE_FILE,
      persist: true,
      type: "memfile",
    });
    expect(cfg["hooks-libraries"]).toEqual([{ library: `${DEFAULT_HOOKS_DIRECTORY}/libdhcp_lease_cmds.so` }]);
    expect(cfg["host-reservation-identifiers"]).toEqual(["hw-address"]);
    expect(cfg.loggers).toEqual([
      { debuglevel: 0, name: "kea-dhcp4", output_options: [{ output: "stdout" }], severity: "INFO" },
    ]);
    expect(cfg["valid-lifetime"]).toBe(3600);
    expect(cfg).toMatchObject({ "calculate-tee-times": true, "t1-percent": 0.5, "t2-percent": 0.875 });
  });

  it("uses the given paths; a trailing slash on the hooks directory does not double up", () => {
    const { Dhcp4: cfg } = renderKea(openPool, {
      controlSocket: "/s/sock",
      leaseFile: "/l/leases.csv",
      hooksDirectory: "/h/hooks/",
    });
    expect(cfg["control-socket"]["socket-name"]).toBe("/s/sock");
    expect(cfg["lease-database"].name).toBe("/l/leases.csv");
    expect(cfg["hooks-libraries"]).toEqual([{ library: "/h/hooks/libdhcp_lease_cmds.so" }]);
    expect(cfg["interfaces-config"].interfaces).toEqual([openPool.interface]);
  });

  it("renders one subnet with id 1, routers and the netmask of a /22", () => {
    const { Dhcp4: cfg } = renderKea(wideDeny);
    const subnet = subnetOf(cfg);
    expect(subnet.id).toBe(1);
    expect(subnet.subnet).toBe("10.20.0.0/22");
    expect(option(cfg, "subnet-mask")).toBe("255.255.252.0");
    expect(option(cfg, "routers")).toBe("10.20.0.1");
    expect(subnet["option-data"].map((o) => o.name)).toEqual([
      "domain-name-servers",
      "routers",
      "subnet-mask",
      "interface-mtu",
      "classless-static-route",
    ]);
    // The user's options follow oooi's; option 121 goes as RFC 3442 bytes (Kea 2.2 has no text form for it).
    expect(subnet["option-data"].at(-1)).toEqual({
      code: 121,
      name: "classless-static-route",
      data: "080A0A140001",
      "csv-format": false,
    });
  });

  it("advertises every DNS server in order, and no option 6 when there is none", () => {
    const three: DhcpModel = { ...wideDeny, dnsServers: ["192.0.2.53", "10.20.0.3", "198.51.100.7"] };
    expect(option(renderKea(three).Dhcp4, "domain-name-servers")).toBe("192.0.2.53, 10.20.0.3, 198.51.100.7");
    expect(option(renderKea(openPool).Dhcp4, "domain-name-servers")).toBeUndefined();
  });

  it("deny restricts the pool to KNOWN (reserved) clients; pool leaves it open", () => {
    expect(subnetOf(renderKea(wideDeny).Dhcp4).pools).toEqual([
      { "client-class": "KNOWN", pool: "10.20.1.0 - 10.20.1.255" },
    ]);
    expect(subnetOf(renderKea(openPool).Dhcp4).pools).toEqual([{ pool: "192.168.50.100 - 192.168.50.200" }]);
    const openWide = subnetOf(renderKea({ ...wideDeny, unknownClients: "pool" }).Dhcp4);
    expect(openWide.pools).toEqual([{ pool: "10.20.1.0 - 10.20.1.255" }]);
  });

  it("renders no pool when the model has none", () => {
    expect(subnetOf(renderKea(reservationsOnly).Dhcp4).pools).toEqual([]);
  });

  it("renders reservations sorted by MAC, with hostname and the VMI as user context, looked up in the subnet only", () => {
    const subnet = subnetOf(renderKea(wideDeny).Dhcp4);
    expect(subnet.reservations).toEqual([
      {
        hostname: "worker-a",
        "hw-address": "02:00:00:00:00:0a",
        "ip-address": "10.20.2.10",
        "user-context": { vmi: "vms/worker-a" },
      },
      {
        hostname: "worker-b",
        "hw-address": "02:00:00:00:00:2b",
        "ip-address": "10.20.2.11",
        "user-context": { vmi: "vms/worker-b" },
      },
      {
        hostname: "worker-z",
        "hw-address": "02:00:00:00:00:ff",
        "ip-address": "10.20.3.254",
        "user-context": { vmi: "vms/worker-z" },
      },
    ]);
    expect(subnet).toMatchObject({ "reservations-global": false, "reservations-in-subnet": true });
  });

  it("promises reservations-out-of-pool only while no reservation lies inside the pool", () => {
    expect(subnetOf(renderKea(wideDeny).Dhcp4)["reservations-out-of-pool"]).toBe(true);
    expect(subnetOf(renderKea(reservationsOnly).Dhcp4)["reservations-out-of-pool"]).toBe(true);
    expect(subnetOf(renderKea(reservationInPool).Dhcp4)["reservations-out-of-pool"]).toBe(false);
    const atPoolEdge: DhcpModel = {
      ...openPool,
      reservations: [reservation("02:00:00:00:00:01", "192.168.50.200", "edge")],
    };
    expect(subnetOf(renderKea(atPoolEdge).Dhcp4)["reservations-out-of-pool"]).toBe(false);
  });

  it("omits an empty hostname and falls back to one hour for a nonsensical lifetime", () => {
    const odd: DhcpModel = {
      ...reservationsOnly,
      validLifetimeSeconds: Number.NaN,
      reservations: [reservation("02:00:00:00:00:01", "172.16.8.9", "")],
    };
    const { Dhcp4: cfg } = renderKea(odd);
    expect(cfg["valid-lifetime"]).toBe(3600);
    expect(subnetOf(cfg).reservations[0]).not.toHaveProperty("hostname");
    expect(renderKea({ ...odd, validLifetimeSeconds: 0 }).Dhcp4["valid-lifetime"]).toBe(3600);
    expect(renderKea({ ...odd, validLifetimeSeconds: 90.7 }).Dhcp4["valid-lifetime"]).toBe(90);
  });

  it("is canonical: keys sorted at every depth, and the reservation order of the input does not matter", () => {
    const cfg = renderKea(wideDeny);
    expect(keysSorted(cfg)).toBe(true);
    const mac = fc
      .tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 }))
      .map(([a, b]) => `02:00:00:00:${a.toString(16).padStart(2, "0")}:${b.toString(16).padStart(2, "0")}`);
    fc.assert(
      fc.property(fc.uniqueArray(mac, { maxLength: 20 }), fc.integer(), (macs, seed) => {
        const rs = macs.map((m, i) => reservation(m, `10.20.2.${String(i + 1)}`, `vm-${String(i)}`));
        const shuffled = [...rs].sort((a, b) => hash(a.hwAddress, seed) - hash(b.hwAddress, seed));
        const a = JSON.stringify(renderKea({ ...wideDeny, reservations: rs }));
        const b = JSON.stringify(renderKea({ ...wideDeny, reservations: shuffled }));
        expect(b).toBe(a);
        const macsOut = subnetOf(renderKea({ ...wideDeny, reservations: shuffled }).Dhcp4).reservations.map(
          (r) => r["hw-address"],
        );
        expect(macsOut).toEqual([...macs].sort());
      }),
      { seed: 29 },
    );
  });
});

/** A seed-dependent ordering key, to shuffle deterministically. */
function hash(s: string, seed: number): number {
  let h = seed | 0;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x9e3779b1);
  return h;
}
