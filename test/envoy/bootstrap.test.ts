// The Envoy bootstrap must be a valid envoy.config.bootstrap.v3.Bootstrap: encoded with the real
// protos (unknown fields and unloaded Any types throw), decoded back to the same JSON.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { afterAll, describe, expect, it } from "vitest";
import {
  dialAddress,
  envoyBootstrap,
  envoyBootstrapYaml,
  readinessListener,
  sdsFiles,
} from "../../src/envoy/bootstrap.js";
import { splitHostPort } from "../../src/envoy/xds-address.js";
import { envoyWorkload } from "../../src/operator/desired/envoy.js";
import { infraOwner } from "../../src/operator/desired/objects.js";
import { encodeBootstrap, roundTripBootstrap, roundTripSdsFile } from "../support/bootstrap-check.js";
import { adsTarget, adsTlsFiles } from "../support/envoy/bootstrap.js";
import { envoyCheckBinary, runEnvoyCheck, type EnvoyCheckRun } from "../support/envoy-check.js";

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

// The independent oracle: Envoy's generated Bootstrap type and its protoc-gen-validate rules
// (test/peers/envoy-check), not src's own encoder. A golden comparison would take a broken
// bootstrap as the new truth under UPDATE_GOLDEN=1; this check would not.
const checker = envoyCheckBinary();
describe.skipIf(checker.path === undefined)("bootstrap.yaml against Envoy's Bootstrap (envoy-check)", () => {
  const work = mkdtempSync(join(tmpdir(), "oooi-bootstrap-check-"));
  afterAll(() => {
    rmSync(work, { recursive: true, force: true });
  });
  const xds = { host: "oooi-xds.oooi-system.svc", port: 18000 };
  const yamlText = (): string => envoyBootstrapYaml("clusters/vlan100-proxy", xds);

  /** Checks `text` as the bootstrap file `name` (the checker reads bootstrap*.yaml|.json as a Bootstrap). */
  function checkAs(name: string, text: string): EnvoyCheckRun {
    const file = join(work, name);
    writeFileSync(file, text);
    return runEnvoyCheck(checker.path ?? "", [file]);
  }
  function broken(name: string, breakIt: (doc: Record<string, unknown>) => void): EnvoyCheckRun {
    const doc = parse(yamlText()) as Record<string, unknown>;
    breakIt(doc);
    return checkAs(`bootstrap-${name}.yaml`, stringify(doc));
  }
  const cluster = (doc: Record<string, unknown>, i: number): Record<string, unknown> => {
    const clusters = (doc["static_resources"] as { clusters: Record<string, unknown>[] }).clusters;
    const found = clusters[i];
    if (found === undefined) throw new Error(`no static cluster ${String(i)}`);
    return found;
  };

  it("accepts the YAML oooi writes, and the JSON the operator mounts with mTLS", () => {
    const plain = checkAs("bootstrap.yaml", yamlText());
    expect(plain.lines).toEqual([
      expect.stringMatching(/bootstrap\.yaml: ok \(bootstrap: 0 static listeners, 2 static clusters\)$/),
    ]);
    expect(plain.status).toBe(0);
    const tls = envoyBootstrap("clusters/vlan100-proxy", xds, { certDir: "/etc/oooi/xds-tls", sdsDir: "/etc/envoy" });
    const mtls = checkAs("bootstrap.json", JSON.stringify(tls));
    expect(mtls.lines).toEqual([expect.stringMatching(/bootstrap\.json: ok \(bootstrap: /)]);
    expect(mtls.status).toBe(0);
  });

  it("accepts it with the readiness listener the operator merges in (--config-yaml appends it)", () => {
    const doc = JSON.parse(JSON.stringify(envoyBootstrap("clusters/vlan100-proxy", xds))) as {
      static_resources: Record<string, unknown>;
    };
    doc.static_resources["listeners"] = [readinessListener("10.0.0.7")];
    const run = checkAs("bootstrap-readiness.json", JSON.stringify(doc));
    expect(run.lines).toEqual([expect.stringMatching(/ ok \(bootstrap: 1 static listeners, 2 static clusters\)$/)]);
  });

  it("refuses an ADS cluster with connect_timeout 0s (Cluster.connect_timeout must be > 0)", () => {
    const run = broken("zero-timeout", (d) => {
      cluster(d, 0)["connect_timeout"] = "0s";
    });
    expect(run.status).toBe(1);
    expect(run.lines.join("\n")).toMatch(
      /bootstrap-zero-timeout\.yaml: bootstrap: invalid Bootstrap\.StaticResources: .*Clusters\[0\]: .*invalid Cluster\.ConnectTimeout: value must be greater than 0s/,
    );
  });

  it("refuses an unknown field, strictly, at the top and inside an Any", () => {
    const top = broken("unknown-top", (d) => {
      d["dynamic_resource"] = {};
    });
    expect(top.status).toBe(1);
    expect(top.lines.join("\n")).toMatch(/does not parse as bootstrap: .*unknown field "dynamic_resource"/);
    const inAny = broken("unknown-in-any", (d) => {
      const options = cluster(d, 0)["typed_extension_protocol_options"] as Record<string, Record<string, unknown>>;
      const http = options["envoy.extensions.upstreams.http.v3.HttpProtocolOptions"] ?? {};
      http["explicit_http_config"] = { http2_protocol_option: {} };
    });
    expect(inAny.status).toBe(1);
    expect(inAny.lines.join("\n")).toMatch(/does not parse as bootstrap: .*unknown field "http2_protocol_option"/);
  });

  it("validates what an Any holds: a keepalive timeout of 0s inside HttpProtocolOptions", () => {
    const run = broken("any-content", (d) => {
      const options = cluster(d, 0)["typed_extension_protocol_options"] as Record<string, Record<string, unknown>>;
      const http = options["envoy.extensions.upstreams.http.v3.HttpProtocolOptions"] ?? {};
      http["explicit_http_config"] = {
        http2_protocol_options: { connection_keepalive: { interval: "30s", timeout: "0s" } },
      };
    });
    expect(run.status).toBe(1);
    expect(run.lines.join("\n")).toMatch(
      /static_resources\.clusters\[0\]\.typed_extension_protocol_options\[envoy\.extensions\.upstreams\.http\.v3\.HttpProtocolOptions\] \(envoy\.extensions\.upstreams\.http\.v3\.HttpProtocolOptions\): .*Timeout: value must be greater than or equal to 1ms/,
    );
  });

  it("refuses an ADS gRPC service naming no static cluster, and two static clusters of one name", () => {
    const ads = broken("ads-cluster", (d) => {
      cluster(d, 0)["name"] = "oooi-xds-renamed";
      (cluster(d, 0)["load_assignment"] as Record<string, unknown>)["cluster_name"] = "oooi-xds-renamed";
    });
    expect(ads.status).toBe(1);
    expect(ads.lines.join("\n")).toMatch(
      /ads_config\.grpc_services\[0\] names cluster "oooi-xds", which is not a static cluster \(unknown cluster\)/,
    );
    const twice = broken("duplicate-cluster", (d) => {
      cluster(d, 1)["name"] = "oooi-xds";
    });
    expect(twice.status).toBe(1);
    expect(twice.lines.join("\n")).toMatch(
      /duplicate cluster name "oooi-xds" \(entries 0 and 1\): names must be unique/,
    );
  });
});
