// serve's split-horizon DNS responder (--dns-listen) and the render loop's DNS branch: each
// rendering's DNS model (the DNSServer --dns-server names, or the first) is what it answers. It
// answers on its own thread, so a long render on this one never delays an answer.
import type { Observable, Subscription } from "rxjs";
import type { Logger } from "pino";
import { startDnsResponderThread, type ThreadedDnsResponder } from "../../dns/server/index.js";
import type { DnsModel, Topology } from "../../model/types.js";
import type { Outputs } from "../../pipeline/outputs.js";
import { tagListen } from "../listen-error.js";
import type { ServeOptions } from "./options.js";

export function startServeDns(
  opts: ServeOptions & { readonly dnsListen: { readonly host: string; readonly port: number } },
  rendered$: Observable<Outputs>,
  log: Logger,
): { readonly responder: Promise<ThreadedDnsResponder>; readonly subscription: Subscription } {
  const listen = opts.dnsListen;
  const started = startDnsResponderThread({
    host: listen.host,
    port: listen.port,
    ...(opts.dnsMaxTcpConnections === undefined ? {} : { maxTcpConnections: opts.dnsMaxTcpConnections }),
    ...(opts.dnsMaxTcpPerClient === undefined ? {} : { maxTcpConnectionsPerClient: opts.dnsMaxTcpPerClient }),
    ...(opts.dnsUdpProcesses === undefined ? {} : { udpProcesses: opts.dnsUdpProcesses }),
    logger: (m) => {
      log.debug(m);
    },
  }).then((r) => {
    log.info(
      { udp: r.address.udpPort, tcp: r.address.tcpPort, host: r.address.host },
      `DNS responder listening on ${r.address.host}:${String(r.address.udpPort)}`,
    );
    return r;
  });
  const responder = tagListen(started, "--dns-listen", `${listen.host}:${String(listen.port)}`);
  const subscription = rendered$.subscribe((out) => {
    const model = selectDnsModel(out.model.topologies, opts.dnsServer);
    void responder.then((r) => {
      r.update(model);
    });
  });
  return { responder, subscription };
}

/** The DNS model of DNSServer `name` ("namespace/name"), or the first Infra's with DNS enabled. */
export function selectDnsModel(topologies: readonly Topology[], name?: string): DnsModel | undefined {
  return topologies.find((t) => t.dns !== undefined && (name === undefined || t.dns.name === name))?.dns;
}
