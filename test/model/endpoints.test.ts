// resolveEndpoints: a HostedCluster (HyperShift's v1beta1 shape) → per endpoint the hostname, port
// and source oooi publishes; one row per precedence rule (docs/reference.md#endpoint-names).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import type { HostedCluster } from "../../src/api/external.js";
import { resolveEndpoints } from "../../src/model/endpoints.js";

const D = "alpha.example.com";

function hc(spec: HostedCluster["spec"], status?: HostedCluster["status"]): HostedCluster {
  return {
    apiVersion: "hypershift.openshift.io/v1beta1",
    kind: "HostedCluster",
    metadata: { name: "alpha", namespace: "clusters" },
    ...(spec === undefined ? {} : { spec }),
    ...(status === undefined ? {} : { status }),
  };
}

const route = (service: string, hostname?: string) => ({
  service,
  servicePublishingStrategy: { type: "Route", ...(hostname === undefined ? {} : { route: { hostname } }) },
});

/** "name hostname:port (source)" per endpoint. */
function shown(h: HostedCluster | undefined): string[] {
  return resolveEndpoints(h, D).endpoints.map((e) => `${e.name} ${e.hostname}:${String(e.port)} (${e.source})`);
}

const CONVENTION = [
  "api api.alpha.example.com:6443 (convention)",
  "oauth oauth.alpha.example.com:443 (convention)",
  "ignition ignition.alpha.example.com:443 (convention)",
  "konnectivity konnectivity.alpha.example.com:443 (convention)",
];

describe("resolveEndpoints", () => {
  it.each([
    { name: "no HostedCluster: the convention", in: undefined, out: CONVENTION },
    { name: "a HostedCluster stating nothing: the convention", in: hc({}), out: CONVENTION },
    {
      name: "Routes without a hostname and no status: nothing is guessed",
      in: hc({ services: ["APIServer", "OAuthServer", "Konnectivity", "Ignition"].map((s) => route(s)) }),
      out: CONVENTION,
    },
    {
      name: "Route hostnames in spec.services: port 443, api included",
      in: hc({
        services: [
          route("APIServer", "api-alpha.hcp.example.net"),
          route("OAuthServer", "oauth-alpha.hcp.example.net"),
          route("Konnectivity", "Konnectivity-Alpha.hcp.example.net."),
          route("Ignition", "ignition-alpha.hcp.example.net"),
        ],
      }),
      out: [
        "api api-alpha.hcp.example.net:443 (HostedCluster spec.services[APIServer].servicePublishingStrategy.route.hostname)",
        "oauth oauth-alpha.hcp.example.net:443 (HostedCluster spec.services[OAuthServer].servicePublishingStrategy.route.hostname)",
        "ignition ignition-alpha.hcp.example.net:443 (HostedCluster spec.services[Ignition].servicePublishingStrategy.route.hostname)",
        "konnectivity konnectivity-alpha.hcp.example.net:443 (HostedCluster spec.services[Konnectivity].servicePublishingStrategy.route.hostname)",
      ],
    },
    {
      name: "status wins over spec; oauth's port from its callback URL",
      in: hc(
        { services: [route("APIServer", "api-spec.example.net"), route("Ignition", "ign-spec.example.net")] },
        {
          controlPlaneEndpoint: { host: "api-status.example.net", port: 6443 },
          oauthCallbackURLTemplate: "https://oauth-status.example.net:6443/oauth2callback/[identity-provider-name]",
          ignitionEndpoint: "ignition-status.example.net",
        },
      ),
      out: [
        "api api-status.example.net:6443 (HostedCluster status.controlPlaneEndpoint)",
        "oauth oauth-status.example.net:6443 (HostedCluster status.oauthCallbackURLTemplate)",
        "ignition ignition-status.example.net:443 (HostedCluster status.ignitionEndpoint)",
        "konnectivity konnectivity.alpha.example.com:443 (convention)",
      ],
    },
    {
      name: "a LoadBalancer hostname: 6443 for the API",
      in: hc({
        services: [
          {
            service: "APIServer",
            servicePublishingStrategy: { type: "LoadBalancer", loadBalancer: { hostname: "api.lb.example.net" } },
          },
        ],
      }),
      out: [
        "api api.lb.example.net:6443 (HostedCluster spec.services[APIServer].servicePublishingStrategy.loadBalancer.hostname)",
        ...CONVENTION.slice(1),
      ],
    },
    {
      name: "a strategy's other field is not read (type Route with a loadBalancer hostname)",
      in: hc({
        services: [
          {
            service: "Ignition",
            servicePublishingStrategy: { type: "Route", loadBalancer: { hostname: "x.example.net" } },
          },
        ],
      }),
      out: CONVENTION,
    },
  ])("$name", ({ in: input, out }) => {
    expect(shown(input)).toEqual(out);
    expect(resolveEndpoints(input, D).skipped).toEqual([]);
  });

  it.each([
    {
      name: "an address in status falls through to the spec's hostname",
      in: hc(
        { services: [route("APIServer", "api-alpha.hcp.example.net")] },
        { controlPlaneEndpoint: { host: "198.51.100.30", port: 6443 } },
      ),
      api: "api api-alpha.hcp.example.net:443 (HostedCluster spec.services[APIServer].servicePublishingStrategy.route.hostname)",
      skipped: ["status.controlPlaneEndpoint: is an address, not a name"],
    },
    {
      name: "NodePort ignition (address:port) falls back to the convention",
      in: hc({}, { ignitionEndpoint: "198.51.100.20:31500" }),
      api: CONVENTION[0],
      skipped: ["status.ignitionEndpoint: is an address, not a name"],
    },
    {
      name: "a name on a port the proxy does not serve",
      in: hc({}, { ignitionEndpoint: "ignition.nodes.example.net:31500" }),
      api: CONVENTION[0],
      skipped: ["status.ignitionEndpoint: is published on port 31500"],
    },
    {
      name: "konnectivity by LoadBalancer listens on 8091",
      in: hc({
        services: [
          {
            service: "Konnectivity",
            servicePublishingStrategy: { type: "LoadBalancer", loadBalancer: { hostname: "k.example.net" } },
          },
        ],
      }),
      api: CONVENTION[0],
      skipped: [
        "spec.services[Konnectivity].servicePublishingStrategy.loadBalancer.hostname: is published on port 8091",
      ],
    },
    {
      name: "an OAuth callback that is not a URL: its text is the name, and it states no port",
      in: hc({}, { oauthCallbackURLTemplate: "oauth.example.net" }),
      api: CONVENTION[0],
      skipped: ["status.oauthCallbackURLTemplate: is published on port (none)"],
    },
    {
      name: "empty texts and a port without a host state nothing",
      in: hc(
        {},
        { controlPlaneEndpoint: { host: "", port: 6443 }, oauthCallbackURLTemplate: "", ignitionEndpoint: ":443" },
      ),
      api: CONVENTION[0],
      skipped: [],
    },
    {
      name: "not a DNS name",
      in: hc({}, { controlPlaneEndpoint: { host: "api_alpha.example.net", port: 6443 } }),
      api: CONVENTION[0],
      skipped: ["status.controlPlaneEndpoint: is not a DNS name"],
    },
  ])("$name", ({ in: input, api, skipped }) => {
    const r = resolveEndpoints(input, D);
    expect(shown(input)[0]).toBe(api);
    expect(r.skipped.map((s) => `${s.field}: ${s.message.replace(/^"[^"]*" /, "").split(/[:;]/)[0] ?? ""}`)).toEqual(
      skipped,
    );
  });

  it("a HostedCluster of unexpected shapes (serve reads manifests unchecked) states nothing and never throws", () => {
    const odd = JSON.parse(
      JSON.stringify({
        metadata: { name: "alpha", namespace: "clusters" },
        spec: { services: [null, 3, { service: "Ignition", servicePublishingStrategy: "Route" }] },
        status: { controlPlaneEndpoint: { host: 7, port: "6443" }, ignitionEndpoint: 5, oauthCallbackURLTemplate: [] },
      }),
    ) as HostedCluster;
    expect(shown(odd)).toEqual(CONVENTION);
    expect(shown(JSON.parse('{"metadata":{},"spec":{"services":"x"},"status":"y"}') as HostedCluster)).toEqual(
      CONVENTION,
    );
  });

  it("reads the real-shaped fixture: Route-published Ignition (status) and Konnectivity (spec hostname)", () => {
    const file = join(
      import.meta.dirname,
      "..",
      "golden",
      "model",
      "hostedcluster-published-endpoints",
      "manifests",
      "hostedclusters.yaml",
    );
    const [alpha] = parseAllDocuments(readFileSync(file, "utf8")).map((d) => d.toJS() as HostedCluster);
    expect(shown(alpha)).toEqual([
      "api api-alpha.hcp.example.net:443 (HostedCluster status.controlPlaneEndpoint)",
      "oauth oauth-clusters-alpha.apps.mgmt.example.net:443 (HostedCluster status.oauthCallbackURLTemplate)",
      "ignition ignition-server-clusters-alpha.apps.mgmt.example.net:443 (HostedCluster status.ignitionEndpoint)",
      "konnectivity konnectivity-alpha.hcp.example.net:443 (HostedCluster spec.services[Konnectivity].servicePublishingStrategy.route.hostname)",
    ]);
  });
});
