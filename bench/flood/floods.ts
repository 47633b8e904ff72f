// The floods of issue 25, each against a fresh `oooi serve` (served.ts): what a hostile tenant or
// a careless client does to one port. A flood starts, runs until stopped and then says what it did.
import { writeFile, rm } from "node:fs/promises";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { Client, Metadata } from "@grpc/grpc-js";
import { ENDPOINT_TYPE_URL, LISTENER_TYPE_URL } from "../../src/xds/resource/type-urls.js";
import { ENVOY_CHANNEL_OPTIONS, METHODS, RawStream, type DeltaStream } from "../../test/support/envoy/raw.js";
import {
  decodeDeltaResponse,
  decodeSotwResponse,
  encodeDeltaRequest,
  encodeSotwRequest,
  type SotwRequestInit,
} from "../../test/support/envoy/wire.js";
import { aQuery, tcpFramed } from "./dns-wire.js";
import { GROUP, UNKNOWN_GROUP, type Pki, type Served } from "./served.js";

/** A running flood: stop() ends it and reports what it did. */
export type Running = () => Record<string, unknown> | Promise<Record<string, unknown>>;

/** Cleared when the flood is asked to stop. */
class Flag {
  #on = true;
  active(): boolean {
    return this.#on;
  }
  stop(): void {
    this.#on = false;
  }
}

export interface Flood {
  readonly name: string;
  /** Flags beside served.ts's. */
  readonly serveArgs?: readonly string[];
  /** The legitimate client also tries TCP (the flood takes TCP slots). */
  readonly tcpProbe?: boolean;
  start(served: Served, pki: Pki): Promise<Running>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Opens a TCP connection; resolves with the socket once connected, or undefined if refused. */
function tcp(port: number): Promise<Socket | undefined> {
  return new Promise((resolve) => {
    const s = connect(port, "127.0.0.1");
    s.once("connect", () => {
      resolve(s);
    });
    s.once("error", () => {
      resolve(undefined);
    });
  });
}

/** Sockets still open (the server closes those past its cap). */
const openCount = (sockets: readonly Socket[]) => sockets.filter((s) => !s.destroyed && s.readyState === "open").length;

/** Row 5: idle TCP connections on the xDS port, past its cap (default 4,096 here), never speaking TLS. */
export const xdsIdleConnections = (count: number): Flood => ({
  name: "xds_idle_tcp_connections",
  async start(served) {
    const sockets: Socket[] = [];
    for (let i = 0; i < count; i += 200) {
      const batch = await Promise.all(Array.from({ length: Math.min(200, count - i) }, () => tcp(served.xdsPort)));
      for (const s of batch) {
        if (s === undefined) continue;
        s.on("error", () => undefined);
        sockets.push(s);
      }
    }
    return () => {
      const stillOpen = openCount(sockets);
      for (const s of sockets) s.destroy();
      return { connections_opened: count, still_open_at_end: stillOpen };
    };
  },
});

/**
 * Row 10: status pages that never read /events, past the 64 allowed, while xDS streams come and
 * go (each open, push, ack and close is a new view sent to every page).
 */
export const sseNeverRead = (count: number): Flood => ({
  name: "sse_clients_never_reading",
  async start(served, pki) {
    const sockets: Socket[] = [];
    for (let i = 0; i < count; i += 1) {
      const s = await tcp(served.httpPort);
      if (s === undefined) continue;
      s.on("error", () => undefined);
      s.pause();
      s.write(`GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n`);
      sockets.push(s);
    }
    const client = new Client(`localhost:${String(served.xdsPort)}`, pki.group, ENVOY_CHANNEL_OPTIONS);
    const running = new Flag();
    let churned = 0;
    const churn = (async () => {
      while (running.active()) {
        const call = client.makeBidiStreamRequest(
          METHODS.adsSotw,
          encodeSotwRequest,
          decodeSotwResponse,
          new Metadata(),
        );
        call.on("error", () => undefined);
        call.write({ node: { id: `page-churn-${String(churned)}`, cluster: GROUP }, type_url: LISTENER_TYPE_URL });
        await sleep(200);
        call.cancel();
        churned += 1;
      }
    })();
    return async () => {
      running.stop();
      await churn;
      client.close();
      const stillOpen = openCount(sockets);
      for (const s of sockets) s.destroy();
      return { clients: count, still_open_at_end: stillOpen, xds_streams_churned: churned };
    };
  },
});

/** Row 8: DNS-over-TCP connections writing queries as fast as the server takes them, never reading a reply. */
export const dnsTcpPipelined = (connections: number): Flood => ({
  name: "dns_tcp_pipelined_never_read",
  tcpProbe: true,
  async start(served) {
    const batch = Buffer.concat(
      Array.from({ length: 1000 }, (_, i) => tcpFramed(aQuery(i, "api.alpha.clusters.example.com"))),
    );
    let written = 0;
    const sockets: Socket[] = [];
    for (let i = 0; i < connections; i += 1) {
      const s = await tcp(served.dnsPort);
      if (s === undefined) continue;
      s.on("error", () => undefined);
      s.pause();
      const pump = () => {
        while (!s.destroyed && s.write(batch)) written += 1000;
      };
      s.on("drain", pump);
      pump();
      sockets.push(s);
    }
    return () => {
      const stillOpen = openCount(sockets);
      for (const s of sockets) s.destroy();
      return { connections, queries_written: written, still_open_at_end: stillOpen };
    };
  },
});

/** Row 15: DNS-over-TCP connections at the cap, each sending one byte every `everyMs`; closed ones reconnect. */
export const dnsTcpTrickle = (connections: number, everyMs: number): Flood => ({
  name: "dns_tcp_trickle",
  tcpProbe: true,
  start(served) {
    const message = tcpFramed(aQuery(1, "api.alpha.clusters.example.com"));
    const running = new Flag();
    let reconnects = 0;
    const open = new Set<Socket>();
    const one = async (): Promise<void> => {
      while (running.active()) {
        const s = await tcp(served.dnsPort);
        if (s === undefined) {
          await sleep(everyMs);
          continue;
        }
        open.add(s);
        s.on("error", () => undefined);
        const closed = new Promise<void>((resolve) => {
          s.once("close", () => {
            resolve();
          });
        });
        for (let i = 0; running.active() && !s.destroyed; i = (i + 1) % message.length) {
          s.write(message.subarray(i, i + 1));
          await Promise.race([sleep(everyMs), closed]);
        }
        open.delete(s);
        s.destroy();
        if (running.active()) reconnects += 1;
      }
    };
    const all = Promise.all(Array.from({ length: connections }, one));
    return Promise.resolve(async () => {
      const stillOpen = open.size;
      running.stop();
      for (const s of open) s.destroy();
      await all;
      return {
        connections,
        byte_every_ms: everyMs,
        closed_by_server_and_reconnected: reconnects,
        open_at_end: stillOpen,
      };
    });
  },
});

/** Opens a Delta ADS stream of the example's group for EDS and waits for its first answer. */
export async function deltaStream(served: Served, pki: Pki): Promise<DeltaStream> {
  const client = new Client(`localhost:${String(served.xdsPort)}`, pki.group, ENVOY_CHANNEL_OPTIONS);
  const stream = new RawStream(client, METHODS.adsDelta, encodeDeltaRequest, decodeDeltaResponse);
  stream.send({
    node: { id: "delta-flood", cluster: GROUP },
    type_url: ENDPOINT_TYPE_URL,
    resource_names_subscribe: ["flood-0"],
  });
  await stream.next(30_000);
  return stream;
}

/**
 * One request subscribing `names` (and acknowledging `nonce`), answered: every name is made up, so
 * the answer lists them as removed.
 */
export async function subscribe(stream: DeltaStream, nonce: string, names: string[]): Promise<string> {
  stream.send({ type_url: ENDPOINT_TYPE_URL, response_nonce: nonce, resource_names_subscribe: names });
  return (await stream.next(30_000)).nonce;
}

/** Row 9: one Delta stream subscribing one more name per request until the stream's cap ends it. */
export const deltaOneMoreName = (): Flood => ({
  name: "delta_one_more_name_per_request",
  async start(served, pki) {
    const stream = await deltaStream(served, pki);
    let nonce = stream.received[0]?.nonce ?? "";
    let requests = 0;
    const running = new Flag();
    let end = "";
    const run = (async () => {
      while (running.active()) {
        requests += 1;
        try {
          nonce = await subscribe(stream, nonce, [`flood-${String(requests)}`]);
        } catch (e) {
          end = (e as Error).message;
          return;
        }
      }
    })();
    return async () => {
      running.stop();
      await run;
      stream.close();
      return { requests, names_subscribed: requests, stream_end: end === "" ? "open" : end };
    };
  },
});

/** Row 20: streams with a new node id each, in a node group no manifest defines (its own certificate's group). */
export const unknownNodeIds = (count: number): Flood => ({
  name: "node_ids_in_unknown_group",
  start(served, pki) {
    const client = new Client(`localhost:${String(served.xdsPort)}`, pki.unknown, ENVOY_CHANNEL_OPTIONS);
    const running = new Flag();
    let opened = 0;
    const run = (async () => {
      while (running.active() && opened < count) {
        const calls = Array.from({ length: 100 }, () => {
          const call = client.makeBidiStreamRequest(
            METHODS.adsSotw,
            encodeSotwRequest,
            decodeSotwResponse,
            new Metadata(),
          );
          call.on("error", () => undefined);
          const req: SotwRequestInit = {
            node: { id: `ghost-${String(opened)}`, cluster: UNKNOWN_GROUP },
            type_url: LISTENER_TYPE_URL,
          };
          call.write(req);
          opened += 1;
          return call;
        });
        await sleep(50);
        for (const c of calls) c.cancel();
      }
    })();
    return Promise.resolve(async () => {
      running.stop();
      await run;
      client.close();
      return { node_ids: opened };
    });
  },
});

/** Services of a namespace nothing attaches: parsed and decoded, rendered into nothing. */
function bigManifest(bytes: number, variant: number): string {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; ; i += 1) {
    const doc = `apiVersion: v1\nkind: Service\nmetadata:\n  name: flood-${String(i)}\n  namespace: flood-${String(variant)}\nspec:\n  type: ClusterIP\n  clusterIP: 172.31.${String((i >> 8) & 255)}.${String(i & 255)}\n  ports:\n    - port: 443\n---\n`;
    if (size + doc.length > bytes) break;
    parts.push(doc);
    size += doc.length;
  }
  return parts.join("");
}

/** Row 11: a manifest just under --max-manifest-bytes (8 MiB), written, rewritten once, then removed. */
export const bigManifestFile = (bytes: number): Flood => ({
  name: "manifest_just_under_size_limit",
  async start(served) {
    const file = join(served.manifests, "flood.yaml");
    const first = bigManifest(bytes, 0);
    await writeFile(file, first);
    const running = new Flag();
    const rewrite = (async () => {
      await sleep(6000);
      if (running.active()) await writeFile(file, bigManifest(bytes, 1));
    })();
    return async () => {
      running.stop();
      await rewrite;
      await rm(file);
      return { file_bytes: Buffer.byteLength(first), writes: 2, removed_before_rss_after: true };
    };
  },
});
