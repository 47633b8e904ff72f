// The floor: dns2's server and codec used the obvious way (parse every query into objects, build
// the response with Packet, let dns2 serialize it), with the same two views.
import { createServer, Packet, type DnsServer } from "dns2";
import { cidrContains, parseCidr, parseIPv4 } from "../../src/model/ipv4.js";
import type { DnsModel } from "../../src/model/types.js";

/** A running naive dns2 responder. */
export interface NaiveServer {
  readonly port: number;
  stop(): Promise<void>;
}

/** Starts the naive responder on 127.0.0.1, UDP only. */
export async function startNaive(model: DnsModel): Promise<NaiveServer> {
  const cidr = parseCidr(model.views[0].sourceCidr ?? "");
  const tables = model.views.map((v) => {
    const names = new Map<string, string>();
    const origins = new Set<string>();
    for (const z of v.zones) {
      origins.add(z.origin);
      for (const r of z.records) names.set(r.name, r.address);
    }
    return { names, origins };
  });
  const server: DnsServer = createServer({
    udp: true,
    handle: (request, send, client) => {
      const response = Packet.createResponseFromRequest(request);
      const q = request.questions[0];
      // UDP-only server: the client is a dgram RemoteInfo.
      const from = (client as { address?: unknown }).address;
      const ip = typeof from === "string" ? parseIPv4(from) : undefined;
      const table = cidr !== undefined && ip !== undefined && cidrContains(cidr, ip) ? tables[0] : tables[1];
      if (q !== undefined && table !== undefined) {
        const name = q.name.toLowerCase();
        const wildcard = `*.${name.slice(name.indexOf(".") + 1)}`;
        const address = table.names.get(name) ?? table.names.get(wildcard);
        response.header.aa = 1;
        if (address !== undefined && q.type === Packet.TYPE.A) {
          response.answers.push(
            new Packet.Resource({ name: q.name, type: Packet.TYPE.A, class: Packet.CLASS.IN, ttl: 30, address }),
          );
        } else if (address === undefined) {
          response.header.rcode = 3; // NXDOMAIN
        }
      }
      void send(response);
    },
  });
  const addresses = await server.listen({ udp: { port: 0, address: "127.0.0.1" } });
  return {
    port: addresses.udp?.port ?? 0,
    stop: () => server.close(),
  };
}
