// The real CoreDNS's /metrics (the rendered `prometheus` plugin) after queries from both views:
// what deploy/monitoring's PodMonitor scrapes from a DNSServer's pod.
import { digBatch } from "./batch.js";
import { renderExample, verificationList } from "./examples.js";
import type { RenderedDnsServer } from "./render-state.js";
import { clientIn, loopbackCidr, startCoreDns, type CoreDns } from "./rig.js";
import { startUpstream } from "./upstream.js";

/** A pod-network client: outside every example's VLAN once it is moved onto loopback. */
export const POD_CLIENT = "127.0.0.1";

/** One scrape of `coredns`'s metrics endpoint. */
export async function scrapeCoreDns(coredns: CoreDns): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${coredns.metricsPort}/metrics`);
  if (res.status !== 200) throw new Error(`CoreDNS /metrics answered ${res.status}`);
  return res.text();
}

/** The VLAN client `dig -b` uses for `server` once its view CIDR is on loopback. */
export const vlanClient = (server: RenderedDnsServer): string => clientIn(loopbackCidr(server.vlanCidr));

/**
 * What CoreDNS exports once the first DNSServer of `example` has answered its Verification list from
 * the VLAN and from the pod network (a metric vector shows no series, and so no `# TYPE`, before its
 * first count).
 */
export async function coreDnsExposition(example: string): Promise<string> {
  const { state, servers } = await renderExample(example);
  const [server] = servers;
  if (server === undefined) throw new Error(`${example} renders no DNSServer`);
  const queries = verificationList(state, server).map((e) => ({ name: e.name, type: "A" }));
  const upstream = await startUpstream();
  try {
    const coredns = await startCoreDns(server.files, { upstream, cidr: loopbackCidr });
    try {
      await digBatch(coredns, queries, { source: vlanClient(server) });
      await digBatch(coredns, queries, { source: POD_CLIENT });
      return await scrapeCoreDns(coredns);
    } finally {
      await coredns.close();
    }
  } finally {
    await upstream.close();
  }
}
