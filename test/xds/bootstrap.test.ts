// The Envoy bootstrap must be a valid envoy.config.bootstrap.v3.Bootstrap: encoded with the real
// protos (unknown fields and unloaded Any types throw), decoded back to the same JSON.
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { dialAddress, envoyBootstrap, envoyBootstrapYaml, splitHostPort } from "../../src/xds/bootstrap.js";
import { encodeBootstrap, roundTripBootstrap } from "../support/bootstrap-check.js";
import { adsTarget } from "../support/envoy/bootstrap.js";

describe("Envoy bootstrap", () => {
  const json = envoyBootstrap("clusters/vlan100-proxy", { host: "oooi-xds.oooi-system.svc", port: 18000 });

  it("encodes as a Bootstrap and decodes to the same JSON", () => {
    expect(encodeBootstrap(json).length).toBeGreaterThan(200);
    expect(roundTripBootstrap(json)).toEqual(JSON.parse(JSON.stringify(json)));
  });

  it("is rejected by the same encoder when a field is misspelled (the check is real)", () => {
    const bad = { ...json, dynamic_resource: {} };
    expect(() => encodeBootstrap(bad)).toThrow(/dynamic_resource/);
  });

  it("speaks ADS over gRPC v3 for LDS and CDS, admin on loopback", () => {
    const decoded = roundTripBootstrap(json);
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

describe("bootstrap.yaml", () => {
  const yaml = envoyBootstrapYaml("clusters/vlan100-proxy", { host: "127.0.0.1", port: 18000 });

  it("is the same Bootstrap as the JSON form, and an Envoy stand-in finds its ADS server in it", () => {
    const parsed = parse(yaml) as object;
    expect(roundTripBootstrap(parsed)).toEqual(
      JSON.parse(JSON.stringify(envoyBootstrap("clusters/vlan100-proxy", { host: "127.0.0.1", port: 18000 }))),
    );
    expect(adsTarget(parsed)).toMatchObject({ address: "127.0.0.1:18000", nodeCluster: "clusters/vlan100-proxy" });
  });
});

describe("dialAddress", () => {
  it.each([
    [
      { host: "0.0.0.0", port: 18000 },
      { host: "127.0.0.1", port: 18000 },
    ],
    [
      { host: "::", port: 1 },
      { host: "127.0.0.1", port: 1 },
    ],
    [
      { host: "10.0.0.5", port: 18000 },
      { host: "10.0.0.5", port: 18000 },
    ],
  ])("%j → %j", (listen, expected) => {
    expect(dialAddress(listen)).toEqual(expected);
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
