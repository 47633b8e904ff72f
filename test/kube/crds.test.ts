// deploy/crds on a real kube-apiserver: they install as structural schemas, the server rejects what
// they reject (naming the field), fills their defaults, prunes unknown fields, and kubectl shows
// their printer columns.
import { describe, expect, it } from "vitest";
import { KUBE_SKIP } from "../support/kube/cluster.js";
import { GROUP_PATH, createNamespaces, installCrds, useKubeCluster } from "./support.js";

const NETWORK = { cidr: "10.10.0.0/24", gateway: "10.10.0.1", networkAttachmentDefinition: "vlan10" };
const CUDN_ATTACHMENT = { kind: "ClusterUserDefinedNetwork", name: "vlan10-localnet", namespace: "crds" };
/** The structured form: a localnet Secondary CUDN (the original's documented shape). */
const STRUCTURED = {
  cidr: "10.10.0.0/24",
  gateway: "10.10.0.1",
  attachment: CUDN_ATTACHMENT,
  topology: "Localnet",
  role: "Secondary",
  exposure: "Layer2",
  ipam: "DHCP",
};

function infra(name: string, spec: unknown): Record<string, unknown> {
  return {
    apiVersion: "hostedcluster.densityops.com/v1alpha1",
    kind: "Infra",
    metadata: { name, namespace: "crds" },
    spec,
  };
}

function attachment(name: string, spec: unknown): Record<string, unknown> {
  return {
    apiVersion: "hostedcluster.densityops.com/v1alpha1",
    kind: "InfraClusterAttachment",
    metadata: { name, namespace: "crds" },
    spec,
  };
}

const VALID_ATTACHMENT = {
  infraRef: { name: "x" },
  hostedClusterRef: { name: "hc" },
  dns: { clusterName: "hc", baseDomain: "example.com" },
};

interface Rejection {
  readonly name: string;
  readonly plural: string;
  readonly object: Record<string, unknown>;
  /** The field path the server's message names. */
  readonly field: string;
  readonly says: RegExp;
}

const REJECTED: readonly Rejection[] = [
  {
    name: "Infra without networkConfig",
    plural: "infras",
    object: infra("no-network", {}),
    field: "spec.networkConfig",
    says: /Required value/,
  },
  // The original's CEL rules on networkConfig (x-kubernetes-validations), applied by the server.
  {
    name: "Infra naming neither network form",
    plural: "infras",
    object: infra("no-form", { networkConfig: { cidr: "10.0.0.0/24", gateway: "10.0.0.1" } }),
    field: "spec.networkConfig",
    says: /networkConfig must specify either attachment or networkAttachmentDefinition/,
  },
  {
    name: "Infra mixing the legacy and the structured form",
    plural: "infras",
    object: infra("mixed", { networkConfig: { ...NETWORK, attachment: CUDN_ATTACHMENT, topology: "Localnet" } }),
    field: "spec.networkConfig",
    says: /cannot mix legacy networkAttachmentDefinition\/networkAttachmentNamespace with structured/,
  },
  {
    name: "Infra with structured fields but no attachment",
    plural: "infras",
    object: infra("no-attachment", {
      networkConfig: { ...NETWORK, networkAttachmentDefinition: undefined, role: "Secondary" },
    }),
    field: "spec.networkConfig",
    says: /structured fields topology, role, exposure, ipam and routeAdvertisementsRef require attachment/,
  },
  {
    name: "Infra with networkAttachmentNamespace alone",
    plural: "infras",
    object: infra("nad-namespace", { networkConfig: { cidr: "10.0.0.0/24", networkAttachmentNamespace: "nets" } }),
    field: "spec.networkConfig",
    says: /networkAttachmentNamespace requires networkAttachmentDefinition/,
  },
  {
    name: "Infra with an attachment kind outside its enum",
    plural: "infras",
    object: infra("bad-kind", {
      networkConfig: { cidr: "10.0.0.0/24", attachment: { kind: "Bridge", name: "b" } },
    }),
    field: "spec.networkConfig.attachment.kind",
    says: /Unsupported value: "Bridge"/,
  },
  {
    name: "Infra with a Layer4 topology",
    plural: "infras",
    object: infra("bad-topology", { networkConfig: { ...STRUCTURED, topology: "Layer4" } }),
    field: "spec.networkConfig.topology",
    says: /Unsupported value: "Layer4"/,
  },
  {
    name: "Infra with a /33 CIDR",
    plural: "infras",
    object: infra("bad-cidr", { networkConfig: { ...NETWORK, cidr: "10.0.0.0/33" } }),
    field: "spec.networkConfig.cidr",
    says: /should match/,
  },
  {
    name: "DHCP lease time that is no duration",
    plural: "infras",
    object: infra("bad-lease", { networkConfig: NETWORK, infraComponents: { dhcp: { leaseTime: "forever" } } }),
    field: "spec.infraComponents.dhcp.leaseTime",
    says: /should match/,
  },
  {
    name: "DHCP unknownClients outside its enum",
    plural: "infras",
    object: infra("bad-enum", { networkConfig: NETWORK, infraComponents: { dhcp: { unknownClients: "allow" } } }),
    field: "spec.infraComponents.dhcp.unknownClients",
    says: /Unsupported value: "allow"/,
  },
  {
    name: "DNS server IP that is no address",
    plural: "infras",
    object: infra("bad-ip", { networkConfig: NETWORK, infraComponents: { dns: { serverIP: "10.0.0.256" } } }),
    field: "spec.infraComponents.dns.serverIP",
    says: /should match/,
  },
  {
    name: "attachment without dns",
    plural: "infraclusterattachments",
    object: attachment("no-dns", { infraRef: { name: "x" }, hostedClusterRef: { name: "hc" } }),
    field: "spec.dns",
    says: /Required value/,
  },
  {
    name: "attachment with an upper-case base domain",
    plural: "infraclusterattachments",
    object: attachment("bad-domain", { ...VALID_ATTACHMENT, dns: { clusterName: "hc", baseDomain: "Example.COM" } }),
    field: "spec.dns.baseDomain",
    says: /should match/,
  },
  {
    name: "attachment with an HTTP port above 65535",
    plural: "infraclusterattachments",
    object: attachment("bad-port", { ...VALID_ATTACHMENT, appsIngress: { ports: { http: 70000 } } }),
    field: "spec.appsIngress.ports.http",
    says: /less than or equal to 65535/,
  },
  {
    name: "attachment whose port is a string",
    plural: "infraclusterattachments",
    object: attachment("string-port", { ...VALID_ATTACHMENT, appsIngress: { ports: { https: "443" } } }),
    field: "spec.appsIngress.ports.https",
    says: /must be of type integer/,
  },
];

describe.skipIf(KUBE_SKIP !== undefined)("deploy/crds on a real API server", () => {
  const kube = useKubeCluster({ controllerManager: false }, async (cluster) => {
    await installCrds(cluster);
    await createNamespaces(cluster, ["crds"]);
  });

  it("installs every CRD as Established with a structural schema (no NonStructuralSchema condition)", async () => {
    const crds = await kube().must<{
      items: { metadata: { name: string }; status?: { conditions?: { type: string; status: string }[] } }[];
    }>("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions");
    const ours = crds.items.filter((c) => c.metadata.name.endsWith(".hostedcluster.densityops.com"));
    expect(ours.map((c) => c.metadata.name).sort()).toEqual(
      ["dhcpservers", "dnsservers", "infraclusterattachments", "infras", "proxyservers"].map(
        (p) => `${p}.hostedcluster.densityops.com`,
      ),
    );
    for (const c of ours) {
      const conditions = c.status?.conditions ?? [];
      expect(conditions.find((x) => x.type === "Established")?.status, c.metadata.name).toBe("True");
      expect(
        conditions.find((x) => x.type === "NonStructuralSchema"),
        c.metadata.name,
      ).toBeUndefined();
    }
  });

  it.each(REJECTED)("rejects $name at $field", async ({ plural, object, field, says }) => {
    const r = await kube().call<{ reason?: string; message?: string; details?: { causes?: { field?: string }[] } }>(
      "POST",
      `${GROUP_PATH}/namespaces/crds/${plural}`,
      { body: object },
    );
    expect(r.status).toBe(422);
    expect(r.body.reason).toBe("Invalid");
    expect(r.body.details?.causes?.map((c) => c.field)).toContain(field);
    expect(r.body.message).toMatch(says);
  });

  it.each([
    ["the structured localnet CUDN form", STRUCTURED],
    [
      "a Primary CUDN without a gateway (the original's schema allows it)",
      {
        cidr: "10.10.0.0/24",
        attachment: CUDN_ATTACHMENT,
        topology: "Layer2",
        role: "Primary",
        exposure: "BGP",
        ipam: "OVNKubernetes",
        routeAdvertisementsRef: { name: "default" },
      },
    ],
    ["the legacy form with its namespace", { ...NETWORK, networkAttachmentNamespace: "nets" }],
  ])("admits %s and stores it as given", async (_, networkConfig) => {
    const name = `form-${Math.random().toString(36).slice(2, 8)}`;
    const created = await kube().must<{ spec: { networkConfig: Record<string, unknown> } }>(
      "POST",
      `${GROUP_PATH}/namespaces/crds/infras`,
      { body: infra(name, { networkConfig }) },
    );
    expect(created.spec.networkConfig).toEqual({ ...networkConfig, dnsServers: ["resolv.conf"] });
  });

  it("fills the schema's defaults and prunes fields it does not declare", async () => {
    const created = await kube().must<{ spec: Record<string, unknown> }>(
      "POST",
      `${GROUP_PATH}/namespaces/crds/infras`,
      {
        body: infra("defaults", { networkConfig: { ...NETWORK, vlanColour: "blue" } }),
      },
    );
    expect(created.spec["networkConfig"]).not.toHaveProperty("vlanColour");
    expect(created.spec).toMatchObject({
      networkConfig: { dnsServers: ["resolv.conf"] },
      infraComponents: {
        dhcp: { enabled: true, leaseTime: "1h", unknownClients: "deny" },
        dns: { enabled: true },
        proxy: { enabled: true },
      },
    });
    // Strict field validation turns the same unknown field into an error naming it.
    const strict = await kube().call<{ message?: string }>("POST", `${GROUP_PATH}/namespaces/crds/infras`, {
      body: infra("strict", { networkConfig: { ...NETWORK, vlanColour: "blue" } }),
      query: { fieldValidation: "Strict" },
    });
    expect(strict.status).toBe(400);
    expect(strict.body.message).toContain('unknown field "spec.networkConfig.vlanColour"');
  });

  it("kubectl get infra shows Ready / Attachments / DHCP / DNS / Proxy / Age, and Reason and Message under -o wide", async () => {
    await kube().must("POST", `${GROUP_PATH}/namespaces/crds/infras`, {
      body: infra("columns", { networkConfig: NETWORK }),
    });
    const condition = (type: string, status: string, reason: string, message: string) => ({
      type,
      status,
      reason,
      message,
      lastTransitionTime: "2025-01-01T00:00:00Z",
    });
    await kube().must("PATCH", `${GROUP_PATH}/namespaces/crds/infras/columns/status`, {
      contentType: "application/merge-patch+json",
      body: {
        status: {
          attachments: { total: 3, ready: 2 },
          conditions: [
            condition("Ready", "False", "ComponentsNotReady", "proxy:rejected"),
            condition("DHCPReady", "True", "Serving", "ok"),
            condition("DNSReady", "False", "ConfigMapOutdated", "old"),
            condition("ProxyReady", "False", "ConfigurationRejected", "nack"),
          ],
        },
      },
    });
    const table = async (wide: boolean) =>
      (await kube().mustKubectl(["get", "infra", "columns", "-n", "crds", ...(wide ? ["-o", "wide"] : [])]))
        .trimEnd()
        .split("\n")
        .map((l) => l.trim().split(/\s+/));
    const [header, row] = await table(false);
    expect(header).toEqual(["NAME", "READY", "ATTACHMENTS", "DHCP", "DNS", "PROXY", "AGE"]);
    expect(row?.slice(0, 6)).toEqual(["columns", "False", "3", "True", "False", "False"]);
    const [wideHeader, wideRow] = await table(true);
    expect(wideHeader).toEqual(["NAME", "READY", "ATTACHMENTS", "DHCP", "DNS", "PROXY", "AGE", "REASON", "MESSAGE"]);
    expect(wideRow?.slice(-2)).toEqual(["ComponentsNotReady", "proxy:rejected"]);
  });

  it("leaves the short names dns and proxy to OpenShift's config.openshift.io kinds", async () => {
    const dns = await kube().kubectl(["get", "dns", "-n", "crds"]);
    expect(dns.code).not.toBe(0);
    expect(dns.stderr).toContain('the server doesn\'t have a resource type "dns"');
    expect(await kube().mustKubectl(["get", "dnsservers,proxyservers", "-n", "crds"])).toBe("");
  });

  it("ignores status in a write to the main resource (status is a subresource)", async () => {
    const created = await kube().must<{ status?: unknown }>("POST", `${GROUP_PATH}/namespaces/crds/infras`, {
      body: { ...infra("no-status", { networkConfig: NETWORK }), status: { attachments: { total: 9, ready: 9 } } },
    });
    expect(created.status).toBeUndefined();
  });
});
