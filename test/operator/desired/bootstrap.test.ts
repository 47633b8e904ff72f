// The Envoy bootstrap must be a valid envoy.config.bootstrap.v3.Bootstrap: encoded with the real
// protos (unknown fields and unloaded Any types throw), decoded back to the same JSON.
import { beforeAll, describe, expect, it } from "vitest";
import { envoyBootstrap, splitHostPort } from "../../../src/operator/desired/envoy.js";
import { decodeResource, encodeResource, envoyProtoRoot } from "../../../src/xds/protos.js";

const BOOTSTRAP = "type.googleapis.com/envoy.config.bootstrap.v3.Bootstrap";

beforeAll(() => {
  // src/xds/protos.ts loads only what the ADS server serves; the bootstrap and the HTTP protocol
  // options its xDS cluster uses come from the same pinned @grpc/grpc-js-xds deps folder.
  const root = envoyProtoRoot();
  root.loadSync(
    ["envoy/config/bootstrap/v3/bootstrap.proto", "envoy/extensions/upstreams/http/v3/http_protocol_options.proto"],
    { keepCase: true },
  );
  root.resolveAll();
});

describe("Envoy bootstrap", () => {
  const json = envoyBootstrap("clusters/vlan100-proxy", { host: "oooi-xds.oooi-system.svc", port: 18000 });

  it("encodes as a Bootstrap and decodes to the same JSON", () => {
    const bytes = encodeResource(BOOTSTRAP, json);
    expect(bytes.length).toBeGreaterThan(200);
    expect(decodeResource(BOOTSTRAP, bytes)).toEqual(JSON.parse(JSON.stringify(json)));
  });

  it("is rejected by the same encoder when a field is misspelled (the check is real)", () => {
    const bad = { ...json, dynamic_resource: {} };
    expect(() => encodeResource(BOOTSTRAP, bad)).toThrow();
  });

  it("speaks ADS over gRPC v3 for LDS and CDS, admin on loopback", () => {
    const decoded = decodeResource(BOOTSTRAP, encodeResource(BOOTSTRAP, json));
    expect(decoded["dynamic_resources"]).toEqual({
      ads_config: {
        api_type: "GRPC",
        transport_api_version: "V3",
        set_node_on_first_message_only: true,
        grpc_services: [{ envoy_grpc: { cluster_name: "oooi-xds" } }],
      },
      cds_config: { ads: {}, resource_api_version: "V3" },
      lds_config: { ads: {}, resource_api_version: "V3" },
    });
    expect(decoded["admin"]).toEqual({ address: { socket_address: { address: "127.0.0.1", port_value: 9901 } } });
    expect(decoded["node"]).toEqual({ cluster: "clusters/vlan100-proxy" });
  });
});

describe("splitHostPort", () => {
  it.each([
    ["oooi-xds.oooi-system.svc:18000", { host: "oooi-xds.oooi-system.svc", port: 18000 }],
    ["10.0.0.1:1", { host: "10.0.0.1", port: 1 }],
    ["[fd00::1]:18000", { host: "fd00::1", port: 18000 }],
    ["host", undefined],
    [":18000", undefined],
    ["host:0", undefined],
    ["host:65536", undefined],
    ["host:18a", undefined],
  ])("%s", (text, expected) => {
    expect(splitHostPort(text)).toEqual(expected);
  });
});
