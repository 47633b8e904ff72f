// The Troubleshooting rows of the user's documentation (symptom → cause → fix) as a code table:
// every failing verify check names one row, so its cause and fix read the same everywhere.

export type FailureKind =
  | "dns-unreachable"
  | "dns-wrong-answer"
  | "dns-leak"
  | "dns-not-forwarded"
  | "dns-forward-failed"
  | "route-no-listener"
  | "route-no-chain"
  | "route-wrong-cluster"
  | "route-wrong-endpoints"
  | "xds-unreachable"
  | "node-nack"
  | "node-stale"
  | "node-unknown-group"
  | "node-behind"
  | "reservation-mismatch";

export interface TroubleshootingRow {
  readonly cause: string;
  readonly fix: string;
}

export const TROUBLESHOOTING: Readonly<Record<FailureKind, TroubleshootingRow>> = {
  "dns-unreachable": {
    cause:
      "the DNSServer does not answer from this source: wrong NAD, DNS pod not running, or a NetworkPolicy drops it",
    fix: "check spec.networkConfig.networkAttachmentDefinition and the DNS workload (kubectl -n NS logs deploy/INFRA-dns; serve: --dns-listen)",
  },
  "dns-wrong-answer": {
    cause:
      "the view answers from another configuration than the model: a stale zone, or the source is not in networkConfig.cidr",
    fix: "compare the DNSServer's ConfigMap with `oooi render`; make sure the client's address lies inside spec.networkConfig.cidr",
  },
  "dns-leak": {
    cause:
      "a name the model does not publish in this view is answered from a zone (a pod must never learn a VLAN address)",
    fix: "check spec.infraComponents.proxy.internalProxyService and that the DNS workload runs the rendered Corefile",
  },
  "dns-not-forwarded": {
    cause: "a name outside every published zone was answered authoritatively instead of forwarded",
    fix: "a zone for the cluster domain shadows it: remove it, oooi publishes only its own names",
  },
  "dns-forward-failed": {
    cause: "missing forwarders: the upstream resolvers do not answer",
    fix: 'set spec.networkConfig.dnsServers to resolvers reachable from the VLAN, or "resolv.conf" to inherit the node\'s',
  },
  "route-no-listener": {
    cause: "the proxy holds no listener on this port: the backend is refused or the snapshot is stale",
    fix: "read the attachment's status (oooi render: status.json) and `oooi debug nodes` for the proxy's sync state",
  },
  "route-no-chain": {
    cause:
      "no filter chain matches this connection: the worker's source address or the SNI is not what the model expects",
    fix: "run `oooi explain --from SOURCE --port PORT --sni NAME` for the nearest miss; check the Machine's reported address",
  },
  "route-wrong-cluster": {
    cause:
      "the served chain forwards to another cluster than the model: the proxy serves an older or different configuration",
    fix: "compare `oooi debug config NODE` with `oooi render`; restart nothing — find why the newer snapshot was refused (logs)",
  },
  "route-wrong-endpoints": {
    cause: "the cluster's endpoints differ from the control-plane Service's ClusterIP",
    fix: "check the Service in the control-plane namespace (kubectl -n CP get svc) and that the operator or serve saw its change",
  },
  "xds-unreachable": {
    cause: "the xDS server does not answer",
    fix: "check --xds (serve: --xds-listen; operator: its Service on port 18000)",
  },
  "node-nack": {
    cause: "the data plane rejected the configuration and keeps its previous one",
    fix: "read the NACK text (oooi debug nodes); fix the object it names, or report the Envoy/Kea version mismatch",
  },
  "node-stale": {
    cause: "the data plane has not acknowledged the latest configuration yet",
    fix: "wait a moment and verify again; if it persists, check the data plane's logs for a stuck update",
  },
  "node-unknown-group": {
    cause: "the node's node.cluster names no node group, so it is sent nothing",
    fix: "set node.cluster in the Envoy bootstrap (or dhcp-agent --node) to one of the known groups",
  },
  "node-behind": {
    cause: "the node acknowledged an older version than the current snapshot",
    fix: "check the node's stream (oooi debug nodes); a reconnect gets it the current snapshot",
  },
  "reservation-mismatch": {
    cause:
      "the VMI reports another address than its DHCP reservation: a static guest address, or DHCP handing out the wrong address",
    fix: "make the guest use DHCP on the VLAN interface, and check that only oooi's Kea serves the VLAN (spec.infraComponents.dhcp)",
  },
};
