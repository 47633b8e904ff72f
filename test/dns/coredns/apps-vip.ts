// A state edit the live-change tests and the reload benchmark share (bench/dns/coredns-reload.ts).
import type { ClusterState } from "../../../src/model/types.js";

/** `state` with every attachment's apps ingress VIP (the address its apps names resolve to) set to `vip`. */
export function withAppsVip(state: ClusterState, vip: string): ClusterState {
  return {
    ...state,
    attachments: state.attachments.map((a) => {
      const apps = a.status?.appsIngressStatus;
      return apps === undefined
        ? a
        : { ...a, status: { ...a.status, appsIngressStatus: { ...apps, externalIP: vip } } };
    }),
  };
}
