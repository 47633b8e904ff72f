// Throwaway network namespaces for tests that run real network daemons (as root). Each test
// creates its own namespace with a random name and deletes it, also on failure.
import { randomBytes } from "node:crypto";
import { run, runOk, type RunOptions, type RunResult } from "./run.js";

/**
 * A veth interface to create inside the namespace, up, with an address such as "192.0.2.2/24".
 * Its peer end (named by peerName()) stays in the same namespace unless `peerNetns` names
 * another existing namespace, e.g. one holding a DHCP client.
 */
export interface NetnsLink {
  readonly name: string;
  /** Address with prefix length; omitted = no address. */
  readonly address?: string;
  /** Namespace to move the peer end into (brought up there, without address). */
  readonly peerNetns?: string;
}

/** Name of a link's veth peer: "p-<name>", cut to the kernel's 15-byte limit. */
export function peerName(link: string): string {
  return `p-${link}`.slice(0, 15);
}

/** A live namespace: run commands inside it, then delete it. */
export interface Netns {
  readonly name: string;
  /** Runs `cmd args…` inside the namespace (`ip netns exec`). */
  exec(cmd: string, args: readonly string[], options?: RunOptions): Promise<RunResult>;
  /** The argv that runs a command inside the namespace, for long-running spawns. */
  argv(cmd: string, args: readonly string[]): readonly string[];
  /** Deletes the namespace (and every interface in it); safe to call twice. */
  delete(): Promise<void>;
}

/** A namespace name unique to this run: "<prefix>-<8 hex>". */
export function netnsName(prefix = "oooi-kea"): string {
  return `${prefix}-${randomBytes(4).toString("hex")}`;
}

/**
 * Creates a namespace with loopback up and one veth interface per link (veth rather than dummy:
 * it needs no extra kernel module, and its peer can host a DHCP client later). Both are Ethernet
 * devices, as Kea's raw sockets need. Deletes the namespace again if setup fails.
 */
export async function createNetns(links: readonly NetnsLink[], prefix = "oooi-kea"): Promise<Netns> {
  const name = netnsName(prefix);
  await runOk("ip", ["netns", "add", name]);
  let deleted = false;
  const ns: Netns = {
    name,
    exec: (cmd, args, options) => run("ip", ["netns", "exec", name, cmd, ...args], options),
    argv: (cmd, args) => ["ip", "netns", "exec", name, cmd, ...args],
    delete: async () => {
      if (deleted) return;
      deleted = true;
      await run("ip", ["netns", "delete", name]);
    },
  };
  try {
    await runOk("ip", ["-n", name, "link", "set", "lo", "up"]);
    for (const link of links) {
      const peer = peerName(link.name);
      await runOk("ip", ["-n", name, "link", "add", link.name, "type", "veth", "peer", "name", peer]);
      if (link.address !== undefined) await runOk("ip", ["-n", name, "addr", "add", link.address, "dev", link.name]);
      await runOk("ip", ["-n", name, "link", "set", link.name, "up"]);
      const peerNs = link.peerNetns ?? name;
      if (peerNs !== name) await runOk("ip", ["-n", name, "link", "set", peer, "netns", peerNs]);
      await runOk("ip", ["-n", peerNs, "link", "set", peer, "up"]);
    }
  } catch (err) {
    await ns.delete();
    throw err;
  }
  return ns;
}

/** Whether a namespace of that name currently exists (for cleanup assertions). */
export async function netnsExists(name: string): Promise<boolean> {
  const r = await run("ip", ["netns", "list"]);
  return r.stdout.split("\n").some((line) => line.split(" ")[0] === name);
}

/**
 * Turns `uplink` (an interface inside `ns`) into a bridge port and adds `count` more veth ports
 * ("c0", "c1", …, up, no address), so that several DHCP clients with different MACs can run
 * at once on one server link. Returns the client interface names.
 */
export async function addClientPorts(ns: Netns, uplink: string, count: number): Promise<string[]> {
  const n = ["-n", ns.name];
  // No STP and no forward delay: ports forward as soon as they are up.
  await runOk("ip", [...n, "link", "add", "br0", "type", "bridge", "stp_state", "0", "forward_delay", "0"]);
  await runOk("ip", [...n, "link", "set", uplink, "master", "br0"]);
  await runOk("ip", [...n, "link", "set", "br0", "up"]);
  const ports: string[] = [];
  for (let i = 0; i < count; i++) {
    const port = `c${String(i)}`;
    await runOk("ip", [...n, "link", "add", port, "type", "veth", "peer", "name", `b${String(i)}`]);
    await runOk("ip", [...n, "link", "set", `b${String(i)}`, "master", "br0"]);
    await runOk("ip", [...n, "link", "set", `b${String(i)}`, "up"]);
    await runOk("ip", [...n, "link", "set", port, "up"]);
    ports.push(port);
  }
  return ports;
}
