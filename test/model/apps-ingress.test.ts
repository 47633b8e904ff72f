// spec.appsIngress validation: a row per rule (docs/reference.md#apps-ingress), the field named.
import { describe, expect, it } from "vitest";
import type { InfraClusterAttachmentSpec, InfraSpec } from "../../src/api/schema.js";
import { appsIngressSettings, rangeProblem, resolveAppsIngressConfig } from "../../src/model/apps-ingress.js";

const INFRA: InfraSpec = {
  networkConfig: { cidr: "192.0.2.0/24", gateway: "192.0.2.1", networkAttachmentDefinition: "vlan100" },
  infraComponents: {
    dhcp: { serverIP: "192.0.2.2", rangeStart: "192.0.2.100", rangeEnd: "192.0.2.199" },
    dns: { serverIP: "192.0.2.3" },
    proxy: { serverIP: "192.0.2.4" },
  },
};

function spec(metallb: Record<string, unknown> | undefined): InfraClusterAttachmentSpec {
  return {
    infraRef: { name: "tenant" },
    hostedClusterRef: { name: "alpha" },
    dns: { clusterName: "alpha", baseDomain: "example.com" },
    appsIngress: { enabled: true, ...(metallb === undefined ? {} : { metallb }) },
  };
}

const rows: { name: string; metallb: Record<string, unknown> | undefined; field?: string; message?: string }[] = [
  {
    name: "pool and range inside the CIDR, clear of everything",
    metallb: { addressPoolName: "p", ipAddressPoolRange: "192.0.2.200-192.0.2.209" },
  },
  { name: "a CIDR range", metallb: { addressPoolName: "p", ipAddressPoolRange: "192.0.2.240/28" } },
  {
    name: "no metallb at all",
    metallb: undefined,
    field: "spec.appsIngress.metallb.addressPoolName",
    message: "no MetalLB address pool name",
  },
  {
    name: "empty pool name",
    metallb: { addressPoolName: " ", ipAddressPoolRange: "192.0.2.200-192.0.2.209" },
    field: "spec.appsIngress.metallb.addressPoolName",
    message: "no MetalLB address pool",
  },
  {
    name: "no range",
    metallb: { addressPoolName: "p" },
    field: "spec.appsIngress.metallb.ipAddressPoolRange",
    message: "no address range for pool p",
  },
  {
    name: "a typo'd range",
    metallb: { addressPoolName: "p", ipAddressPoolRange: "192.0.2.200-192.0.2" },
    field: "spec.appsIngress.metallb.ipAddressPoolRange",
    message: "neither",
  },
  {
    name: "a reversed range",
    metallb: { addressPoolName: "p", ipAddressPoolRange: "192.0.2.209-192.0.2.200" },
    field: "spec.appsIngress.metallb.ipAddressPoolRange",
    message: "neither",
  },
  {
    name: "outside the Infra CIDR",
    metallb: { addressPoolName: "p", ipAddressPoolRange: "198.51.100.10-198.51.100.20" },
    field: "spec.appsIngress.metallb.ipAddressPoolRange",
    message: "not inside the Infra's network 192.0.2.0/24",
  },
  {
    name: "straddling the CIDR's end",
    metallb: { addressPoolName: "p", ipAddressPoolRange: "192.0.2.250-192.0.3.5" },
    field: "spec.appsIngress.metallb.ipAddressPoolRange",
    message: "not inside",
  },
  {
    name: "overlapping the DHCP pool",
    metallb: { addressPoolName: "p", ipAddressPoolRange: "192.0.2.190-192.0.2.209" },
    field: "spec.appsIngress.metallb.ipAddressPoolRange",
    message: "overlaps the DHCP pool 192.0.2.100-192.0.2.199",
  },
  {
    name: "containing the gateway",
    metallb: { addressPoolName: "p", ipAddressPoolRange: "192.0.2.0/30" },
    field: "spec.appsIngress.metallb.ipAddressPoolRange",
    message: "contains the gateway (192.0.2.1)",
  },
  {
    name: "containing the proxy",
    metallb: { addressPoolName: "p", ipAddressPoolRange: "192.0.2.4-192.0.2.9" },
    field: "spec.appsIngress.metallb.ipAddressPoolRange",
    message: "contains the proxy (192.0.2.4)",
  },
  { name: "existing MetalLB: nothing required", metallb: { installOperator: false } },
  {
    name: "existing MetalLB: a named range is still checked",
    metallb: { installOperator: false, addressPoolName: "p", ipAddressPoolRange: "192.0.2.3-192.0.2.3" },
    field: "spec.appsIngress.metallb.ipAddressPoolRange",
    message: "contains the DNS server",
  },
];

describe("resolveAppsIngressConfig", () => {
  it.each(rows)("$name", ({ metallb, field, message }) => {
    const r = resolveAppsIngressConfig(spec(metallb), INFRA);
    if (field === undefined) {
      expect(r).toMatchObject({ ok: true });
      return;
    }
    expect(r).toMatchObject({ ok: false, field });
    expect(r.ok ? "" : r.message).toContain(message);
  });

  it("a DHCP pool that is disabled does not reserve its range", () => {
    const infra: InfraSpec = {
      ...INFRA,
      infraComponents: { ...INFRA.infraComponents, dhcp: { ...INFRA.infraComponents?.dhcp, enabled: false } },
    };
    const r = resolveAppsIngressConfig(
      spec({ addressPoolName: "p", ipAddressPoolRange: "192.0.2.150-192.0.2.160" }),
      infra,
    );
    expect(r.ok).toBe(true);
  });

  it("defaults: OLM channel/source, advertise-<pool>, openshift-ingress/oooi-ingress, ports 80/443", () => {
    expect(appsIngressSettings(spec({ addressPoolName: "p", ipAddressPoolRange: "192.0.2.200/29" }))).toEqual({
      installMetalLB: true,
      channel: "stable",
      source: "redhat-operators",
      pool: "p",
      range: "192.0.2.200/29",
      l2Advertisement: "advertise-p",
      service: { name: "oooi-ingress", namespace: "openshift-ingress", labels: {}, annotations: {} },
      ports: { http: 80, https: 443 },
    });
  });

  it("rangeProblem without an Infra only checks the syntax", () => {
    expect(rangeProblem("10.0.0.1-10.0.0.2", undefined)).toBeUndefined();
    expect(rangeProblem("nonsense", undefined)).toContain("neither");
  });
});
