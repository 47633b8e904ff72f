// The pure parts of the apps-ingress loop: hosted object shaping, cleanup order, the status after
// each observation (last good VIP, lastSyncTime moving only on change), and the hosted kubeconfig.
import { describe, expect, it } from "vitest";
import { appsIngressSettings } from "../../../src/model/apps-ingress.js";
import { hostedKubeConfig, serviceAddress } from "../../../src/operator/apps-ingress/hosted.js";
import {
  appliedNames,
  cleanupOrder,
  cleanupOrderApplied,
  ingressService,
  metallbObjects,
  metallbSubscription,
  staleObjects,
} from "../../../src/operator/apps-ingress/objects.js";
import { appliedOf, nextAppsIngressStatus, vipOf } from "../../../src/operator/apps-ingress/phase.js";

const config = (over: Record<string, unknown> = {}, service: Record<string, unknown> = {}) =>
  appsIngressSettings({
    infraRef: { name: "i" },
    hostedClusterRef: { name: "h" },
    dns: { clusterName: "h", baseDomain: "example.com" },
    appsIngress: {
      enabled: true,
      metallb: { addressPoolName: "apps", ipAddressPoolRange: "192.0.2.200-192.0.2.209", ...over },
      service,
      ports: { http: 8080 },
    },
  });

describe("hosted objects", () => {
  it("Subscription with a configurable channel and source", () => {
    expect(metallbSubscription(config({ channel: "4.20", source: "mirror" })).body).toMatchObject({
      apiVersion: "operators.coreos.com/v1alpha1",
      kind: "Subscription",
      metadata: { name: "metallb-operator", namespace: "openshift-operators" },
      spec: {
        channel: "4.20",
        source: "mirror",
        sourceNamespace: "openshift-marketplace",
        name: "metallb-operator",
        installPlanApproval: "Automatic",
      },
    });
  });

  it("MetalLB, IPAddressPool and L2Advertisement (named, or advertise-<pool>)", () => {
    expect(
      metallbObjects(config({ l2AdvertisementName: "l2" })).map((o) => [o.kind, o.body.metadata.name, o.body["spec"]]),
    ).toEqual([
      ["MetalLB", "metallb", {}],
      ["IPAddressPool", "apps", { addresses: ["192.0.2.200-192.0.2.209"], autoAssign: true }],
      ["L2Advertisement", "l2", { ipAddressPools: ["apps"] }],
    ]);
  });

  it("the Service: user labels and annotations merged, oooi's keys win, invalid keys dropped", () => {
    const s = ingressService(
      config(
        {},
        {
          name: "router-lb",
          labels: { team: "apps", "app.kubernetes.io/managed-by": "me", "bad key": "x" },
          annotations: {
            "external-dns.alpha.kubernetes.io/hostname": "*.apps.h.example.com",
            "metallb.universe.tf/address-pool": "other",
          },
        },
      ),
    ).body;
    expect(s.metadata).toEqual({
      name: "router-lb",
      namespace: "openshift-ingress",
      labels: { team: "apps", "app.kubernetes.io/managed-by": "oooi" },
      annotations: {
        "external-dns.alpha.kubernetes.io/hostname": "*.apps.h.example.com",
        "metallb.universe.tf/address-pool": "apps",
      },
    });
    expect(s["spec"]).toEqual({
      type: "LoadBalancer",
      selector: { "ingresscontroller.operator.openshift.io/deployment-ingresscontroller": "default" },
      ports: [
        { name: "http", port: 8080, targetPort: 80, protocol: "TCP" },
        { name: "https", port: 443, targetPort: 443, protocol: "TCP" },
      ],
    });
  });

  it("cleanup order: Service, L2Advertisement, IPAddressPool, MetalLB, Subscription; existing MetalLB: only the Service", () => {
    expect(cleanupOrder(config()).map((o) => o.kind)).toEqual([
      "Service",
      "L2Advertisement",
      "IPAddressPool",
      "MetalLB",
      "Subscription",
    ]);
    expect(cleanupOrder(config({ installOperator: false, addressPoolName: undefined })).map((o) => o.kind)).toEqual([
      "Service",
    ]);
  });
});

describe("nextAppsIngressStatus", () => {
  const T0 = Date.parse("2026-01-01T00:00:00Z");
  const ready = nextAppsIngressStatus(
    undefined,
    { phase: "Ready", ingress: { ip: "192.0.2.200" }, service: "ns/s" },
    T0,
  );

  it("Ready with an IP", () => {
    expect(ready).toEqual({
      phase: "Ready",
      reason: "IngressReady",
      message: "LoadBalancer Service ns/s has 192.0.2.200",
      externalIP: "192.0.2.200",
      lastSyncTime: "2026-01-01T00:00:00Z",
    });
  });

  it("lastSyncTime moves only when the status changes", () => {
    const again = nextAppsIngressStatus(
      ready,
      { phase: "Ready", ingress: { ip: "192.0.2.200" }, service: "ns/s" },
      T0 + 60_000,
    );
    expect(again).toEqual(ready);
    const moved = nextAppsIngressStatus(
      ready,
      { phase: "Ready", ingress: { ip: "192.0.2.201" }, service: "ns/s" },
      T0 + 60_000,
    );
    expect(moved).toMatchObject({ externalIP: "192.0.2.201", lastSyncTime: "2026-01-01T00:01:00Z" });
  });

  it("Degraded keeps the last VIP (last good) and says so; Pending drops it", () => {
    const degraded = nextAppsIngressStatus(
      ready,
      { phase: "Degraded", reason: "HostedClusterAccessFailed", message: "hosted API: refused" },
      T0,
    );
    expect(degraded).toMatchObject({
      phase: "Degraded",
      reason: "HostedClusterAccessFailed",
      externalIP: "192.0.2.200",
    });
    expect(degraded.message).toBe("hosted API: refused; *.apps keeps routing to 192.0.2.200");
    const pending = nextAppsIngressStatus(
      degraded,
      { phase: "Pending", reason: "WaitingForExternalIP", message: "none" },
      T0,
    );
    expect(pending).toEqual({
      phase: "Pending",
      reason: "WaitingForExternalIP",
      message: "none",
      lastSyncTime: "2026-01-01T00:00:00Z",
    });
  });

  it("hostname only: Ready, no externalIP, the reason says no record is published", () => {
    const s = nextAppsIngressStatus(
      undefined,
      { phase: "Ready", ingress: { hostname: "lb.example.net" }, service: "ns/s" },
      T0,
    );
    expect(s).toMatchObject({ phase: "Ready", reason: "ExternalHostnameOnly", externalHostname: "lb.example.net" });
    expect(s).not.toHaveProperty("externalIP");
    expect(s.message).toContain("no wildcard DNS record");
  });
});

describe("appsIngressStatus.applied*: what was applied, so a rename or disable removes it", () => {
  const T0 = Date.parse("2026-01-01T00:00:00Z");
  const first = appliedNames(config());
  const path = (o: { kind: string; body: { metadata: { namespace: string; name: string } } }) =>
    `${o.kind} ${o.body.metadata.namespace}/${o.body.metadata.name}`;

  it("records the Service, pool and L2Advertisement a pass applied; an existing MetalLB records only the Service", () => {
    expect(first).toEqual({
      appliedServiceName: "oooi-ingress",
      appliedServiceNamespace: "openshift-ingress",
      appliedAddressPoolName: "apps",
      appliedL2AdvertisementName: "advertise-apps",
    });
    expect(appliedNames(config({ installOperator: false, addressPoolName: "given" }))).toEqual({
      appliedServiceName: "oooi-ingress",
      appliedServiceNamespace: "openshift-ingress",
    });
  });

  it("nextAppsIngressStatus writes them, and a Degraded pass (which applied nothing new) keeps them", () => {
    const ready = nextAppsIngressStatus(
      undefined,
      { phase: "Ready", ingress: { ip: "192.0.2.200" }, service: "ns/s", applied: first },
      T0,
    );
    expect(ready).toMatchObject(first);
    const degraded = nextAppsIngressStatus(
      ready,
      { phase: "Degraded", reason: "HostedClusterAccessFailed", message: "x" },
      T0 + 1000,
    );
    expect(appliedOf(degraded)).toEqual(first);
  });

  it("a rename leaves the old Service, pool and L2Advertisement to delete; nothing when unchanged", () => {
    const renamed = appliedNames(config({ addressPoolName: "apps2" }, { name: "ingress2", namespace: "edge" }));
    expect(staleObjects(first, renamed).map(path)).toEqual([
      "Service openshift-ingress/oooi-ingress",
      "L2Advertisement openshift-operators/advertise-apps",
      "IPAddressPool openshift-operators/apps",
    ]);
    expect(staleObjects(first, first)).toEqual([]);
    expect(staleObjects(undefined, first)).toEqual([]);
  });

  it("cleanup after a rename removes both the recorded and the named objects, in cleanup order, each once", () => {
    const now = config({ addressPoolName: "apps2" }, { name: "ingress2" });
    expect(cleanupOrderApplied(now, first).map(path)).toEqual([
      "Service openshift-ingress/oooi-ingress",
      "Service openshift-ingress/ingress2",
      "L2Advertisement openshift-operators/advertise-apps",
      "L2Advertisement openshift-operators/advertise-apps2",
      "IPAddressPool openshift-operators/apps",
      "IPAddressPool openshift-operators/apps2",
      "MetalLB openshift-operators/metallb",
      "Subscription openshift-operators/metallb-operator",
    ]);
    expect(cleanupOrderApplied(config(), undefined).map(path)).toEqual(cleanupOrder(config()).map(path));
  });
});

describe("vipOf", () => {
  it.each([
    ["no status", {}, undefined],
    ["empty ingress", { status: { loadBalancer: { ingress: [] } } }, undefined],
    ["an IP", { status: { loadBalancer: { ingress: [{ ip: "192.0.2.9" }] } } }, { ip: "192.0.2.9" }],
    [
      "IP preferred over hostname",
      { status: { loadBalancer: { ingress: [{ ip: "192.0.2.9", hostname: "x" }] } } },
      { ip: "192.0.2.9" },
    ],
    [
      "a hostname",
      { status: { loadBalancer: { ingress: [{ hostname: "lb.example.net" }] } } },
      { hostname: "lb.example.net" },
    ],
    ["only the first entry counts", { status: { loadBalancer: { ingress: [{}, { ip: "192.0.2.9" }] } } }, undefined],
    ["a non-IPv4 ip", { status: { loadBalancer: { ingress: [{ ip: "fe80::1" }] } } }, undefined],
  ])("%s", (_name, svc, expected) => {
    expect(vipOf(svc)).toEqual(expected);
  });
});

describe("hosted kubeconfig", () => {
  const CA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
  const kubeconfig = (
    server: string,
    extra: Record<string, unknown> = {},
    user: Record<string, unknown> = { token: "t" },
  ) =>
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      "current-context": "c",
      clusters: [
        {
          name: "k",
          cluster: { server, "certificate-authority-data": Buffer.from(CA).toString("base64"), ...extra },
        },
      ],
      users: [{ name: "u", user }],
      contexts: [{ name: "c", context: { cluster: "k", user: "u" } }],
    });

  const cluster = (text: string, address: { host: string; port: number }) =>
    hostedKubeConfig(text, address).kubeConfig.getCurrentCluster();

  it("dials the Service address and verifies TLS against the kubeconfig's host", () => {
    const config = hostedKubeConfig(kubeconfig("https://api.h.example.com:6443"), { host: "172.30.0.10", port: 6443 });
    expect(config.server).toBe("https://172.30.0.10:6443");
    expect(config.kubeConfig.getCurrentCluster()).toMatchObject({
      server: "https://172.30.0.10:6443",
      tlsServerName: "api.h.example.com",
      caData: Buffer.from(CA).toString("base64"),
      skipTLSVerify: false,
    });
    expect(config.kubeConfig.getCurrentUser()).toMatchObject({ token: "t" });
  });

  it("keeps an explicit tls-server-name; an IP host has none (Node cannot send one)", () => {
    expect(
      cluster(kubeconfig("https://x:1", { "tls-server-name": "pinned" }), { host: "172.30.0.10", port: 1 })
        ?.tlsServerName,
    ).toBe("pinned");
    expect(cluster(kubeconfig("https://10.0.0.1:6443"), { host: "172.30.0.10", port: 6443 })?.tlsServerName).toBe(
      undefined,
    );
  });

  it("refuses garbage and insecure-skip-tls-verify with a readable message", () => {
    expect(() => hostedKubeConfig("{not yaml", { host: "172.30.0.10", port: 1 })).toThrow(/not YAML|not a kubeconfig/);
    expect(() => hostedKubeConfig("kind: Config\n", { host: "172.30.0.10", port: 1 })).toThrow("no current-context");
    expect(() =>
      hostedKubeConfig(
        kubeconfig("https://x:1", { "certificate-authority-data": undefined, "insecure-skip-tls-verify": true }),
        {
          host: "172.30.0.10",
          port: 1,
        },
      ),
    ).toThrow("disables TLS verification");
  });

  // A Secret's text is not ours to trust with this machine: no command runs, no local file is read.
  it.each([
    [
      "an exec plugin",
      { exec: { apiVersion: "client.authentication.k8s.io/v1", command: "/bin/sh", args: ["-c", "id"] } },
      /exec runs a command/,
    ],
    ["a token file", { tokenFile: "/var/run/secrets/kubernetes.io/serviceaccount/token" }, /tokenFile names a file/],
    // client-node's own spelling, which its loader reads at once.
    ["client-node's token-file", { "token-file": "/etc/shadow" }, /token-file names a file/],
    [
      "an OIDC auth-provider",
      { "auth-provider": { name: "oidc", config: { "idp-issuer-url": "https://idp.example" } } },
      /auth-provider may run a command or call an identity provider/,
    ],
    [
      "a gcp auth-provider (it runs cmd-path)",
      { "auth-provider": { name: "gcp", config: { "cmd-path": "/bin/sh" } } },
      /user "u": auth-provider/,
    ],
    [
      "a client key file",
      { "client-certificate": "/etc/cert.pem", "client-key": "/etc/key.pem" },
      /client-certificate names a file/,
    ],
  ])("refuses a kubeconfig with %s", (_name, user, message) => {
    expect(() => hostedKubeConfig(kubeconfig("https://x:1", {}, user), { host: "172.30.0.10", port: 1 })).toThrow(
      message,
    );
  });

  it("names the Secret and the field; a CA file is refused too", () => {
    const text = kubeconfig("https://x:1", {
      "certificate-authority-data": undefined,
      "certificate-authority": "/etc/kubernetes/ca.crt",
    });
    expect(() =>
      hostedKubeConfig(text, { host: "172.30.0.10", port: 1 }, 'Secret clusters/h key "kubeconfig"'),
    ).toThrow('Secret clusters/h key "kubeconfig", cluster "k": certificate-authority names a file');
  });

  it("serviceAddress: ClusterIP and the 6443 port (else the first), or why not", () => {
    expect(serviceAddress({ spec: { clusterIP: "172.30.0.10", ports: [{ port: 443 }, { port: 6443 }] } })).toEqual({
      host: "172.30.0.10",
      port: 6443,
    });
    expect(serviceAddress({ spec: { clusterIP: "172.30.0.10", ports: [{ port: 7443 }] } })).toEqual({
      host: "172.30.0.10",
      port: 7443,
    });
    expect(serviceAddress(undefined)).toBe("not found");
    expect(serviceAddress({ spec: { clusterIP: "None", ports: [{ port: 6443 }] } })).toBe("has no ClusterIP");
    expect(serviceAddress({ spec: { clusterIP: "172.30.0.10" } })).toBe("has no port");
  });
});
