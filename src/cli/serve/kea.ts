// A rendering's DHCP model → the local kea-dhcp4 through its control socket (serve --kea-socket).
import type { Observable, Subscription } from "rxjs";
import type { Logger } from "pino";
import type { ApplierEvent } from "../../dhcp/applier.js";
import { KeaSync, selectDhcpModel } from "../../dhcp/kea/sync.js";
import type { Outputs } from "../../pipeline/outputs.js";
import type { ServeOptions } from "./options.js";

/** Keeps the Kea behind `socket` on the newest rendering's DHCP model; close() stops it. */
export function driveKea(
  opts: ServeOptions & { readonly keaSocket: string },
  rendered$: Observable<Outputs>,
  log: Logger,
): { readonly subscription: Subscription; close(): void } {
  const socket = opts.keaSocket;
  const sync = new KeaSync({
    socketPath: socket,
    ...(opts.dhcpInterface === undefined ? {} : { interface: opts.dhcpInterface }),
    ...(opts.keaHooksDir === undefined ? {} : { hooksDirectory: opts.keaHooksDir }),
    ...(opts.keaLeaseFile === undefined ? {} : { leaseFile: opts.keaLeaseFile }),
    applier: {
      onEvent: (e) => {
        logKeaEvent(log, socket, e);
      },
    },
  });
  // The applier coalesces: a burst of models ends with the newest one applied.
  const subscription = rendered$.subscribe((out) => {
    void sync.update(selectDhcpModel(out.model.topologies, opts.dhcpServer));
  });
  return {
    subscription,
    close: () => {
      sync.close();
    },
  };
}

function logKeaEvent(log: Logger, socket: string, e: ApplierEvent): void {
  if (e.type === "waiting") {
    // Logged at the first attempt and then rarely: a missing socket is expected while Kea starts.
    if (e.attempt === 1 || e.attempt % 20 === 0)
      log.warn({ socket, attempt: e.attempt }, `Kea not reachable yet, retrying: ${e.error}`);
    return;
  }
  if (e.type === "learned") {
    log.info({ socket, interfaces: e.interfaces }, "Kea control socket reached");
    return;
  }
  const r = e.result;
  if (r.status === "applied")
    log.info(
      { socket, hash: r.hash, persisted: r.persisted },
      r.persisted ? "Kea configuration applied" : `Kea configuration applied but not written: ${r.text ?? ""}`,
    );
  else if (r.status === "rejected")
    log.error(
      { socket, hash: r.hash, command: r.command },
      `Kea rejected the configuration and keeps the previous one: ${r.text}`,
    );
}
