// A real DHCPv4 client for tests: busybox udhcpc, run once in a namespace. Its event script
// prints what the server handed out, which we parse instead of touching the interface.
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Netns } from "./netns.js";
import { run, which } from "./run.js";
import { skipUnless } from "../../support/peers.js";

/** What the client was given; `bound` false when no server answered with a lease. */
export interface DhcpLease {
  readonly bound: boolean;
  readonly ip?: string;
  readonly netmask?: string;
  readonly router?: string;
  /** Option 6, in the order the server sent them. */
  readonly dns: readonly string[];
  /** Option 12. */
  readonly hostname?: string;
  readonly leaseSeconds?: number;
  /** udhcpc's own output, for failure messages. */
  readonly log: string;
}

/** Options for requestLease(). */
export interface DhcpClientOptions {
  /** Set this MAC on the interface first. */
  readonly mac?: string;
  /** DISCOVERs to send before giving up (one second apart). */
  readonly tries?: number;
  /** Ask for this address (option 50), as a client renewing or rebooting with a lease does. */
  readonly requestIp?: string;
}

/** Why requestLease() cannot run here, or undefined. */
export async function dhcpClientSkipReason(): Promise<string | undefined> {
  return skipUnless((await which("busybox")) === undefined ? "busybox (udhcpc) not installed" : undefined);
}

/** Runs one DORA exchange on `iface` inside `ns`; `scratchDir` receives the event script. */
export async function requestLease(
  ns: Netns,
  iface: string,
  scratchDir: string,
  options: DhcpClientOptions = {},
): Promise<DhcpLease> {
  if (options.mac !== undefined) await run("ip", ["-n", ns.name, "link", "set", iface, "address", options.mac]);
  // One script per interface: clients may run in parallel, and rewriting a script another one
  // is executing fails with ETXTBSY.
  const script = join(scratchDir, `udhcpc-event-${iface}.sh`);
  writeFileSync(
    script,
    [
      "#!/bin/sh",
      '[ "$1" = bound ] || exit 0',
      'printf "OOOI ip=%s\\nOOOI netmask=%s\\nOOOI router=%s\\nOOOI dns=%s\\nOOOI hostname=%s\\nOOOI lease=%s\\n" \\',
      '  "$ip" "$subnet" "$router" "$dns" "$hostname" "$lease"',
      "",
    ].join("\n"),
  );
  chmodSync(script, 0o755);
  const tries = String(options.tries ?? 3);
  const r = await ns.exec(
    "busybox",
    [
      "udhcpc",
      "-i",
      iface,
      "-n",
      "-q",
      "-f",
      "-t",
      tries,
      "-T",
      "1",
      "-s",
      script,
      ...(options.requestIp === undefined ? [] : ["-r", options.requestIp]),
    ],
    { timeoutMs: 60_000 },
  );
  const fields = new Map<string, string>();
  for (const line of r.stdout.split("\n")) {
    const m = /^OOOI ([a-z]+)=(.*)$/.exec(line);
    if (m?.[1] !== undefined && m[2] !== undefined && m[2] !== "") fields.set(m[1], m[2].trim());
  }
  const lease = fields.get("lease");
  return {
    bound: r.code === 0 && fields.has("ip"),
    ...optional("ip", fields.get("ip")),
    ...optional("netmask", fields.get("netmask")),
    ...optional("router", fields.get("router")),
    dns: (fields.get("dns") ?? "").split(/\s+/).filter((s) => s !== ""),
    ...optional("hostname", fields.get("hostname")),
    ...(lease === undefined ? {} : { leaseSeconds: Number(lease) }),
    log: r.stdout + r.stderr,
  };
}

function optional<K extends string>(key: K, value: string | undefined): { [P in K]?: string } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: string };
}
