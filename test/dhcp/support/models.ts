// Hand-built DhcpModels covering the shapes the renderer must handle; shared by the shape tests,
// the real-Kea checks and later DHCP integration suites.
import type { DhcpModel, Reservation } from "../../../src/model/types.js";

/** A reservation for VMI `name` in namespace "vms". */
export function reservation(hwAddress: string, ipAddress: string, name: string): Reservation {
  return { hwAddress, ipAddress, hostname: name, vmi: `vms/${name}` };
}

/** A /22 with a deny-policy pool, two resolvers and reservations outside the pool (unsorted). */
export const wideDeny: DhcpModel = {
  name: "infra/vlan-a-dhcp",
  interface: "net1",
  serverIP: "10.20.0.2",
  subnet: "10.20.0.0/22",
  netmask: "255.255.252.0",
  pool: { start: "10.20.1.0", end: "10.20.1.255" },
  routers: "10.20.0.1",
  dnsServers: ["10.20.0.3", "192.0.2.53"],
  validLifetimeSeconds: 3600,
  unknownClients: "deny",
  // The renderer reads reservations only; the allocation table is the model's bookkeeping.
  allocations: [],
  poolUse: { addresses: 0, allocated: 0 },
  options: [
    { code: 26, value: "1450", name: "interface-mtu", data: "1450", csvFormat: true },
    {
      code: 121,
      value: "10.0.0.0/8 - 10.20.0.1",
      name: "classless-static-route",
      data: "080A0A140001",
      csvFormat: false,
    },
  ],
  reservations: [
    reservation("02:00:00:00:00:2b", "10.20.2.11", "worker-b"),
    reservation("02:00:00:00:00:0a", "10.20.2.10", "worker-a"),
    reservation("02:00:00:00:00:ff", "10.20.3.254", "worker-z"),
  ],
};

/** A /24 whose pool serves unknown MACs; no resolvers, no reservations. */
export const openPool: DhcpModel = {
  name: "infra/vlan-b-dhcp",
  interface: "net1",
  serverIP: "192.168.50.2",
  subnet: "192.168.50.0/24",
  netmask: "255.255.255.0",
  pool: { start: "192.168.50.100", end: "192.168.50.200" },
  routers: "192.168.50.1",
  dnsServers: [],
  validLifetimeSeconds: 1800,
  unknownClients: "pool",
  allocations: [],
  poolUse: { addresses: 0, allocated: 0 },
  options: [],
  reservations: [],
};

/** No dynamic pool at all: only reserved VMIs get addresses. */
export const reservationsOnly: DhcpModel = {
  name: "infra/vlan-c-dhcp",
  interface: "net1",
  serverIP: "172.16.8.2",
  subnet: "172.16.8.0/27",
  netmask: "255.255.255.224",
  pool: undefined,
  routers: "172.16.8.1",
  dnsServers: ["172.16.8.3"],
  validLifetimeSeconds: 86400,
  unknownClients: "deny",
  allocations: [],
  poolUse: { addresses: 0, allocated: 0 },
  options: [],
  reservations: [reservation("0a:58:0a:00:00:01", "172.16.8.20", "cp-worker-0")],
};

/** A VMI kept the address it got from the pool: its reservation lies inside the pool. */
export const reservationInPool: DhcpModel = {
  ...openPool,
  name: "infra/vlan-d-dhcp",
  reservations: [reservation("02:aa:bb:cc:dd:ee", "192.168.50.150", "kept-lease")],
};

/** Every model Kea must accept. */
export const validModels: readonly DhcpModel[] = [wideDeny, openPool, reservationsOnly, reservationInPool];

/** Kea must reject it: a reservation outside the subnet. */
export const reservationOutsideSubnet: DhcpModel = {
  ...reservationsOnly,
  name: "infra/broken-dhcp",
  reservations: [reservation("0a:58:0a:00:00:02", "10.99.0.5", "stray")],
};
