import { describe, expect, test } from "vitest";
import {
  CLUSTER_TYPE_URL,
  DISCOVERY_REQUEST_TYPE_URL,
  DISCOVERY_RESPONSE_TYPE_URL,
  ENDPOINT_TYPE_URL,
  LISTENER_TYPE_URL,
  ROUTE_TYPE_URL,
  TCP_PROXY_TYPE_URL,
  decodeResource,
  encodeResource,
  envoyProtoRoot,
  messageType,
} from "../../src/xds/resource/protos.js";
import { renderEnvoy } from "../../src/envoy/render/index.js";
import type { EnvoyResources } from "../../src/envoy/resources.js";
import { richModel } from "../envoy/proxy-fixture.js";

function rendered(): EnvoyResources {
  const r = renderEnvoy(richModel());
  if (!r.ok) throw new Error(r.errors.map((e) => e.message).join("\n"));
  return r.resources;
}

const KINDS = [
  ["listeners", LISTENER_TYPE_URL],
  ["clusters", CLUSTER_TYPE_URL],
  ["endpoints", ENDPOINT_TYPE_URL],
  ["routes", ROUTE_TYPE_URL],
] as const;

function tcpListener(typedConfig: Record<string, unknown>): object {
  return {
    name: "l",
    filter_chains: [{ name: "c", filters: [{ name: "envoy.filters.network.tcp_proxy", typed_config: typedConfig }] }],
  };
}

describe("Envoy protos from @grpc/grpc-js-xds", () => {
  test("load every type the renderer and the ADS server need", () => {
    const root = envoyProtoRoot();
    for (const name of [
      "envoy.config.listener.v3.Listener",
      "envoy.config.cluster.v3.Cluster",
      "envoy.config.endpoint.v3.ClusterLoadAssignment",
      "envoy.config.route.v3.RouteConfiguration",
      "envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy",
      "envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
      "envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector",
      "envoy.extensions.filters.http.router.v3.Router",
      "envoy.service.discovery.v3.DiscoveryRequest",
      "envoy.service.discovery.v3.DiscoveryResponse",
      "envoy.service.discovery.v3.DeltaDiscoveryRequest",
      "envoy.service.discovery.v3.DeltaDiscoveryResponse",
    ]) {
      expect(root.lookupType(name).fullName).toBe("." + name);
    }
    expect(root.lookupService("envoy.service.discovery.v3.AggregatedDiscoveryService").methods).toHaveProperty(
      "StreamAggregatedResources",
    );
    // Field names stay as in the .proto files.
    expect(Object.keys(messageType(CLUSTER_TYPE_URL).fields)).toContain("connect_timeout");
  });
});

describe("encodeResource/decodeResource round trip", () => {
  test("every rendered resource of a rich model survives protobuf bytes unchanged", () => {
    const res = rendered();
    let count = 0;
    for (const [kind, typeUrl] of KINDS) {
      expect(res[kind].length).toBeGreaterThan(0);
      for (const resource of res[kind]) {
        const bytes = encodeResource(typeUrl, resource);
        expect(bytes.length).toBeGreaterThan(0);
        const back = decodeResource(typeUrl, bytes);
        expect(back).toStrictEqual(resource);
        // Deterministic encoding: the decoded form encodes to the very same bytes.
        expect(Buffer.from(encodeResource(typeUrl, back)).equals(Buffer.from(bytes))).toBe(true);
        count++;
      }
    }
    expect(count).toBe(res.listeners.length + res.clusters.length + res.endpoints.length + res.routes.length);
  });

  test("nested Any (typed_config of a filter inside a chain) is packed as real protobuf bytes", () => {
    const l = tcpListener({ "@type": TCP_PROXY_TYPE_URL, stat_prefix: "s", cluster: "c1" });
    const Listener = messageType(LISTENER_TYPE_URL);
    const raw = Listener.toObject(Listener.decode(encodeResource(LISTENER_TYPE_URL, l)), { bytes: Array });
    const any = (raw as { filter_chains: { filters: { typed_config: { type_url: string; value: number[] } }[] }[] })
      .filter_chains[0]?.filters[0]?.typed_config;
    expect(any?.type_url).toBe(TCP_PROXY_TYPE_URL);
    const TcpProxy = messageType(TCP_PROXY_TYPE_URL);
    expect(TcpProxy.toObject(TcpProxy.decode(Uint8Array.from(any?.value ?? [])))).toStrictEqual({
      stat_prefix: "s",
      cluster: "c1",
    });
  });

  test("an Any packs to the bytes protobufjs's own Any wrapper gives, a bare type name and a Struct payload included", () => {
    const Listener = messageType(LISTENER_TYPE_URL);
    const bareName = TCP_PROXY_TYPE_URL.slice(TCP_PROXY_TYPE_URL.indexOf("/") + 1);
    const configs = [
      { "@type": TCP_PROXY_TYPE_URL, stat_prefix: "s", cluster: "c1", idle_timeout: "30s" },
      { "@type": bareName, stat_prefix: "s", cluster: "c2" },
      { "@type": "type.googleapis.com/google.protobuf.Struct", value: { a: 1, b: ["x", null] } },
    ];
    for (const typedConfig of configs) {
      const ours = encodeResource(LISTENER_TYPE_URL, tcpListener(typedConfig));
      // The oracle: protobufjs packing "@type" itself (its wrapper), from the same fields in its object forms.
      const payload = typedConfig["@type"].endsWith("Struct")
        ? {
            "@type": typedConfig["@type"],
            fields: { a: { numberValue: 1 }, b: { listValue: { values: [{ stringValue: "x" }, { nullValue: 0 }] } } },
          }
        : { ...typedConfig, ...("idle_timeout" in typedConfig ? { idle_timeout: { seconds: "30" } } : {}) };
      const theirs = Listener.encode(Listener.fromObject(tcpListener(payload))).finish();
      expect(Buffer.from(ours).toString("hex")).toBe(Buffer.from(theirs).toString("hex"));
    }
  });

  test("well-known types use their proto3 JSON forms (Duration text, bare wrapper values, Struct)", () => {
    const cluster = {
      name: "c",
      type: "STATIC",
      connect_timeout: "0.250s",
      per_connection_buffer_limit_bytes: 32768,
      ignore_health_on_host_removal: true,
      metadata: { filter_metadata: { oooi: { owner: "clusters/alpha", weight: 2, tags: ["a", null, { x: false }] } } },
    };
    expect(decodeResource(CLUSTER_TYPE_URL, encodeResource(CLUSTER_TYPE_URL, cluster))).toStrictEqual(cluster);
    const ms = { name: "c", connect_timeout: "1.000500s" };
    expect(decodeResource(CLUSTER_TYPE_URL, encodeResource(CLUSTER_TYPE_URL, ms))).toStrictEqual(ms);
  });

  test("DiscoveryRequest/Response encode with node metadata and Any resources", () => {
    const req = {
      version_info: "v1",
      node: { id: "envoy-0", cluster: "oooi-system/infra-proxy", metadata: { zone: "a" } },
      resource_names: ["https-443"],
      type_url: LISTENER_TYPE_URL,
      response_nonce: "n1",
      error_detail: { code: 3, message: "rejected" },
    };
    expect(decodeResource(DISCOVERY_REQUEST_TYPE_URL, encodeResource(DISCOVERY_REQUEST_TYPE_URL, req))).toStrictEqual(
      req,
    );
    const cluster = rendered().clusters[0] ?? {};
    const resp = {
      version_info: "v2",
      resources: [{ "@type": CLUSTER_TYPE_URL, ...cluster }],
      type_url: CLUSTER_TYPE_URL,
      nonce: "2",
    };
    expect(
      decodeResource(DISCOVERY_RESPONSE_TYPE_URL, encodeResource(DISCOVERY_RESPONSE_TYPE_URL, resp)),
    ).toStrictEqual(resp);
  });
});

describe("fields unknown to the schema are detected, never dropped", () => {
  test("protobufjs fromObject on its own silently drops an unknown field (why the strict walk exists)", () => {
    const Cluster = messageType(CLUSTER_TYPE_URL);
    const bytes = Cluster.encode(Cluster.fromObject({ name: "c", conect_timeout: "5s" })).finish();
    expect(Cluster.toObject(Cluster.decode(bytes))).toStrictEqual({ name: "c" });
  });

  test.each([
    [
      "a misspelled top-level field",
      CLUSTER_TYPE_URL,
      { name: "c", conect_timeout: "5s" },
      /Cluster\.conect_timeout: unknown field/,
    ],
    ["a camelCase name", CLUSTER_TYPE_URL, { name: "c", connectTimeout: "5s" }, /connectTimeout: unknown field/],
    [
      "a field inside typed_config of a filter of a chain",
      LISTENER_TYPE_URL,
      tcpListener({ "@type": TCP_PROXY_TYPE_URL, stat_prefix: "s", clustr: "x" }),
      /filter_chains\[0\]\.filters\[0\]\.typed_config<envoy\.extensions\.filters\.network\.tcp_proxy\.v3\.TcpProxy>\.clustr: unknown field/,
    ],
    [
      "an Any whose @type is not loaded",
      LISTENER_TYPE_URL,
      tcpListener({ "@type": "type.googleapis.com/envoy.extensions.filters.network.nope.v3.Nope" }),
      /is not a loaded message type/,
    ],
    ["an Any without @type", LISTENER_TYPE_URL, tcpListener({ stat_prefix: "s" }), /an Any needs "@type"/],
    [
      "a string where a port number belongs",
      LISTENER_TYPE_URL,
      { name: "l", address: { socket_address: { address: "0.0.0.0", port_value: "https" } } },
      /port_value: "https" is not a valid uint32/,
    ],
    [
      "an enum value that does not exist",
      CLUSTER_TYPE_URL,
      { name: "c", type: "DNS" },
      /is not a value of enum DiscoveryType/,
    ],
    ["a malformed Duration", CLUSTER_TYPE_URL, { name: "c", connect_timeout: 5 }, /expected a Duration/],
    [
      "two members of one oneof",
      CLUSTER_TYPE_URL,
      { name: "c", eds_cluster_config: { eds_config: { ads: {}, self: {} } } },
      /ads and self are both set in oneof config_source_specifier/,
    ],
  ])("encodeResource rejects %s", (_what, typeUrl, json, message) => {
    expect(() => encodeResource(typeUrl, json)).toThrow(message);
  });

  test("decodeResource rejects an Any whose packed type is unknown instead of returning it opaque", () => {
    const Listener = messageType(LISTENER_TYPE_URL);
    const bytes = Listener.encode(
      Listener.fromObject({
        name: "l",
        filter_chains: [
          { filters: [{ name: "x", typed_config: { type_url: "type.googleapis.com/acme.Unknown", value: [1, 2] } }] },
        ],
      }),
    ).finish();
    expect(() => decodeResource(LISTENER_TYPE_URL, bytes)).toThrow(/unknown type/);
  });
});
