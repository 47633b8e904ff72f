// DnsModel → what the responder serves: the CoreDNS renderer's files read back into an answer
// table, and the forward targets resolved to upstream addresses. No sockets here.
import { isIP } from "node:net";
import type { DnsModel } from "../../model/types.js";
import { COREFILE_KEY, renderCoreDns } from "../render/index.js";
import { RESOLV_CONF } from "../render/corefile.js";
import type { Upstream } from "./forward.js";
import { readRendered } from "./rendered.js";
import { buildTable, type AnswerTable } from "./table.js";

/** Everything one model yields for the responder. */
export interface ServingState {
  /** Undefined when there is no model: every query is refused. */
  readonly table: AnswerTable | undefined;
  readonly upstreams: readonly Upstream[];
  /** The rendered ConfigMap data, kept so the next rendering continues its SOA serials. */
  readonly files: Readonly<Record<string, string>> | undefined;
}

/** Where forward targets point besides the model's IPs. */
export interface UpstreamEnvironment {
  /** Nameservers of the node's resolv.conf, for the "/etc/resolv.conf" target. */
  readonly resolvConf: readonly string[];
  /** Port every upstream listens on (53 outside tests). */
  readonly port: number;
  /** Our own listening addresses; never forwarded to, which would loop. */
  readonly self: readonly Upstream[];
}

/** Renders `model` as CoreDNS would get it and turns the result into answer table and upstreams. */
export function buildServing(
  model: DnsModel | undefined,
  previous: Readonly<Record<string, string>> | undefined,
  env: UpstreamEnvironment,
): ServingState {
  if (model === undefined) return { table: undefined, upstreams: [], files: undefined };
  // Mount directory "/" makes every file path in the Corefile "/<ConfigMap key>".
  const { files } = renderCoreDns(model, previous === undefined ? { mountDir: "/" } : { mountDir: "/", previous });
  return servingFromFiles(files, env);
}

/**
 * What rendered files (a rendering's ConfigMap data, mounted at "/") serve: a helper process
 * answering UDP beside the responder gets the responder's files, so both serve the same serials.
 */
export function servingFromFiles(files: Readonly<Record<string, string>>, env: UpstreamEnvironment): ServingState {
  const rendered = readRendered(files, COREFILE_KEY);
  return { table: buildTable(rendered), upstreams: upstreamsOf(rendered.forwardTo, env), files };
}

function upstreamsOf(targets: readonly string[], env: UpstreamEnvironment): Upstream[] {
  const out: Upstream[] = [];
  const hosts = targets.flatMap((t) => (t === RESOLV_CONF ? env.resolvConf : [t]));
  for (const host of hosts) {
    if (isIP(host) === 0) continue;
    const u = { host, port: env.port };
    if (env.self.some((s) => sameEndpoint(s, u)) || out.some((o) => sameEndpoint(o, u))) continue;
    out.push(u);
  }
  return out;
}

function sameEndpoint(a: Upstream, b: Upstream): boolean {
  if (a.port !== b.port) return false;
  if (a.host === b.host) return true;
  // A responder on the wildcard address also answers on loopback.
  const wildcard = (h: string): boolean => h === "0.0.0.0" || h === "::";
  const loopback = (h: string): boolean => h.startsWith("127.") || h === "::1";
  return (wildcard(a.host) && loopback(b.host)) || (wildcard(b.host) && loopback(a.host));
}
