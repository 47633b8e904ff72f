// A minimal ClusterUserDefinedNetwork CRD of our own (k8s.ovn.org/v1, cluster-scoped), shaped after
// OVN-Kubernetes' API reference (docs.okd.io rest_api/network_apis/clusteruserdefinednetwork-k8s-ovn-org-v1):
// spec.namespaceSelector and spec.network required; network.topology Layer2 | Layer3 | Localnet;
// localnet {role: Secondary, physicalNetworkName (required), vlan.access.id, ipam.mode
// Enabled | Disabled, subnets}. Only what our tests write is typed; nothing here comes from src/.

const selector = {
  type: "object",
  properties: {
    matchLabels: { type: "object", additionalProperties: { type: "string" } },
    matchExpressions: {
      type: "array",
      items: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
    },
  },
};

const localnet = {
  type: "object",
  required: ["role", "physicalNetworkName"],
  properties: {
    role: { type: "string", enum: ["Secondary"] },
    physicalNetworkName: { type: "string", minLength: 1 },
    mtu: { type: "integer" },
    subnets: { type: "array", items: { type: "string" } },
    ipam: { type: "object", properties: { mode: { type: "string", enum: ["Enabled", "Disabled"] } } },
    vlan: {
      type: "object",
      properties: {
        mode: { type: "string", enum: ["Access"] },
        access: { type: "object", properties: { id: { type: "integer", minimum: 1, maximum: 4094 } } },
      },
    },
  },
};

/** apiextensions.k8s.io/v1 CRD of ClusterUserDefinedNetwork. */
export function cudnCrd(): Record<string, unknown> {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "clusteruserdefinednetworks.k8s.ovn.org" },
    spec: {
      group: "k8s.ovn.org",
      scope: "Cluster",
      names: {
        kind: "ClusterUserDefinedNetwork",
        plural: "clusteruserdefinednetworks",
        singular: "clusteruserdefinednetwork",
        listKind: "ClusterUserDefinedNetworkList",
      },
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: {
              type: "object",
              required: ["spec"],
              properties: {
                spec: {
                  type: "object",
                  required: ["namespaceSelector", "network"],
                  properties: {
                    namespaceSelector: selector,
                    network: {
                      type: "object",
                      required: ["topology"],
                      properties: {
                        topology: { type: "string", enum: ["Layer2", "Layer3", "Localnet"] },
                        localnet,
                        layer2: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
                        layer3: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
                      },
                    },
                  },
                },
                status: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
              },
            },
          },
        },
      ],
    },
  };
}

/** A localnet Secondary CUDN with IPAM disabled (static addresses), on VLAN `vlan`, selecting namespaces labelled `label`. */
export function localnetCudn(name: string, vlan: number, label: Record<string, string>): Record<string, unknown> {
  return {
    apiVersion: "k8s.ovn.org/v1",
    kind: "ClusterUserDefinedNetwork",
    metadata: { name },
    spec: {
      namespaceSelector: { matchLabels: label },
      network: {
        topology: "Localnet",
        localnet: {
          role: "Secondary",
          physicalNetworkName: "physnet-vlans",
          ipam: { mode: "Disabled" },
          vlan: { mode: "Access", access: { id: vlan } },
        },
      },
    },
  };
}
