// Which attachments an Infra serves, and with which worker addresses.
import type { InfraClusterAttachment } from "../api/schema.js";
import { formatIPv4 } from "./ipv4.js";
import type { ResolvedInfra } from "./infra.js";
import { cmp, refKey, type Problems } from "./problems.js";
import type { ClusterState, ObjectRef } from "./types.js";
import { indexWorkerSources, workerAddresses, type AllocatedAddresses } from "./workers.js";

export interface ResolvedAttachment {
  readonly ref: ObjectRef;
  readonly attachment: InfraClusterAttachment;
  readonly domain: string;
  readonly controlPlaneNamespace: string;
  readonly hostedCluster: { readonly namespace: string; readonly name: string };
  /** Served: backends and records are generated. */
  readonly served: boolean;
  /** Worker addresses after dropping those claimed by another attachment of the same Infra. */
  readonly workers: readonly number[];
}

export function attachmentRef(a: InfraClusterAttachment): ObjectRef {
  return { kind: "InfraClusterAttachment", namespace: a.metadata.namespace, name: a.metadata.name };
}

export function hostedClusterOf(a: InfraClusterAttachment): { namespace: string; name: string } {
  return { namespace: a.spec.hostedClusterRef.namespace ?? "clusters", name: a.spec.hostedClusterRef.name };
}

export function domainOf(a: InfraClusterAttachment): string {
  return `${a.spec.dns.clusterName}.${a.spec.dns.baseDomain}`.toLowerCase();
}

export function controlPlaneNamespaceOf(a: InfraClusterAttachment): string {
  const hc = hostedClusterOf(a);
  return a.spec.controlPlaneNamespace ?? `${hc.namespace}-${hc.name}`;
}

/**
 * Attachments of every Infra. Cluster-wide rule: a HostedCluster is attached at most once
 * (all claimants excluded). Per-Infra rules: one domain per attachment (all claimants
 * excluded); a worker address claimed by two attachments is dropped from both.
 */
export function resolveAttachments(
  state: ClusterState,
  infras: ReadonlyMap<string, ResolvedInfra>,
  problems: Problems,
  /** Per Infra running DHCP: "<namespace>/<VMI>" → allocated addresses, the workers' only source. */
  allocated: ReadonlyMap<string, AllocatedAddresses> = new Map(),
): Map<string, ResolvedAttachment[]> {
  const namespaces = existingNamespaces(state);
  const workerIndex = indexWorkerSources(state);
  const sorted = [...state.attachments].sort((a, b) => cmp(refKey(attachmentRef(a)), refKey(attachmentRef(b))));

  const byHostedCluster = groupBy(sorted, (a) => {
    const hc = hostedClusterOf(a);
    return `${hc.namespace}/${hc.name}`;
  });
  const duplicateHC = new Set<InfraClusterAttachment>();
  for (const [hc, group] of byHostedCluster) {
    if (group.length < 2) continue;
    for (const a of group) {
      duplicateHC.add(a);
      const others = group.filter((o) => o !== a).map((o) => `${o.metadata.namespace}/${o.metadata.name}`);
      problems.error(attachmentRef(a), "spec.hostedClusterRef", "DuplicateHostedCluster",
        `HostedCluster ${hc} is also attached by ${others.join(", ")}; none of them is served until only one remains`);
    }
  }

  const out = new Map<string, ResolvedAttachment[]>();
  for (const [infraKey, group] of groupBy(sorted, (a) => `${a.metadata.namespace}/${a.spec.infraRef.name}`)) {
    const infra = infras.get(infraKey);
    const candidates: InfraClusterAttachment[] = [];
    for (const a of group) {
      const ref = attachmentRef(a);
      if (infra === undefined) {
        const exists = state.infras.some((i) => `${i.metadata.namespace}/${i.metadata.name}` === infraKey)
          || (state.invalid ?? []).some((i) => i.ref.kind === "Infra" && `${i.ref.namespace}/${i.ref.name}` === infraKey);
        if (exists) problems.pending(ref, "spec.infraRef.name", "InfraNotReady", `Infra ${infraKey} is invalid; see its status`);
        else problems.error(ref, "spec.infraRef.name", "InfraNotFound", `Infra ${infraKey} does not exist in namespace ${a.metadata.namespace}`);
        continue;
      }
      if (duplicateHC.has(a)) continue;
      const cp = controlPlaneNamespaceOf(a);
      if (!namespaces.has(cp)) {
        problems.pending(ref, "spec.controlPlaneNamespace", "WaitingForControlPlaneNamespace", `control-plane namespace ${cp} does not exist yet`);
        continue;
      }
      if (a.metadata.deletionTimestamp !== undefined && (a.metadata.finalizers ?? []).length === 0) continue;
      candidates.push(a);
    }

    const duplicateDomain = new Set<InfraClusterAttachment>();
    for (const [domain, same] of groupBy(candidates, domainOf)) {
      if (same.length < 2) continue;
      for (const a of same) {
        duplicateDomain.add(a);
        const others = same.filter((o) => o !== a).map((o) => o.metadata.name);
        problems.error(attachmentRef(a), "spec.dns", "DuplicateHostname",
          `domain ${domain} is also claimed by ${others.join(", ")} on Infra ${infraKey}; none of them is served`);
        if (infra !== undefined) {
          problems.warning(infra.ref, "", "DuplicateHostname", `attachments ${same.map((o) => o.metadata.name).join(", ")} claim the same domain ${domain}`);
        }
      }
    }

    const served = candidates.filter((a) => !duplicateDomain.has(a));
    const claims = new Map<number, InfraClusterAttachment[]>();
    const rawWorkers = new Map<InfraClusterAttachment, number[]>();
    if (infra !== undefined) {
      for (const a of served) {
        const addrs = workerAddresses(workerIndex, hostedClusterOf(a), controlPlaneNamespaceOf(a), infra.cidr, allocated.get(infraKey));
        rawWorkers.set(a, addrs);
        for (const addr of addrs) claims.set(addr, [...(claims.get(addr) ?? []), a]);
      }
      for (const [addr, who] of claims) {
        if (who.length < 2) continue;
        const names = who.map((o) => o.metadata.name).join(", ");
        for (const a of who) {
          problems.warning(attachmentRef(a), "", "DuplicateSourceIP",
            `worker address ${formatIPv4(addr)} is reported by ${names}; it is routed to none of them`);
        }
        problems.warning(infra.ref, "", "DuplicateSourceIP", `worker address ${formatIPv4(addr)} is reported by ${names}`);
      }
    }

    out.set(infraKey, group.filter((a) => infra !== undefined && !duplicateHC.has(a)).map((a): ResolvedAttachment => {
      const isServed = served.includes(a);
      return {
        ref: attachmentRef(a),
        attachment: a,
        domain: domainOf(a),
        controlPlaneNamespace: controlPlaneNamespaceOf(a),
        hostedCluster: hostedClusterOf(a),
        served: isServed,
        workers: isServed ? (rawWorkers.get(a) ?? []).filter((addr) => (claims.get(addr) ?? []).length === 1) : [],
      };
    }));
  }
  return out;
}

/** A namespace exists when a Namespace object names it or any observed object lives in it. */
function existingNamespaces(state: ClusterState): Set<string> {
  const out = new Set<string>(state.namespaces.map((n) => n.metadata.name));
  for (const list of [state.services, state.machines, state.vmis, state.nodePools, state.hostedClusters]) {
    for (const o of list) out.add(o.metadata.namespace);
  }
  return out;
}

function groupBy<T>(items: readonly T[], key: (t: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list === undefined) out.set(k, [item]);
    else list.push(item);
  }
  return out;
}
