// `oooi explain --dns NAME --from IP`: which view, zone and record answer a query, decided by the
// embedded responder's own answer table (the same view selection and lookup it serves with).
// Pure: the DnsModel is rendered as CoreDNS gets it and read back, no sockets.
import { parseIPv4 } from "../../model/ipv4.js";
import type { DnsModel } from "../../model/types.js";
import { buildServing } from "./serving.js";
import { lookup, selectView } from "./table.js";
import { RCODE, TYPE, wireName } from "./dns-message.js";

export interface DnsExplanation {
  /** The view the source selects ("vlan" / "default"); undefined when none serves it. */
  readonly view: string | undefined;
  /** The most specific published zone holding the name in that view; undefined = forwarded. */
  readonly zone: string | undefined;
  /** "answer" with addresses, "nxdomain"/"nodata" from the zone, or "forwarded" upstream. */
  readonly outcome: "answer" | "nxdomain" | "nodata" | "forwarded" | "refused";
  /** A addresses of the answer, sorted. */
  readonly addresses: readonly string[];
}

/** Explains how `model`'s responder answers an A query for `name` from `source`. */
export function explainDnsQuery(model: DnsModel, source: string, name: string): DnsExplanation {
  const serving = buildServing(model, undefined, { resolvConf: [], port: 53, self: [] });
  const table = serving.table;
  const view = table === undefined ? undefined : selectView(table, parseIPv4(source));
  if (view === undefined) return { view: undefined, zone: undefined, outcome: "refused", addresses: [] };
  const wire = wireName(name);
  const sections = lookup(view, wire, TYPE.A);
  const modelView = model.views.find((v) => v.name === view.name);
  const lower = name.toLowerCase().replace(/\.$/, "");
  const zone = modelView?.zones
    .filter((z) => lower === z.origin || lower.endsWith(`.${z.origin}`))
    .sort((a, b) => b.origin.length - a.origin.length)[0];
  if (sections === undefined) return { view: view.name, zone: undefined, outcome: "forwarded", addresses: [] };
  const records = zone?.records ?? [];
  const exact = records.filter((r) => r.name === lower);
  const dot = lower.indexOf(".");
  const wildcard = dot < 0 ? [] : records.filter((r) => r.name === `*${lower.slice(dot)}`);
  const addresses = (exact.length > 0 ? exact : wildcard).map((r) => r.address).sort();
  const outcome =
    sections.rcode === RCODE.NXDOMAIN ? "nxdomain" : sections.ancount === 0 ? "nodata" : ("answer" as const);
  return { view: view.name, zone: zone?.origin, outcome, addresses: outcome === "answer" ? addresses : [] };
}
