// Table tests of the operator's desired state: cluster objects in, Kubernetes objects out.
import type { HostedCluster } from "../../../src/api/external.js";
import { describe, expect, it } from "vitest";
import type { Infra, InfraClusterAttachment } from "../../../src/api/schema.js";
import type { ClusterState, Problem } from "../../../src/model/types.js";
import { corefileStructure } from "../../../src/operator/desired/coredns.js";
import {
  allObjects,
  ATTACHMENTS_ANNOTATION,
  CONFIG_HASH_ANNOTATION,
  contentHash,
  desiredState,
  objectKey,
  operatorSettings,
  type DesiredObject,
  type DesiredState,
} from "../../../src/operator/desired/index.js";
import { renderAll } from "../../../src/pipeline/outputs.js";
import { attachment, combine, hostedCluster, infra, NS } from "../../support/fixtures.js";
import { structuralViolations } from "./structure.js";

type Json = Record<string, unknown>;
const at = (o: unknown, ...path: (string | number)[]): unknown =>
  path.reduce<unknown>((v, k) => (v as Record<string | number, unknown> | undefined)?.[k], o);

const settings = operatorSettings({ namespace: "oooi-system" });
const BRIDGE_NAD = JSON.stringify({
  cniVersion: "0.3.1",
  name: "vlan100",
  type: "bridge",
  bridge: "br-vlan100",
  vlan: 100,
  ipam: {},
});
const OVN_NAD = JSON.stringify({
  cniVersion: "0.3.1",
  name: "vlan100",
  type: "ovn-k8s-cni-overlay",
  topology: "localnet",
  netAttachDefName: `${NS}/vlan100`,
});

function withUid(i: Infra, uid = `uid-${i.metadata.name}`): Infra {
  return { ...i, metadata: { ...i.metadata, uid } };
}

function terminating(a: InfraClusterAttachment): InfraClusterAttachment {
  return {
    ...a,
    metadata: {
      ...a.metadata,
      deletionTimestamp: "2025-01-01T00:00:00Z",
      finalizers: ["hostedcluster.densityops.com/apps-ingress-cleanup"],
    },
  };
}

function desired(
  state: ClusterState,
  nads: Record<string, string> = { [`${NS}/vlan100`]: BRIDGE_NAD },
  s = settings,
): DesiredState {
  return desiredState({
    state,
    outputs: renderAll(state),
    settings: s,
    networkAttachments: new Map(Object.entries(nads)),
  });
}

const keys = (objects: readonly DesiredObject[]) => objects.map(objectKey);
const find = (d: DesiredState, key: string): DesiredObject => {
  const o = allObjects(d).find((x) => objectKey(x) === key);
  if (o === undefined) throw new Error(`no ${key} in ${keys(allObjects(d)).join(", ")}`);
  return o;
};

const one = combine(
  { infras: [withUid(infra())], attachments: [attachment("alpha")] },
  hostedCluster("alpha", 1, ["192.0.2.50"]),
);
const shared = combine(
  { infras: [withUid(infra())], attachments: ["alpha", "beta", "gamma"].map((n) => attachment(n)) },
  hostedCluster("alpha", 1, ["192.0.2.50"]),
  hostedCluster("beta", 2, ["192.0.2.51"]),
  hostedCluster("gamma", 3, []),
);

interface Row {
  readonly name: string;
  readonly state: ClusterState;
  readonly nads?: Record<string, string>;
  /** objectKey of every namespaced-owned object, in apply order. */
  readonly owned: readonly string[];
  readonly crossNamespace: readonly string[];
  readonly problems?: readonly string[];
}

const FULL = (ns: string, i: string, nad = true): string[] => [
  `ServiceAccount/${ns}/${i}-dhcp`,
  ...(nad
    ? [
        `NetworkAttachmentDefinition.k8s.cni.cncf.io/${ns}/${i}-dhcp`,
        `NetworkAttachmentDefinition.k8s.cni.cncf.io/${ns}/${i}-dns`,
        `NetworkAttachmentDefinition.k8s.cni.cncf.io/${ns}/${i}-proxy`,
      ]
    : []),
  `ConfigMap/${ns}/${i}-dhcp-bootstrap`,
  `ConfigMap/${ns}/${i}-dns`,
  `ConfigMap/${ns}/${i}-proxy-bootstrap`,
  `PersistentVolumeClaim/${ns}/${i}-dhcp-leases`,
  `DHCPServer.hostedcluster.densityops.com/${ns}/${i}-dhcp`,
  `DNSServer.hostedcluster.densityops.com/${ns}/${i}-dns`,
  `ProxyServer.hostedcluster.densityops.com/${ns}/${i}-proxy`,
  `NetworkPolicy.networking.k8s.io/${ns}/${i}-proxy`,
  `Service/${ns}/${i}-dns`,
  `Service/${ns}/${i}-proxy`,
  `Deployment.apps/${ns}/${i}-dhcp`,
  `Deployment.apps/${ns}/${i}-dns`,
  `Deployment.apps/${ns}/${i}-proxy`,
];

const rows: Row[] = [
  {
    name: "single Infra, one attachment, bridge NAD copied per component",
    state: one,
    owned: FULL(NS, "vlan100"),
    crossNamespace: ["NetworkPolicy.networking.k8s.io/clusters-alpha/allow-infrastructure"],
  },
  {
    name: "OVN-Kubernetes NAD: referenced with ips, not copied",
    state: one,
    nads: { [`${NS}/vlan100`]: OVN_NAD },
    owned: FULL(NS, "vlan100", false),
    crossNamespace: ["NetworkPolicy.networking.k8s.io/clusters-alpha/allow-infrastructure"],
  },
  {
    name: "shared VLAN with three attachments: one policy per control-plane namespace",
    state: shared,
    owned: FULL(NS, "vlan100"),
    crossNamespace: ["alpha", "beta", "gamma"].map(
      (n) => `NetworkPolicy.networking.k8s.io/clusters-${n}/allow-infrastructure`,
    ),
  },
  {
    name: "terminating attachment: its policy is left for the finalizer to delete",
    state: { ...shared, attachments: [attachment("alpha"), terminating(attachment("beta")), attachment("gamma")] },
    owned: FULL(NS, "vlan100"),
    crossNamespace: ["alpha", "gamma"].map((n) => `NetworkPolicy.networking.k8s.io/clusters-${n}/allow-infrastructure`),
  },
  {
    name: "DHCP disabled: no Kea objects",
    state: { ...one, infras: [withUid(infra("vlan100", { infraComponents: { dhcp: { enabled: false } } }))] },
    owned: FULL(NS, "vlan100").filter((k) => !k.includes("-dhcp")),
    crossNamespace: ["NetworkPolicy.networking.k8s.io/clusters-alpha/allow-infrastructure"],
  },
  {
    name: "proxy disabled: no Envoy objects and no policies",
    state: { ...one, infras: [withUid(infra("vlan100", { infraComponents: { proxy: { enabled: false } } }))] },
    owned: FULL(NS, "vlan100").filter((k) => !k.includes("-proxy")),
    crossNamespace: [],
  },
  {
    name: "invalid Infra gets nothing; the valid one is unaffected",
    state: combine(one, { infras: [withUid(infra("broken", { networkConfig: { gateway: "198.51.100.1" } }))] }),
    owned: FULL(NS, "vlan100"),
    crossNamespace: ["NetworkPolicy.networking.k8s.io/clusters-alpha/allow-infrastructure"],
  },
  {
    name: "Infra without uid: nothing yet, with a problem",
    state: { ...one, infras: [infra()] },
    owned: [],
    crossNamespace: [],
    problems: ["Infra/vlan100 InfraNotObserved"],
  },
  {
    name: "Infra name too long for its Services: nothing, with a problem",
    // The schema refuses the name; an object from a cluster whose CRD predates the rule still comes.
    state: combine({ infras: [withUid({ ...infra(), metadata: { ...infra().metadata, name: "a".repeat(60) } })] }),
    owned: [],
    crossNamespace: [],
    // The model refuses it first (metadata.name InvalidName in the model's problems): no topology.
    problems: [],
  },
];

describe("desiredState", () => {
  it.each(rows)("$name", (row) => {
    const d = desired(row.state, row.nads);
    expect(d.infras.flatMap((i) => keys(i.objects))).toEqual(row.owned);
    expect(keys(d.crossNamespace)).toEqual(row.crossNamespace);
    expect(d.problems.map((p) => `${p.object.kind}/${p.object.name} ${p.reason}`)).toEqual(row.problems ?? []);
    expect(structuralViolations(allObjects(d))).toEqual([]);
    for (const o of d.infras.flatMap((i) => i.objects)) {
      expect(o.metadata.ownerReferences, objectKey(o)).toEqual([
        {
          apiVersion: "hostedcluster.densityops.com/v1alpha1",
          kind: "Infra",
          name: "vlan100",
          uid: "uid-vlan100",
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
      expect(o.metadata.labels["app.kubernetes.io/managed-by"]).toBe("oooi");
      expect(o.metadata.labels["hostedcluster.densityops.com/infra"]).toBe("vlan100");
    }
    for (const o of d.crossNamespace) {
      expect(o.metadata.ownerReferences).toBeUndefined();
      expect(o.metadata.labels["hostedcluster.densityops.com/cleanup"]).toBe("attachment-finalizer");
    }
  });

  it("an invalid Infra next to a valid one changes none of the valid one's objects", () => {
    const alone = desired(one);
    const both = desired(rows.find((r) => r.name.startsWith("invalid Infra"))?.state ?? one);
    expect(allObjects(both)).toEqual(allObjects(alone));
  });

  it("is deterministic: input order and repeated runs give identical objects", () => {
    const a = desired(shared);
    const reversed: ClusterState = {
      ...shared,
      attachments: [...shared.attachments].reverse(),
      services: [...shared.services].reverse(),
      namespaces: [...shared.namespaces].reverse(),
      machines: [...shared.machines].reverse(),
    };
    const b = desired(reversed);
    expect(JSON.stringify(b)).toBe(JSON.stringify(a));
    expect(allObjects(b).map((o) => contentHash(o))).toEqual(allObjects(a).map((o) => contentHash(o)));
  });

  it("child CRs carry the model's specs", () => {
    const d = desired(shared);
    const proxy = find(d, "ProxyServer.hostedcluster.densityops.com/clusters/vlan100-proxy");
    const model = renderAll(shared).model.topologies[0]?.children.proxy;
    expect(proxy["spec"]).toEqual(model?.spec);
    expect((at(proxy, "spec", "backends") as unknown[]).length).toBeGreaterThan(10);
    expect(proxy["status"]).toBeUndefined();
  });

  it("NetworkPolicy admits only the proxy pods of the Infra's namespace, on control-plane ports", () => {
    const p = find(desired(shared), "NetworkPolicy.networking.k8s.io/clusters-beta/allow-infrastructure");
    expect(p.metadata.annotations).toEqual({ [ATTACHMENTS_ANNOTATION]: "clusters/beta" });
    expect(p["spec"]).toEqual({
      podSelector: {},
      policyTypes: ["Ingress"],
      ingress: [
        {
          from: [
            {
              namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": NS } },
              podSelector: {
                matchLabels: {
                  "app.kubernetes.io/component": "proxy",
                  "app.kubernetes.io/instance": "vlan100",
                  "app.kubernetes.io/name": "envoy",
                },
              },
            },
          ],
          ports: [443, 6443, 8091, 8443].map((port) => ({ protocol: "TCP", port })),
        },
      ],
    });
    // The peer's labels are exactly the proxy pods' labels.
    const envoy = find(desired(shared), "Deployment.apps/clusters/vlan100-proxy");
    expect(at(envoy, "spec", "template", "metadata", "labels")).toEqual(
      at(p, "spec", "ingress", 0, "from", 0, "podSelector", "matchLabels"),
    );
  });

  it("two Infras whose attachments share a control-plane namespace get one merged policy", () => {
    const state = combine(
      {
        infras: [
          withUid(infra("vlan100")),
          withUid(
            infra("vlan200", {
              networkConfig: { cidr: "198.51.100.0/24", gateway: "198.51.100.1" },
              infraComponents: {
                dhcp: { serverIP: "198.51.100.2", rangeStart: "198.51.100.100", rangeEnd: "198.51.100.199" },
                dns: { serverIP: "198.51.100.3" },
                proxy: { serverIP: "198.51.100.4" },
              },
            }),
          ),
        ],
      },
      {
        attachments: [
          attachment("alpha"),
          attachment("other", { infra: "vlan200", hc: "other", spec: { controlPlaneNamespace: "clusters-alpha" } }),
        ],
      },
      hostedCluster("alpha", 1, []),
    );
    const d = desired(state, { [`${NS}/vlan100`]: BRIDGE_NAD });
    expect(keys(d.crossNamespace)).toEqual(["NetworkPolicy.networking.k8s.io/clusters-alpha/allow-infrastructure"]);
    const p = d.crossNamespace[0];
    expect(p?.metadata.annotations?.[ATTACHMENTS_ANNOTATION]).toBe("clusters/alpha,clusters/other");
    expect(
      (at(p, "spec", "ingress", 0, "from") as Json[]).map((f) =>
        at(f, "podSelector", "matchLabels", "app.kubernetes.io/instance"),
      ),
    ).toEqual(["vlan100", "vlan200"]);
  });
});

describe("external LoadBalancer Service", () => {
  const ext = (extra: Partial<ClusterState>, externalService: Json) => {
    const base = combine(
      {
        infras: [withUid(infra("vlan100", { infraComponents: { proxy: { externalService } } }))],
        attachments: [attachment("beta"), attachment("alpha"), attachment("pending")],
      },
      hostedCluster("alpha", 1, ["192.0.2.50"]),
      hostedCluster("beta", 2, ["192.0.2.51"]),
    );
    return desired({ ...base, ...extra });
  };

  it("is absent unless enabled", () => {
    expect(keys(allObjects(ext({}, { enabled: false })))).not.toContain("Service/clusters/vlan100-proxy-external");
  });

  it("carries the pool, user labels/annotations, and Ready attachments' oauth names after the user's", () => {
    const d = ext(
      {},
      {
        enabled: true,
        addressPoolName: "mgmt-pool",
        publishAttachmentOAuths: true,
        labels: { team: "net", "bad label!": "x" },
        annotations: {
          "external-dns.alpha.kubernetes.io/hostname": "proxy.example.com, oauth.alpha.example.com",
          "custom/x": "y",
        },
      },
    );
    const svc = find(d, "Service/clusters/vlan100-proxy-external");
    expect(svc.metadata.annotations).toEqual({
      "custom/x": "y",
      // "pending" waits for its control-plane namespace: not Ready, not published.
      "external-dns.alpha.kubernetes.io/hostname": "proxy.example.com,oauth.alpha.example.com,oauth.beta.example.com",
      "metallb.universe.tf/address-pool": "mgmt-pool",
    });
    expect(svc.metadata.labels).toMatchObject({ team: "net", "app.kubernetes.io/managed-by": "oooi" });
    expect(svc.metadata.labels).not.toHaveProperty("bad label!");
    expect(svc["spec"]).toEqual({
      type: "LoadBalancer",
      selector: {
        "app.kubernetes.io/component": "proxy",
        "app.kubernetes.io/instance": "vlan100",
        "app.kubernetes.io/name": "envoy",
      },
      ports: [{ name: "https", port: 443, targetPort: 443, protocol: "TCP" }],
    });
  });

  it("publishes an attachment whose only problems are warnings that leave it Ready, not one with a blocking one", () => {
    const state = combine(
      {
        infras: [
          withUid(
            infra("vlan100", {
              infraComponents: { proxy: { externalService: { enabled: true, publishAttachmentOAuths: true } } },
            }),
          ),
        ],
        attachments: [attachment("beta"), attachment("alpha")],
      },
      hostedCluster("alpha", 1, ["192.0.2.50"]),
      hostedCluster("beta", 2, ["192.0.2.51"]),
    );
    const outputs = renderAll(state);
    const warning = (name: string, reason: "EndpointNotServable" | "DuplicateHostname"): Problem => ({
      object: { kind: "InfraClusterAttachment", namespace: NS, name },
      field: "spec.hostedClusterRef",
      severity: "warning",
      reason,
      message: "a warning",
    });
    const d = desiredState({
      state,
      // alpha's warning leaves it Ready; beta's (a duplicate) does not.
      outputs: {
        ...outputs,
        model: {
          problems: [
            ...outputs.model.problems,
            warning("alpha", "EndpointNotServable"),
            warning("beta", "DuplicateHostname"),
          ],
        },
      },
      settings,
      networkAttachments: new Map([[`${NS}/vlan100`, BRIDGE_NAD]]),
    });
    expect(find(d, "Service/clusters/vlan100-proxy-external").metadata.annotations).toEqual({
      "external-dns.alpha.kubernetes.io/hostname": "oauth.alpha.example.com",
    });
  });

  it("drops a terminating attachment's name and leaves names alone without publishAttachmentOAuths", () => {
    const d = ext(
      { attachments: [attachment("alpha"), terminating(attachment("beta"))] },
      { enabled: true, publishAttachmentOAuths: true },
    );
    expect(find(d, "Service/clusters/vlan100-proxy-external").metadata.annotations).toEqual({
      "external-dns.alpha.kubernetes.io/hostname": "oauth.alpha.example.com",
    });
    const off = ext({}, { enabled: true });
    expect(find(off, "Service/clusters/vlan100-proxy-external").metadata.annotations).toBeUndefined();
  });

  it("publishes the OAuth name the HostedCluster states, the one the proxy routes (docs/reference.md#endpoint-names)", () => {
    const oauth = "oauth-clusters-alpha.apps.mgmt.example.net";
    const hc: HostedCluster = {
      apiVersion: "hypershift.openshift.io/v1beta1",
      kind: "HostedCluster",
      metadata: { name: "alpha", namespace: "clusters" },
      status: { oauthCallbackURLTemplate: `https://${oauth}:443/oauth2callback/[identity-provider-name]` },
    };
    const d = ext(
      { attachments: [attachment("alpha")], hostedClusters: [hc] },
      { enabled: true, publishAttachmentOAuths: true },
    );
    expect(find(d, "Service/clusters/vlan100-proxy-external").metadata.annotations).toEqual({
      "external-dns.alpha.kubernetes.io/hostname": oauth,
    });
  });
});

describe("per-attachment public Service <attachment>-proxy-external", () => {
  const uid = (a: InfraClusterAttachment): InfraClusterAttachment => ({
    ...a,
    metadata: { ...a.metadata, uid: `uid-${a.metadata.name}` },
  });
  const public_ = { enabled: true, addressPoolName: "oauth-pool", labels: { "external-dns/publish": "true" } };
  const state = (attachments: InfraClusterAttachment[], infraExternal: Json = {}) =>
    combine(
      {
        infras: [withUid(infra("vlan100", { infraComponents: { proxy: { externalService: infraExternal } } }))],
        attachments,
      },
      hostedCluster("alpha", 1, ["192.0.2.50"]),
      hostedCluster("beta", 2, ["192.0.2.51"]),
    );
  const services = (d: DesiredState) => keys(allObjects(d)).filter((k) => k.endsWith("-proxy-external"));

  it("is made for each enabled attachment, owned by it, LoadBalancer on 443 only, with its pool, labels and annotations", () => {
    const d = desired(
      state([
        uid(
          attachment("alpha", {
            spec: {
              externalService: {
                ...public_,
                annotations: { "external-dns.alpha.kubernetes.io/hostname": "oauth.alpha.example.com." },
              },
            },
          }),
        ),
        uid(attachment("beta")),
      ]),
    );
    expect(services(d)).toEqual(["Service/clusters/alpha-proxy-external"]);
    const svc = find(d, "Service/clusters/alpha-proxy-external");
    expect(svc.metadata.ownerReferences).toEqual([
      {
        apiVersion: "hostedcluster.densityops.com/v1alpha1",
        kind: "InfraClusterAttachment",
        name: "alpha",
        uid: "uid-alpha",
        controller: true,
        blockOwnerDeletion: false,
      },
    ]);
    expect(svc.metadata.annotations).toEqual({
      "external-dns.alpha.kubernetes.io/hostname": "oauth.alpha.example.com.",
      "metallb.universe.tf/address-pool": "oauth-pool",
    });
    expect(svc.metadata.labels).toMatchObject({
      "external-dns/publish": "true",
      "app.kubernetes.io/managed-by": "oooi",
    });
    expect(svc["spec"]).toEqual({
      type: "LoadBalancer",
      selector: {
        "app.kubernetes.io/component": "proxy",
        "app.kubernetes.io/instance": "vlan100",
        "app.kubernetes.io/name": "envoy",
      },
      ports: [{ name: "https", port: 443, targetPort: 443, protocol: "TCP" }],
    });
    // The proxy's NetworkPolicy admits the public port from any source once a public Service exists.
    const publicRule = (st: DesiredState) =>
      (at(find(st, "NetworkPolicy.networking.k8s.io/clusters/vlan100-proxy"), "spec", "ingress") as Json[]).filter(
        (r) => r["from"] === undefined,
      );
    expect(publicRule(d)).toEqual([{ ports: [{ protocol: "TCP", port: 443 }] }]);
    expect(publicRule(desired(state([uid(attachment("alpha"))])))).toEqual([]);
  });

  it("is gone when disabled, while the attachment terminates, or before its uid is known", () => {
    const on = attachment("alpha", { spec: { externalService: public_ } });
    expect(
      services(desired(state([uid(attachment("alpha", { spec: { externalService: { enabled: false } } }))]))),
    ).toEqual([]);
    expect(services(desired(state([terminating(uid(on))])))).toEqual([]);
    expect(services(desired(state([on])))).toEqual([]);
  });

  it("lives beside the deprecated Infra-level Service, and no public Service exposes 6443, 9901 or 18000", () => {
    const d = desired(
      state(
        [
          uid(attachment("alpha", { spec: { externalService: public_ } })),
          uid(attachment("beta", { spec: { externalService: public_ } })),
        ],
        {
          enabled: true,
        },
      ),
    );
    expect(services(d)).toEqual([
      "Service/clusters/alpha-proxy-external",
      "Service/clusters/beta-proxy-external",
      "Service/clusters/vlan100-proxy-external",
    ]);
    const ports = allObjects(d)
      .filter((o) => o.kind === "Service" && at(o, "spec", "type") === "LoadBalancer")
      .flatMap((o) => (at(o, "spec", "ports") as { port: number }[]).map((p) => p.port));
    expect(new Set(ports)).toEqual(new Set([443]));
  });
});

describe("workloads", () => {
  const d = desired(one);
  const pod = (name: string) => at(find(d, `Deployment.apps/clusters/${name}`), "spec", "template") as Json;
  const container = (name: string, c: string) =>
    (at(pod(name), "spec", "containers") as Json[]).find((x) => x["name"] === c) ?? {};

  it("attach each pod to the VLAN at its serverIP with the CIDR's prefix", () => {
    const nad = find(d, "NetworkAttachmentDefinition.k8s.cni.cncf.io/clusters/vlan100-proxy");
    expect(JSON.parse(String(at(nad, "spec", "config")))).toEqual({
      cniVersion: "0.3.1",
      name: "vlan100",
      type: "bridge",
      bridge: "br-vlan100",
      vlan: 100,
      ipam: { type: "static", addresses: [{ address: "192.0.2.4/24", gateway: "192.0.2.1" }] },
    });
    expect(
      JSON.parse(String(at(pod("vlan100-proxy"), "metadata", "annotations", "k8s.v1.cni.cncf.io/networks"))),
    ).toEqual([{ name: "vlan100-proxy", namespace: "clusters", interface: "net1" }]);
    const ovn = desired(one, { [`${NS}/vlan100`]: OVN_NAD });
    const dhcp = at(
      find(ovn, "Deployment.apps/clusters/vlan100-dhcp"),
      "spec",
      "template",
      "metadata",
      "annotations",
      "k8s.v1.cni.cncf.io/networks",
    );
    expect(JSON.parse(String(dhcp))).toEqual([
      { name: "vlan100", namespace: "clusters", interface: "net1", ips: ["192.0.2.2/24"] },
    ]);
  });

  it("run one replica, replaced with Recreate (a static VLAN address cannot be held twice)", () => {
    for (const n of ["vlan100-proxy", "vlan100-dns", "vlan100-dhcp"]) {
      const spec = at(find(d, `Deployment.apps/clusters/${n}`), "spec") as Json;
      expect(spec["replicas"]).toBe(1);
      expect(spec["strategy"]).toEqual({ type: "Recreate" });
    }
  });

  it("Envoy: bootstrap from its ConfigMap, node id from the pod, readiness without the admin port", () => {
    const envoy = container("vlan100-proxy", "envoy");
    expect(envoy["image"]).toBe("envoyproxy/envoy:v1.36.4");
    expect(envoy["args"]).toEqual(
      expect.arrayContaining([
        "--config-path",
        "/etc/envoy/bootstrap.json",
        "--service-node",
        "$(POD_NAMESPACE)/$(POD_NAME)",
      ]),
    );
    expect(envoy["readinessProbe"]).toMatchObject({ httpGet: { path: "/ready", port: 8081 } });
    expect(at(envoy, "securityContext", "runAsNonRoot")).toBe(true);
    const bootstrap = JSON.parse(
      String(at(find(d, "ConfigMap/clusters/vlan100-proxy-bootstrap"), "data", "bootstrap.json")),
    ) as Json;
    expect(at(bootstrap, "node", "cluster")).toBe("clusters/vlan100-proxy");
    expect(at(bootstrap, "admin", "address", "socket_address", "address")).toBe("127.0.0.1");
    expect(
      at(
        bootstrap,
        "static_resources",
        "clusters",
        0,
        "load_assignment",
        "endpoints",
        0,
        "lb_endpoints",
        0,
        "endpoint",
        "address",
        "socket_address",
      ),
    ).toEqual({ address: "oooi-xds.oooi-system.svc", port_value: 18000 });
  });

  it("CoreDNS: the whole ConfigMap at the renderer's mount dir, probes on the Corefile's ports", () => {
    const coredns = container("vlan100-dns", "coredns");
    expect(coredns["args"]).toEqual(["-conf", "/etc/coredns/Corefile"]);
    expect(coredns["volumeMounts"]).toEqual([{ name: "config", mountPath: "/etc/coredns", readOnly: true }]);
    expect(coredns["livenessProbe"]).toMatchObject({ httpGet: { path: "/health", port: 8080 } });
    expect(coredns["readinessProbe"]).toMatchObject({ httpGet: { path: "/ready", port: 8181 } });
    const cm = find(d, "ConfigMap/clusters/vlan100-dns");
    expect(cm["data"]).toEqual(renderAll(one).infras[0]?.coreDns);
    expect(String(at(cm, "data", "Corefile"))).toContain("health {$POD_IP}:8080");
    // deploy/monitoring's PodMonitor scrapes the port by this name.
    expect(coredns["ports"]).toContainEqual({ name: "metrics", containerPort: 9153, protocol: "TCP" });
    expect(String(at(cm, "data", "Corefile"))).toContain("prometheus {$POD_IP}:9153");
  });

  // Issue 18: the live config moved from an emptyDir to the PVC, seeded only when none persisted.
  it("Kea: NET_RAW only, config persisted on the lease PVC (seeded only when empty), socket shared with the agent", () => {
    const kea = container("vlan100-dhcp", "kea-dhcp4");
    expect(at(kea, "securityContext", "capabilities")).toEqual({ drop: ["ALL"], add: ["NET_RAW"] });
    expect(kea["command"]).toEqual(["kea-dhcp4", "-c", "/var/lib/kea/kea-dhcp4.json"]);
    const init = (at(pod("vlan100-dhcp"), "spec", "initContainers") as Json[])[0] ?? {};
    expect(init["command"]).toEqual([
      "sh",
      "-c",
      "[ -s /var/lib/kea/kea-dhcp4.json ] || cp /etc/kea-seed/kea-dhcp4.json /var/lib/kea/kea-dhcp4.json",
    ]);
    expect(init["volumeMounts"]).toContainEqual({ name: "leases", mountPath: "/var/lib/kea" });
    const agent = container("vlan100-dhcp", "dhcp-agent");
    expect(agent["args"]).toEqual([
      "dhcp-agent",
      "--kea-socket",
      "/run/kea/kea4-ctrl-socket",
      "--xds",
      "oooi-xds.oooi-system.svc:18000",
      "--node",
      "clusters/vlan100-dhcp",
    ]);
    expect(at(agent, "securityContext", "capabilities")).toEqual({ drop: ["ALL"] });
    const seed = JSON.parse(
      String(at(find(d, "ConfigMap/clusters/vlan100-dhcp-bootstrap"), "data", "kea-dhcp4.json")),
    ) as Json;
    expect(at(seed, "Dhcp4", "control-socket", "socket-name")).toBe("/run/kea/kea4-ctrl-socket");
    expect(at(seed, "Dhcp4", "interfaces-config", "interfaces")).toEqual(["net1"]);
    expect(at(seed, "Dhcp4", "lease-database", "name")).toBe("/var/lib/kea/kea-leases4.csv");
    const volumes = at(pod("vlan100-dhcp"), "spec", "volumes") as Json[];
    expect(volumes.find((v) => v["name"] === "leases")).toEqual({
      name: "leases",
      persistentVolumeClaim: { claimName: "vlan100-dhcp-leases" },
    });
    expect(volumes.map((v) => v["name"])).not.toContain("config");
    expect(at(find(d, "PersistentVolumeClaim/clusters/vlan100-dhcp-leases"), "spec")).toEqual({
      accessModes: ["ReadWriteOnce"],
      resources: { requests: { storage: "128Mi" } },
    });
  });

  it("images: the Infra's override wins, the original operator's own image does not", () => {
    const state = {
      ...one,
      infras: [
        withUid(
          infra("vlan100", {
            infraComponents: {
              dns: { image: "quay.io/cldmnky/oooi:latest" },
              dhcp: { image: "example.org/kea:2.2" },
              proxy: { proxyImage: "example.org/envoy:1" },
            },
          }),
        ),
      ],
    };
    const x = desired(state);
    const img = (dep: string, c: string) =>
      (at(find(x, `Deployment.apps/clusters/${dep}`), "spec", "template", "spec", "containers") as Json[]).find(
        (y) => y["name"] === c,
      )?.["image"];
    expect(img("vlan100-dns", "coredns")).toBe("registry.k8s.io/coredns/coredns:v1.12.0");
    expect(img("vlan100-dhcp", "kea-dhcp4")).toBe("example.org/kea:2.2");
    expect(img("vlan100-proxy", "envoy")).toBe("example.org/envoy:1");
  });
});

describe("rollout hashes", () => {
  const hash = (d: DesiredState, name: string) =>
    at(
      find(d, `Deployment.apps/clusters/${name}`),
      "spec",
      "template",
      "metadata",
      "annotations",
      CONFIG_HASH_ANNOTATION,
    );

  it("a new attachment changes the CoreDNS ConfigMap but rolls no pod", () => {
    const a = desired(one);
    const b = desired(shared);
    expect(find(a, "ConfigMap/clusters/vlan100-dns")["data"]).not.toEqual(
      find(b, "ConfigMap/clusters/vlan100-dns")["data"],
    );
    for (const n of ["vlan100-dns", "vlan100-proxy", "vlan100-dhcp"]) expect(hash(b, n), n).toBe(hash(a, n));
  });

  it("a new xDS address rolls Envoy (bootstrap) and not CoreDNS", () => {
    const a = desired(one);
    const b = desired(one, undefined, operatorSettings({ namespace: "oooi-system", xdsAddress: "xds.example:18001" }));
    expect(hash(b, "vlan100-proxy")).not.toBe(hash(a, "vlan100-proxy"));
    expect(hash(b, "vlan100-dns")).toBe(hash(a, "vlan100-dns"));
  });

  it("corefileStructure keeps process-wide directives and ports, not zones", () => {
    const base =
      ".:53 {\n    prometheus :9153\n    health :8080\n    ready :8181\n    reload 5s\n    forward . /etc/resolv.conf\n}\n";
    const more = `${base}a.example:53 {\n    prometheus :9153\n    file /etc/coredns/db.vlan.a.example a.example\n}\n`;
    expect(corefileStructure(more)).toBe(corefileStructure(base));
    expect(corefileStructure(base.replace("prometheus :9153", "prometheus :9154"))).not.toBe(corefileStructure(base));
    expect(corefileStructure(base.replace("health :8080", "health :9090"))).not.toBe(corefileStructure(base));
    expect(corefileStructure(base.replace("reload 5s", "reload 10s"))).not.toBe(corefileStructure(base));
    expect(corefileStructure(base.replace(".:53", ".:1053"))).not.toBe(corefileStructure(base));
  });
});

describe("identity and hashing", () => {
  it("objectKey is unique across the whole desired set", () => {
    const all = allObjects(desired(shared));
    expect(new Set(all.map(objectKey)).size).toBe(all.length);
  });

  it("objects share nothing: mutating one leaves the others alone", () => {
    const all = allObjects(desired(one));
    const [a, b] = all.filter((o) => o.metadata.labels["app.kubernetes.io/component"] === "proxy");
    (a?.metadata.labels as Record<string, string>)["x"] = "y";
    expect(b?.metadata.labels["x"]).toBeUndefined();
  });

  it("contentHash ignores key order and sees every value", () => {
    expect(contentHash({ a: 1, b: { c: [1, 2], d: "x" } })).toBe(contentHash({ b: { d: "x", c: [1, 2] }, a: 1 }));
    expect(contentHash({ a: [1, 2] })).not.toBe(contentHash({ a: [2, 1] }));
    expect(contentHash({ a: "1" })).not.toBe(contentHash({ a: 1 }));
  });

  it("the structural checker catches what it claims to", () => {
    const d = allObjects(desired(one));
    const dep = d.find((o) => objectKey(o) === "Deployment.apps/clusters/vlan100-dns") as Json;
    const broken = structuredClone(dep);
    (at(broken, "spec", "selector", "matchLabels") as Json)["extra"] = "x";
    const mount = (at(broken, "spec", "template", "spec", "containers", 0, "volumeMounts") as Json[])[0] ?? {};
    mount["subPath"] = "Corefile";
    const others = d.filter((o) => o !== (dep as DesiredObject));
    expect(structuralViolations([...others, broken as DesiredObject]).join("\n")).toMatch(
      /selector extra=x not on the pod template[\s\S]*subPath/,
    );
  });
});

describe("Kea's SCC RoleBinding (OpenShift)", () => {
  const name = one.infras[0]?.metadata.name ?? "";
  const bindingKey = `RoleBinding.rbac.authorization.k8s.io/${NS}/${name}-dhcp-scc`;

  it("off OpenShift: no binding", () => {
    const d = desired(one);
    expect(keys(allObjects(d))).not.toContain(bindingKey);
  });

  it("when the operator may bind: the Infra's own binding of its Kea ServiceAccount to the SCC role", () => {
    const d = desired(one, undefined, operatorSettings({ namespace: "oooi-system", keaScc: "bind" }));
    const b = find(d, bindingKey);
    expect(b["roleRef"]).toEqual({ apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "oooi-kea-scc" });
    expect(b["subjects"]).toEqual([{ kind: "ServiceAccount", name: `${name}-dhcp`, namespace: NS }]);
    expect(b.metadata.ownerReferences?.map((o) => [o.kind, o.name, o.controller])).toEqual([["Infra", name, true]]);
    expect(b.metadata.labels["app.kubernetes.io/managed-by"]).toBe("oooi");
    // Before the Deployment, so Kea's pods are admitted on their first try.
    const order = keys(d.infras[0]?.objects ?? []);
    expect(order.indexOf(bindingKey)).toBeLessThan(order.indexOf(`Deployment.apps/${NS}/${name}-dhcp`));
  });

  it("when it may not: no binding (the reconciler asks whether Kea may use the SCC and reports)", () => {
    const d = desired(one, undefined, operatorSettings({ namespace: "oooi-system", keaScc: "report" }));
    expect(keys(allObjects(d))).not.toContain(bindingKey);
  });
});
