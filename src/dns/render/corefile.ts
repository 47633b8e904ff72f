// Corefile text: server blocks in the order CoreDNS must see them. Pure.
//
// CoreDNS facts this relies on (plugin docs and core/dnsserver/server.go, CoreDNS >= 1.10):
// - Several blocks may serve the same zone:port when all but the last carry a `view`. For a query,
//   the server walks the zone's blocks in Corefile order and takes the first whose view expressions
//   all pass. If none passes it does NOT refuse: it strips a label and retries with the parent zone,
//   finally the root block. A VLAN-only zone without an unfiltered block would therefore leak its
//   pod-network queries into whatever parent-zone block exists. We always end a zone with an
//   unfiltered block (the other view's file, or a plain forwarder), so the outcome is explicit.
// - `health` and `reload` are process wide and `ready` reports on its own port; each appears once,
//   in the root block.
// - `prometheus` counts only the queries of the blocks that carry it, so every block has it; the
//   blocks share one listener on the same address. Since 1.10 each series has a `view` label: the
//   view's name in a view block, "" in a block without one (coredns.io/plugins/metrics).
// - Plugin order inside a block is fixed by CoreDNS (plugin.cfg), not by the order written here.
// - Every block has its own plugin instances, so `cache` never mixes answers of different views.
// - The file plugin re-reads a zone file every `reload` interval and answers from memory; only the
//   forwarding blocks carry `cache`.

/** The source-address filter of a view block: CoreDNS `view NAME { expr incidr(client_ip(), CIDR) }`. */
export interface ViewFilter {
  readonly name: string;
  /** Canonical IPv4 CIDR. */
  readonly cidr: string;
}

/** How a block answers: authoritatively from a zone file, or by forwarding upstream. */
export type BlockAnswer = { readonly kind: "file"; readonly path: string } | { readonly kind: "forward" };

/** One `<zone>:53 { … }` server block. */
export interface ServerBlock {
  /** Normalized origin, or "." for the root block. */
  readonly zone: string;
  readonly view: ViewFilter | undefined;
  readonly answer: BlockAnswer;
}

/** Settings shared by every block. */
export interface CorefileSettings {
  /** `forward` targets: upstream IPs or "/etc/resolv.conf". Never empty. */
  readonly forwardTo: readonly string[];
  /** Undefined = no `cache` plugin. */
  readonly cacheSeconds: number | undefined;
  /** Corefile and zone-file re-read interval. */
  readonly reloadSeconds: number;
}

/** The node's resolver configuration inside the CoreDNS container. */
export const RESOLV_CONF = "/etc/resolv.conf";
/** The DNS port every block listens on. */
export const DNS_PORT = 53;
/**
 * Environment variable holding the pod's own address (the downward API's status.podIP). The
 * health, ready and metrics endpoints bind to it, so they listen on the pod network only, never on the
 * VLAN interface; CoreDNS substitutes `{$VAR}` in the Corefile (coredns.io/manual "Environment
 * Variables"). Unset (outside a pod) it is empty, and the plugins bind every address as before.
 */
export const POD_IP_ENV = "POD_IP";
/** Liveness endpoint of the CoreDNS process (health plugin). */
export const HEALTH_ADDRESS = `{$${POD_IP_ENV}}:8080`;
/** Readiness endpoint of the CoreDNS process (ready plugin). */
export const READY_ADDRESS = `{$${POD_IP_ENV}}:8181`;
/** Prometheus metrics endpoint, `/metrics` (prometheus plugin; 9153 is CoreDNS's own default port). */
export const METRICS_ADDRESS = `{$${POD_IP_ENV}}:9153`;
// The reload plugin refuses intervals under 2s; a file plugin interval of 0 disables reloading.
const MIN_COREFILE_RELOAD = 2;
const MIN_ZONE_RELOAD = 1;

/** One server block's text (the root block carries the process-wide plugins), ending in a newline. */
export function renderBlock(block: ServerBlock, s: CorefileSettings, root = false): string {
  const lines: string[] = [`${block.zone}:${DNS_PORT} {`];
  if (block.view !== undefined) {
    lines.push(`    view ${block.view.name} {`, `        expr incidr(client_ip(), '${block.view.cidr}')`, "    }");
  }
  lines.push("    errors", "    log", `    prometheus ${METRICS_ADDRESS}`);
  if (root) {
    lines.push(
      `    health ${HEALTH_ADDRESS}`,
      `    ready ${READY_ADDRESS}`,
      `    reload ${Math.max(MIN_COREFILE_RELOAD, s.reloadSeconds)}s`,
    );
  }
  // Only forwarded answers are cached: a zone file is already in memory, and a cache on top of it
  // kept a changed record (a new apps VIP) stale for the cache's TTL after the file's reload.
  if (s.cacheSeconds !== undefined && block.answer.kind === "forward") lines.push(`    cache ${s.cacheSeconds}`);
  if (block.answer.kind === "file") {
    lines.push(
      `    file ${block.answer.path} ${block.zone} {`,
      `        reload ${Math.max(MIN_ZONE_RELOAD, s.reloadSeconds)}s`,
      "    }",
    );
  } else {
    // Forwarding to the node's resolvers can point back at us; loop halts CoreDNS instead of
    // spinning. It probes the block's own zone, so each forwarding block carries it.
    if (s.forwardTo.includes(RESOLV_CONF)) lines.push("    loop");
    lines.push(`    forward . ${s.forwardTo.join(" ")}`);
  }
  lines.push("}");
  return `${lines.join("\n")}\n`;
}
