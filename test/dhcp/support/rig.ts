// A complete DHCP test bench: kea-dhcp4 in a server namespace on `net1`, whose wire ends in a
// client namespace bridged to several ports so DHCP clients with VM MACs can run in parallel.
// Kea starts from the bootstrap configuration and is then driven through its control socket.
import { bootstrapKeaConfig } from "../../../src/dhcp/kea/bootstrap.js";
import { requestLease, type DhcpClientOptions, type DhcpLease } from "./dhcp-client.js";
import { findHooksDirectory, keaWorkDir, startKea, type KeaProcess, type KeaWorkDir } from "./kea.js";
import { addClientPorts, createNetns, peerName, type Netns } from "./netns.js";

/** Options of createKeaRig(). */
export interface KeaRigOptions {
  /** Kea's interface; default "net1". */
  readonly iface?: string;
  /** The server's address with prefix, e.g. "192.0.2.2/24". */
  readonly serverAddress: string;
  /** Client ports = DHCP clients that may run at once; default 4. */
  readonly ports?: number;
  /** Interfaces in the bootstrap config; default [iface]. */
  readonly bootstrapInterfaces?: readonly string[];
}

/** A running bench; call destroy() (also after failures). */
export interface KeaRig {
  readonly server: Netns;
  readonly client: Netns;
  readonly work: KeaWorkDir;
  readonly hooksDirectory: string;
  readonly ports: readonly string[];
  /** The running Kea, if started. */
  readonly kea: KeaProcess | undefined;
  startKea(): Promise<KeaProcess>;
  stopKea(): Promise<void>;
  /** One DORA per MAC, up to `ports` at a time; results in the order of `macs`. */
  leases(macs: readonly string[], options?: Omit<DhcpClientOptions, "mac">): Promise<DhcpLease[]>;
  destroy(): Promise<void>;
}

/** Creates both namespaces, the bridge and Kea's work directory with the bootstrap config (Kea not started). */
export async function createKeaRig(options: KeaRigOptions): Promise<KeaRig> {
  const iface = options.iface ?? "net1";
  const hooksDirectory = (await findHooksDirectory()) ?? "";
  const work = keaWorkDir();
  const client = await createNetns([], "oooi-cli");
  let server: Netns | undefined;
  let kea: KeaProcess | undefined;
  const destroy = async (): Promise<void> => {
    await kea?.stop();
    kea = undefined;
    await server?.delete();
    await client.delete();
    work.remove();
  };
  try {
    server = await createNetns([{ name: iface, address: options.serverAddress, peerNetns: client.name }]);
    const ports = await addClientPorts(client, peerName(iface), options.ports ?? 4);
    work.writeConfig(
      bootstrapKeaConfig({
        controlSocket: work.controlSocket,
        interfaces: options.bootstrapInterfaces ?? [iface],
        leaseFile: work.leaseFile,
        hooksDirectory,
      }),
    );
    const srv = server;
    return {
      server: srv,
      client,
      work,
      hooksDirectory,
      ports,
      get kea() {
        return kea;
      },
      startKea: async () => {
        kea = await startKea(srv, work);
        return kea;
      },
      stopKea: async () => {
        await kea?.stop();
        kea = undefined;
      },
      leases: async (macs, opts = {}) => {
        const out: DhcpLease[] = new Array<DhcpLease>(macs.length);
        let next = 0;
        await Promise.all(
          ports.map(async (port) => {
            for (let i = next++; i < macs.length; i = next++) {
              out[i] = await requestLease(client, port, work.dir, { ...opts, mac: macs[i] as string });
            }
          }),
        );
        return out;
      },
      destroy,
    };
  } catch (err) {
    await destroy();
    throw err;
  }
}
