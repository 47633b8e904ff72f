// The Envoy stand-in NACKs on its own what Envoy rejects: every row is a real rendering broken in
// one way and encoded to protobuf bytes by the server's codec; the stand-in's rules reject what it
// decodes, and for LDS/CDS a bare gRPC server (our cache would refuse to publish it) sends it on a
// real ADS stream, which the stand-in NACKs with error_detail.
// Where the rule is a protoc-gen-validate annotation, the real Go checker (test/peers/envoy-check)
// must reject the same resource, so the stand-in's rules cannot drift from Envoy's.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Server, ServerCredentials, type ServerDuplexStream } from "@grpc/grpc-js";
import { afterAll, describe, expect, it } from "vitest";
import { renderEnvoy } from "../../src/envoy/render/index.js";
import type { EnvoyResources } from "../../src/envoy/resources.js";
import {
  CLUSTER_TYPE_URL,
  ENDPOINT_TYPE_URL,
  LISTENER_TYPE_URL,
  ROUTE_TYPE_URL,
  encodeResource,
  messageType,
} from "../../src/xds/resource/protos.js";
import { envoyCheckBinary, runEnvoyCheck } from "../support/envoy-check.js";
import { EnvoyLikeClient } from "../support/envoy/client.js";
import { METHODS } from "../support/envoy/raw.js";
import { decodeSotwRequest, type SotwRequest } from "../../src/xds/server/codec.js";
import { decodeToJson } from "../support/envoy/protos.js";
import { envoyRejects } from "../support/envoy/rules.js";
import { richModel } from "../envoy/proxy-fixture.js";

type Json = Record<string, unknown>;
const checker = envoyCheckBinary();
const work = mkdtempSync(join(tmpdir(), "oooi-stand-in-"));
afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

function base(): EnvoyResources {
  const r = renderEnvoy(richModel());
  if (!r.ok) throw new Error(r.errors.map((e) => e.message).join("\n"));
  return structuredClone(r.resources);
}

const byName = (items: object[], name: string): Json => {
  const found = items.find((x) => (x as Json)["name"] === name);
  if (found === undefined) throw new Error(`no ${name}`);
  return found as Json;
};
const firstFilter = (listener: Json, chain = 0): Json =>
  ((listener["filter_chains"] as Json[])[chain]?.["filters"] as Json[])[0]?.["typed_config"] as Json;

interface Row {
  readonly name: string;
  readonly typeUrl: string;
  readonly breakIt: (r: EnvoyResources) => object;
  readonly nack: RegExp;
  /** What the Go checker says about the same resource; undefined when the rule is not a PGV rule. */
  readonly checker: RegExp | undefined;
}

/** A rendered cluster turned LOGICAL_DNS (a hostname-only apps target) with `count` endpoints. */
const logicalDns = (r: EnvoyResources, count: number): Json => {
  const c = r.clusters[0] as Json;
  const name = c["name"] as string;
  const endpoint = (i: number): Json => ({
    endpoint: { address: { socket_address: { address: `lb-${String(i)}.example.net`, port_value: 443 } } },
  });
  return {
    name,
    connect_timeout: c["connect_timeout"],
    type: "LOGICAL_DNS",
    dns_lookup_family: "V4_ONLY",
    load_assignment: {
      cluster_name: name,
      endpoints: [{ lb_endpoints: Array.from({ length: count }, (_, i) => endpoint(i)) }],
    },
  };
};

const ROWS: readonly Row[] = [
  {
    name: "a TcpProxy without stat_prefix",
    typeUrl: LISTENER_TYPE_URL,
    breakIt: (r) => {
      const l = byName(r.listeners, "https-443");
      delete firstFilter(l)["stat_prefix"];
      return l;
    },
    nack: /listener "https-443": TcpProxy: stat_prefix must not be empty/,
    checker: /TcpProxy\.StatPrefix/,
  },
  {
    name: "an HttpConnectionManager without stat_prefix",
    typeUrl: LISTENER_TYPE_URL,
    breakIt: (r) => {
      const l = byName(r.listeners, "http-80");
      delete firstFilter(l)["stat_prefix"];
      return l;
    },
    nack: /listener "http-80": HttpConnectionManager: stat_prefix must not be empty/,
    checker: /HttpConnectionManager\.StatPrefix/,
  },
  {
    name: "a connect_timeout of 0s",
    typeUrl: CLUSTER_TYPE_URL,
    breakIt: (r) => ({ ...(r.clusters[0] as Json), connect_timeout: "0s" }),
    nack: /connect_timeout "0s" must be greater than 0s/,
    checker: /Cluster\.ConnectTimeout: value must be greater than 0s/,
  },
  {
    name: "an empty cluster name",
    typeUrl: CLUSTER_TYPE_URL,
    breakIt: (r) => ({ ...(r.clusters[0] as Json), name: "" }),
    nack: /Cluster: name must not be empty/,
    checker: /Cluster\.Name: value length must be at least 1/,
  },
  {
    name: "a LOGICAL_DNS cluster with two endpoints",
    typeUrl: CLUSTER_TYPE_URL,
    breakIt: (r) => logicalDns(r, 2),
    nack: /LOGICAL_DNS clusters must have a single locality_lb_endpoint and a single lb_endpoint/,
    checker: undefined,
  },
  {
    name: "an empty ClusterLoadAssignment cluster_name",
    typeUrl: ENDPOINT_TYPE_URL,
    breakIt: (r) => ({ ...(r.endpoints[0] as Json), cluster_name: "" }),
    nack: /cluster_name must not be empty/,
    checker: /ClusterLoadAssignment\.ClusterName: value length must be at least 1/,
  },
  {
    name: "a route to an empty cluster name",
    typeUrl: ROUTE_TYPE_URL,
    breakIt: (r) => {
      const rc = r.routes[0] as { virtual_hosts: { routes: { route: Json }[] }[] };
      const route = rc.virtual_hosts[0]?.routes[0];
      if (route) route.route["cluster"] = "";
      return rc;
    },
    nack: /route cluster must not be empty/,
    checker: /RouteAction\.Cluster: value length must be at least 1/,
  },
  {
    name: "two filter chains with the same match",
    typeUrl: LISTENER_TYPE_URL,
    breakIt: (r) => {
      const l = byName(r.listeners, "https-443");
      const chains = l["filter_chains"] as Json[];
      chains.push({ ...structuredClone(chains[0] ?? {}), name: "copy" });
      return l;
    },
    // Envoy's listener manager rule, not a PGV annotation: the Go checker cannot see it.
    nack: /filter chain "copy" has the same matching rules as "clusters\/alpha\/apps-https"/,
    checker: undefined,
  },
];

/** Serves one SotW DiscoveryResponse carrying `resource`, and hands back the client's next request. */
async function serveOnce(
  typeUrl: string,
  resource: object,
): Promise<{ address: string; reply: Promise<SotwRequest>; close: () => void }> {
  const server = new Server();
  const response = messageType("envoy.service.discovery.v3.DiscoveryResponse");
  let resolveReply: (r: SotwRequest) => void = () => undefined;
  const reply = new Promise<SotwRequest>((resolve) => {
    resolveReply = resolve;
  });
  server.register(
    METHODS.adsSotw,
    (call: ServerDuplexStream<Buffer, Buffer>) => {
      call.on("data", (bytes: Buffer) => {
        const req = decodeSotwRequest(bytes);
        if (req.typeUrl !== typeUrl) return;
        if (req.responseNonce === "n1") {
          resolveReply(req);
          return;
        }
        if (req.responseNonce !== "") return;
        const value = encodeResource(typeUrl, resource);
        const message = response.fromObject({
          version_info: "v1",
          type_url: typeUrl,
          nonce: "n1",
          resources: [{ type_url: typeUrl, value }],
        });
        call.write(Buffer.from(response.encode(message).finish()));
      });
      call.on("error", () => undefined);
    },
    (b: Buffer) => b,
    (b: Buffer) => b,
    "bidi",
  );
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (e, p) => {
      if (e) reject(e);
      else resolve(p);
    });
  });
  return {
    address: `127.0.0.1:${String(port)}`,
    reply,
    close: () => {
      server.forceShutdown();
    },
  };
}

describe("the Envoy stand-in rejects what Envoy rejects", () => {
  it.each(ROWS)("rejects $name, decoded from real protobuf bytes", ({ typeUrl, breakIt, nack }) => {
    const resource = breakIt(base());
    expect(envoyRejects(typeUrl, decodeToJson(typeUrl, encodeResource(typeUrl, resource)))).toMatch(nack);
  });

  // LDS and CDS are the wildcard types the stand-in subscribes to unprompted.
  it.each(ROWS.filter((r) => r.typeUrl === LISTENER_TYPE_URL || r.typeUrl === CLUSTER_TYPE_URL))(
    "NACKs $name on an ADS stream, keeping nothing of it",
    async ({ typeUrl, breakIt, nack }) => {
      const peer = await serveOnce(typeUrl, breakIt(base()));
      const c = new EnvoyLikeClient({ address: peer.address, node: { id: "nack-0", cluster: "g" } });
      try {
        c.connect();
        const req = await peer.reply;
        expect(req.errorDetail?.message).toMatch(nack);
        expect(c.log.at(-1)?.accepted).toBe(false);
        expect(c.listeners.size + c.clusters.size).toBe(0);
      } finally {
        c.close();
        peer.close();
      }
    },
  );

  it.skipIf(checker.path === undefined).each(ROWS.filter((r) => r.checker !== undefined))(
    "the Go checker rejects the same: $name",
    ({ name, typeUrl, breakIt, checker: says }) => {
      const broken = base();
      const resource = breakIt(broken);
      const key = {
        [LISTENER_TYPE_URL]: "listeners",
        [CLUSTER_TYPE_URL]: "clusters",
        [ENDPOINT_TYPE_URL]: "endpoints",
        [ROUTE_TYPE_URL]: "routes",
      }[typeUrl];
      const file = join(work, `${name.replace(/[^a-z0-9]+/gi, "-")}.json`);
      writeFileSync(
        file,
        JSON.stringify({ listeners: [], clusters: [], endpoints: [], routes: [], [key ?? ""]: [resource] }),
      );
      const run = runEnvoyCheck(checker.path ?? "", [file]);
      expect(run.status).toBe(1);
      expect(
        run.lines.some((l) => says?.test(l)),
        run.lines.join("\n"),
      ).toBe(true);
    },
  );

  it("accepts a LOGICAL_DNS cluster with its one hostname endpoint, as the Go checker does", () => {
    const cluster = logicalDns(base(), 1);
    expect(
      envoyRejects(CLUSTER_TYPE_URL, decodeToJson(CLUSTER_TYPE_URL, encodeResource(CLUSTER_TYPE_URL, cluster))),
    ).toBeUndefined();
    if (checker.path === undefined) return;
    const file = join(work, "logical-dns.json");
    writeFileSync(file, JSON.stringify({ listeners: [], clusters: [cluster], endpoints: [], routes: [] }));
    const run = runEnvoyCheck(checker.path, [file]);
    expect(run.lines.join("\n")).toMatch(/ ok \(/);
    expect(run.status).toBe(0);
  });

  it("accepts every resource of a real rendering", () => {
    const r = base();
    const all: [string, object[]][] = [
      [LISTENER_TYPE_URL, r.listeners],
      [CLUSTER_TYPE_URL, r.clusters],
      [ENDPOINT_TYPE_URL, r.endpoints],
      [ROUTE_TYPE_URL, r.routes],
    ];
    const verdicts = all.flatMap(([t, items]) =>
      items.map((x) => envoyRejects(t, decodeToJson(t, encodeResource(t, x)))),
    );
    expect(verdicts.length).toBeGreaterThan(10);
    expect(verdicts.filter((v) => v !== undefined)).toEqual([]);
  });
});
