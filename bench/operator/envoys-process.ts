// The data plane's own process: one Envoy-like ADS client (SotW) per proxy node group, connected to
// the operator's real xDS server. Asked to watch for a worker address, it notes when (host
// monotonic clock) the first LDS response whose filter chains' source prefixes cover it was
// processed and ACKed — the end of the change→push path. (The renderer aggregates adjacent /32s
// into wider prefixes, so coverage is tested, not string equality.)
import { cidrContains, parseCidr, parseIPv4, type Cidr } from "../../src/model/ipv4.js";
import { LISTENER_TYPE_URL } from "../../src/xds/resource/protos.js";
import { EnvoyLikeClient } from "../../test/support/envoy/client.js";
import { monoMs } from "./stats.js";

/** Driver → data plane. */
export type EnvoysRequest =
  | { readonly op: "connect"; readonly address: string; readonly groups: readonly string[] }
  | { readonly op: "seen"; readonly id: number; readonly group: string; readonly address: string }
  | { readonly op: "stats" }
  | { readonly op: "inspect"; readonly group: string; readonly address: string }
  | { readonly op: "stop" };

/** Data plane → driver. */
export type EnvoysReply =
  | { readonly type: "connected"; readonly clients: number }
  | { readonly type: "seen"; readonly id: number; readonly at: number | undefined }
  | {
      readonly type: "inspect";
      readonly present: boolean;
      readonly version: string;
      readonly connected: boolean;
      readonly log: string[];
    }
  | {
      readonly type: "stats";
      readonly responses: number;
      readonly ldsResponses: number;
      readonly bytes: number;
      readonly nacks: number;
      readonly violations: number;
      readonly withListeners: number;
      readonly cpuMs: number;
    };

/** Every CidrRange (`address_prefix` + `prefix_len`) in a listener's filter chain matches. */
function prefixes(json: unknown, out: Cidr[]): void {
  if (Array.isArray(json)) {
    for (const v of json) prefixes(v, out);
  } else if (json !== null && typeof json === "object") {
    const o = json as Record<string, unknown>;
    const address = o["address_prefix"] ?? o["addressPrefix"];
    if (typeof address === "string") {
      const len = o["prefix_len"] ?? o["prefixLen"];
      const c = parseCidr(`${address}/${String(typeof len === "number" ? len : 32)}`);
      if (c !== undefined) out.push(c);
      return;
    }
    for (const v of Object.values(o)) prefixes(v, out);
  }
}

function covered(client: EnvoyLikeClient, address: string): boolean {
  const addr = parseIPv4(address);
  if (addr === undefined) return false;
  const ranges: Cidr[] = [];
  for (const l of client.listeners.values()) prefixes(l.json, ranges);
  return ranges.some((c) => cidrContains(c, addr));
}

/** Runs the clients until told to stop. */
export function envoysMain(): void {
  const send = (m: EnvoysReply): void => {
    process.send?.(m);
  };
  const clients: EnvoyLikeClient[] = [];
  const byGroup = new Map<string, EnvoyLikeClient>();
  const waiting = new Map<string, { id: number; address: string }[]>();
  let responses = 0;
  let ldsResponses = 0;
  let bytes = 0;
  let nacks = 0;

  const answerWaiting = (group: string, at: number): void => {
    const client = byGroup.get(group);
    const list = waiting.get(group) ?? [];
    if (client === undefined || list.length === 0) return;
    waiting.set(
      group,
      list.filter((w) => {
        if (!covered(client, w.address)) return true;
        send({ type: "seen", id: w.id, at });
        return false;
      }),
    );
  };

  process.on("message", (msg: EnvoysRequest) => {
    switch (msg.op) {
      case "connect":
        msg.groups.forEach((group, n) => {
          const client = new EnvoyLikeClient({
            address: msg.address,
            node: { id: `envoy-${String(n)}`, cluster: group },
          });
          client.events.on("response", (r) => {
            responses++;
            bytes += r.bytes;
            if (!r.accepted) nacks++;
            if (r.typeUrl !== LISTENER_TYPE_URL || !r.accepted) return;
            ldsResponses++;
            answerWaiting(group, monoMs());
          });
          client.connect();
          clients.push(client);
          byGroup.set(group, client);
        });
        send({ type: "connected", clients: clients.length });
        break;
      case "seen": {
        // Asked before the change is made: the address (fresh, never used) cannot be covered yet.
        waiting.set(msg.group, [...(waiting.get(msg.group) ?? []), { id: msg.id, address: msg.address }]);
        break;
      }
      case "stats":
        send({
          type: "stats",
          responses,
          ldsResponses,
          bytes,
          nacks,
          violations: clients.reduce((n, c) => n + c.violations.length, 0),
          withListeners: clients.filter((c) => c.listeners.size > 0).length,
          cpuMs: Math.round((process.cpuUsage().user + process.cpuUsage().system) / 1000),
        });
        break;
      case "inspect": {
        const c = byGroup.get(msg.group);
        send({
          type: "inspect",
          present: c !== undefined && covered(c, msg.address),
          version: c?.version(LISTENER_TYPE_URL) ?? "",
          connected: c?.connected ?? false,
          log: (c?.log ?? [])
            .slice(-6)
            .map(
              (r) =>
                `${r.typeUrl.split(".").pop() ?? ""} v=${r.version.slice(0, 8)} ok=${String(r.accepted)} n=${String(r.names.length)}`,
            ),
        });
        break;
      }
      case "stop":
        for (const c of clients) c.close();
        process.exit(0);
    }
  });
}
