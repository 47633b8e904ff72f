// The Envoy bootstrap must be a valid envoy.config.bootstrap.v3.Bootstrap: encoded with the real
// protos (unknown fields and unloaded Any types throw), decoded back to the same JSON.
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { dialAddress, envoyBootstrap, envoyBootstrapYaml, sdsFiles, splitHostPort } from "../../src/envoy/bootstrap.js";
import { envoyWorkload } from "../../src/operator/desired/envoy.js";
import { infraOwner } from "../../src/operator/desired/objects.js";
import { encodeBootstrap, roundTripBootstrap, roundTripSdsFile } from "../support/bootstrap-check.js";
import { adsTarget, adsTlsFiles } from "../support/envoy/bootstrap.js";

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

describe("the bootstrap with mTLS (the operator's data planes)", () => {
  const xds = { host: "oooi-xds.oooi-system.svc", port: 18000 };
  const tls = { certDir: "/etc/oooi/xds-tls", sdsDir: "/etc/envoy" };
  const json = envoyBootstrap("clusters/vlan100-proxy", xds, tls);
  const files = sdsFiles(tls);
  const readSds = (path: string): unknown => {
    const name = path.slice(path.lastIndexOf("/") + 1);
    expect(path).toBe(`${tls.sdsDir}/${name}`);
    const file = files[name];
    if (file === undefined) throw new Error(`no SDS file ${path}`);
    return roundTripSdsFile(file);
  };

  it("is a strict Bootstrap, and its SDS files are strict DiscoveryResponses of tls.v3.Secret", () => {
    expect(roundTripBootstrap(json)).toEqual(JSON.parse(JSON.stringify(json)));
    for (const file of Object.values(files)) expect(roundTripSdsFile(file)).toEqual(JSON.parse(JSON.stringify(file)));
    const bad = { resources: [{ ...(files["sds-xds-ca.json"]?.["resources"] as object[])[0], validation_contxt: {} }] };
    expect(() => roundTripSdsFile(bad)).toThrow(/validation_contxt/);
  });

  it("reads the mounted Secret's three files, re-read on a move in its directory, and checks the server's name", () => {
    const found = adsTlsFiles(roundTripBootstrap(json), readSds);
    expect(found).toEqual({
      certificateChain: "/etc/oooi/xds-tls/tls.crt",
      privateKey: "/etc/oooi/xds-tls/tls.key",
      trustedCa: "/etc/oooi/xds-tls/ca.crt",
      // The kubelet swaps `..data` inside the mount: a watch on the files' own paths would miss it.
      watchedDirectories: ["/etc/oooi/xds-tls", "/etc/oooi/xds-tls"],
      serverSans: ["oooi-xds.oooi-system.svc"],
      sni: "oooi-xds.oooi-system.svc",
    });
    expect(() => adsTlsFiles(envoyBootstrap("clusters/vlan100-proxy", xds), readSds)).toThrow(/not TLS/);
  });

  it("the operator's proxy pod mounts the Secret by name; no certificate is in the ConfigMap or the template", () => {
    const input = {
      infraName: "vlan100",
      namespace: "clusters",
      nodeCluster: "clusters/vlan100-proxy",
      xds,
      image: "envoy",
      pinUserIds: false,
      labels: {},
      podLabels: {},
      networksAnnotation: "[]",
      owner: infraOwner("vlan100", "u"),
    };
    const [configMap, deployment] = envoyWorkload({ ...input, xdsTls: true });
    const data = configMap?.["data"] as Record<string, string>;
    expect(Object.keys(data).sort()).toEqual(["bootstrap.json", "sds-client-certificate.json", "sds-xds-ca.json"]);
    const bootstrap = JSON.parse(data["bootstrap.json"] ?? "{}") as object;
    const mounted = adsTlsFiles(bootstrap, (p) => JSON.parse(data[p.slice(p.lastIndexOf("/") + 1)] ?? "{}"));
    const pod = (deployment?.["spec"] as { template: { spec: Record<string, unknown> } }).template.spec;
    expect(pod["volumes"]).toContainEqual({
      name: "xds-tls",
      secret: { secretName: "vlan100-proxy-xds-tls", optional: true },
    });
    const envoy = (pod["containers"] as { volumeMounts: { name: string; mountPath: string }[] }[])[0];
    expect(envoy?.volumeMounts).toContainEqual({ name: "xds-tls", mountPath: "/etc/oooi/xds-tls", readOnly: true });
    expect(mounted.certificateChain.startsWith("/etc/oooi/xds-tls/")).toBe(true);
    expect(JSON.stringify([configMap, deployment])).not.toMatch(/BEGIN (CERTIFICATE|PRIVATE KEY)/);
    // Plaintext (a development operator): no transport socket, no SDS files.
    const [plainMap] = envoyWorkload({ ...input, xdsTls: false });
    expect(Object.keys(plainMap?.["data"] as object)).toEqual(["bootstrap.json"]);
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
