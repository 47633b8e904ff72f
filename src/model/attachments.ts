// Which attachments an Infra serves, and with which worker addresses.
import { groupBy } from "../util/group.js";
import type { InfraClusterAttachment } from "../api/schema.js";
import type { HostedCluster } from "../api/external.js";
import { claimKey, newClaimsSink, workerClaims, type ClaimsSink } from "./incremental/claims-view.js";
import { formatIPv4, type Cidr } from "./ipv4.js";
import { CONVENTION, conventionEndpoint, resolveEndpoints, type PublishedEndpoint } from "./endpoints.js";
import { domainErrors, objectNameErrors } from "./names.js";
import type { ResolvedInfra } from "./infra.js";
import { cmp, refKey, type Problems } from "./problems.js";
import type { ClusterState, ObjectRef } from "./types.js";
import {
  indexWorkerSources,
  sameWorkerInputs,
  workerAddresses,
  workerInputs,
  type AllocatedAddresses,
  type WorkerIndex,
  type WorkerInputs,
} from "./workers.js";

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
  /** The names workers dial for api, oauth, ignition and konnectivity (src/model/endpoints.ts). */
  readonly endpoints: readonly PublishedEndpoint[];
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
 * Attachments of every Infra. Conflicts follow "the oldest claim wins" (docs/reference.md#conflicts, as Gateway
 * API resolves them): among the attachments claiming one HostedCluster (cluster-wide), one domain
 * or one worker address (per Infra), the one that held it in the last accepted configuration
 * (state.incumbents) keeps it, else the one created first, then by namespace/name. The winner is
 * told nothing; every newcomer is refused with a reason naming the winner, and its Infra says so once.
 */
export function resolveAttachments(
  state: ClusterState,
  infras: ReadonlyMap<string, ResolvedInfra>,
  problems: Problems,
  /** Filled with the winner of every claim (claimKey → "<namespace>/<name>"). */
  holders: ClaimsSink = newClaimsSink(),
  /** Per Infra running DHCP: "<namespace>/<VMI>" → allocated addresses, the workers' only source. */
  allocated: ReadonlyMap<string, AllocatedAddresses> = new Map(),
): Map<string, ResolvedAttachment[]> {
  const namespaces = existingNamespaces(state);
  const workerIndex = indexWorkerSources(state);
  const incumbents = state.incumbents ?? new Map<string, string>();
  const sorted = [...state.attachments].sort((a, b) => cmp(refKey(attachmentRef(a)), refKey(attachmentRef(b))));
  const infraOf = (a: InfraClusterAttachment): string => `${a.metadata.namespace}/${a.spec.infraRef.name}`;
  // Finished cleanup: the object is about to disappear and claims nothing.
  const live = new Set(
    sorted.filter((a) => a.metadata.deletionTimestamp === undefined || (a.metadata.finalizers ?? []).length > 0),
  );
  // A name the API server would refuse claims nothing either.
  for (const a of live) {
    const errors = objectNameErrors("InfraClusterAttachment", a.metadata);
    if (errors.length === 0) continue;
    live.delete(a);
    for (const e of errors) problems.for(attachmentRef(a)).error(e.field, "InvalidName", e.message);
  }

  const refusedHC = new Set<InfraClusterAttachment>();
  for (const [hcKey, group] of groupBy(live, (a) => claimKey.hostedCluster(hostedClusterOf(a)))) {
    const [winner, ...newcomers] = byClaimAge(group, incumbents.get(hcKey));
    if (winner === undefined) continue;
    holders.base.set(hcKey, nameOf(winner));
    const hc = hcKey.slice("hostedCluster:".length);
    for (const a of newcomers) {
      refusedHC.add(a);
      problems
        .for(attachmentRef(a))
        .error(
          "spec.hostedClusterRef",
          "DuplicateHostedCluster",
          `HostedCluster ${hc} is already attached by ${nameOf(winner)}; this attachment is not served while that one exists`,
        );
      const infra = infras.get(infraOf(a));
      if (infra !== undefined) {
        problems
          .for(infra.ref)
          .warning(
            "",
            "DuplicateHostedCluster",
            `attachment ${a.metadata.name} is refused: HostedCluster ${hc} is already attached by ${nameOf(winner)}`,
          );
      }
    }
  }

  // Who may claim a domain, per Infra; the domain is then claimed across every Infra.
  const byInfra = new Map<string, { infra: ResolvedInfra; group: InfraClusterAttachment[] }>();
  const candidates: InfraClusterAttachment[] = [];
  for (const [infraKey, group] of groupBy(sorted, infraOf)) {
    const infra = infras.get(infraKey);
    if (infra === undefined) {
      for (const a of group) reportMissingInfra(state, a, infraKey, problems);
      continue;
    }
    byInfra.set(infraKey, { infra, group });
    for (const a of group) {
      if (refusedHC.has(a) || !live.has(a)) continue;
      const badDomain = domainErrors(a);
      if (badDomain.length > 0) {
        for (const e of badDomain)
          problems.for(attachmentRef(a)).error(e.field, "InvalidSpec", `${e.message}; this attachment is not served`);
        continue;
      }
      const cp = controlPlaneNamespaceOf(a);
      if (!namespaces.has(cp)) {
        problems
          .for(attachmentRef(a))
          .pending(
            "spec.controlPlaneNamespace",
            "WaitingForControlPlaneNamespace",
            `control-plane namespace ${cp} does not exist yet`,
          );
        continue;
      }
      candidates.push(a);
    }
  }

  // Two Infras serving one domain would both answer its SNI names: the oldest claim wins everywhere.
  const served = new Set<InfraClusterAttachment>();
  for (const [domain, same] of groupBy(candidates, domainOf)) {
    const [winner, ...newcomers] = byClaimAge(same, incumbents.get(claimKey.domain(domain)));
    if (winner === undefined) continue;
    holders.base.set(claimKey.domain(domain), nameOf(winner));
    served.add(winner);
    const winnerInfra = infraOf(winner);
    for (const [infraKey, refused] of groupBy(newcomers, infraOf)) {
      const elsewhere = infraKey === winnerInfra ? "" : ` on Infra ${winnerInfra}`;
      for (const a of refused) {
        problems
          .for(attachmentRef(a))
          .error(
            "spec.dns",
            "DuplicateHostname",
            `domain ${domain} is already served by ${winner.metadata.namespace === a.metadata.namespace ? winner.metadata.name : nameOf(winner)} on Infra ${winnerInfra}; this attachment is not served`,
          );
      }
      const infra = byInfra.get(infraKey)?.infra;
      if (infra === undefined) continue;
      const who = winner.metadata.namespace === infra.ref.namespace ? winner.metadata.name : nameOf(winner);
      problems
        .for(infra.ref)
        .warning(
          "",
          "DuplicateHostname",
          `${refused.map((o) => o.metadata.name).join(", ")} refused: domain ${domain} is already served by ${who}${elsewhere}`,
        );
    }
  }

  const hostedClusters = new Map(
    Array.from(state.hostedClusters, (h) => [`${h.metadata.namespace}/${h.metadata.name}`, h]),
  );
  const out = new Map<string, ResolvedAttachment[]>();
  for (const [infraKey, { infra, group }] of byInfra) {
    const servedHere = new Set(group.filter((a) => served.has(a)));
    const endpoints = servedEndpoints(servedHere, hostedClusters, problems);
    const workers = workersOf(servedHere, infra, infraKey, incumbents, workerIndex, allocated.get(infraKey), problems);
    for (const [a, addrs] of workers) {
      const holder = nameOf(a);
      if (addrs.length > 0) holders.layers.set(holder, workerClaims(infraKey, holder, addrs));
    }
    out.set(
      infraKey,
      group
        .filter((a) => live.has(a))
        .map((a): ResolvedAttachment => {
          const hc = hostedClusterOf(a);
          return {
            ref: attachmentRef(a),
            attachment: a,
            domain: domainOf(a),
            controlPlaneNamespace: controlPlaneNamespaceOf(a),
            hostedCluster: hc,
            served: served.has(a),
            workers: workers.get(a) ?? [],
            endpoints: endpoints.get(a) ?? endpointsOf(a, hostedClusters.get(`${hc.namespace}/${hc.name}`), problems),
          };
        }),
    );
  }
  return out;
}

/**
 * The endpoint names of an Infra's served attachments. A name a HostedCluster states that lies
 * under another served attachment's domain, or that an older claim's HostedCluster states too,
 * would give one SNI to two chains (or one cluster's traffic to another): it falls back to the
 * convention, said as DuplicateHostname. The domains are exclusive already (resolveAttachments).
 */
function servedEndpoints(
  served: ReadonlySet<InfraClusterAttachment>,
  hostedClusters: ReadonlyMap<string, HostedCluster>,
  problems: Problems,
): Map<InfraClusterAttachment, readonly PublishedEndpoint[]> {
  const domains = new Map([...served].map((a) => [domainOf(a), a]));
  const stated = new Map<string, InfraClusterAttachment>();
  const out = new Map<InfraClusterAttachment, readonly PublishedEndpoint[]>();
  for (const a of byClaimAge([...served], undefined)) {
    const hc = hostedClusterOf(a);
    const resolved = endpointsOf(a, hostedClusters.get(`${hc.namespace}/${hc.name}`), problems);
    out.set(
      a,
      resolved.map((e) => {
        if (e.source === CONVENTION) return e;
        const holder = stated.get(e.hostname) ?? domainHolder(e.hostname, domains);
        if (holder === undefined || holder === a) {
          stated.set(e.hostname, a);
          return e;
        }
        const used = conventionEndpoint(e.name, domainOf(a));
        problems
          .for(attachmentRef(a))
          .warning(
            "spec.hostedClusterRef",
            "DuplicateHostname",
            `HostedCluster ${e.source.slice("HostedCluster ".length)} names ${e.hostname}, which ${holder.metadata.name} publishes; ${e.name} is published as ${used.hostname}:${String(used.port)} (convention)`,
          );
        return used;
      }),
    );
  }
  return out;
}

/** The attachment whose domain is the name or one of its parents. */
function domainHolder(
  name: string,
  domains: ReadonlyMap<string, InfraClusterAttachment>,
): InfraClusterAttachment | undefined {
  for (let at = name; at !== ""; at = at.includes(".") ? at.slice(at.indexOf(".") + 1) : "") {
    const holder = domains.get(at);
    if (holder !== undefined) return holder;
  }
  return undefined;
}

/** The attachment's endpoint names; what its HostedCluster states but cannot be served is said on it. */
function endpointsOf(
  a: InfraClusterAttachment,
  hc: HostedCluster | undefined,
  problems: Problems,
): readonly PublishedEndpoint[] {
  const { endpoints, skipped } = resolveEndpoints(hc, domainOf(a));
  for (const { field, message, used } of skipped) {
    problems
      .for(attachmentRef(a))
      .warning(
        "spec.hostedClusterRef",
        "EndpointNotServable",
        `HostedCluster ${field}: ${message}; ${used.name} is published as ${used.hostname}:${String(used.port)} (${used.source})`,
      );
  }
  return endpoints;
}

/** Worker addresses per served attachment; an address reported for several goes to the oldest claim. */
function workersOf(
  served: ReadonlySet<InfraClusterAttachment>,
  infra: ResolvedInfra,
  infraKey: string,
  incumbents: ReadonlyMap<string, string>,
  workerIndex: WorkerIndex,
  allocated: AllocatedAddresses | undefined,
  problems: Problems,
): Map<InfraClusterAttachment, readonly number[]> {
  const raw = new Map<InfraClusterAttachment, readonly number[]>();
  for (const a of served) raw.set(a, attachmentWorkers(a, workerIndex, infra.cidr, allocated));
  if (!anyShared(infra.infra, raw)) return raw;
  // The first claimant of every address; only addresses claimed again get a list.
  const first = new Map<number, InfraClusterAttachment>();
  const contested = new Map<number, InfraClusterAttachment[]>();
  for (const [a, addrs] of raw) {
    for (const addr of addrs) {
      const holder = first.get(addr);
      if (holder === undefined) first.set(addr, a);
      else contested.set(addr, [...(contested.get(addr) ?? [holder]), a]);
    }
  }
  const lost = new Map<InfraClusterAttachment, Set<number>>();
  for (const [addr, who] of contested) {
    const text = formatIPv4(addr);
    const [winner, ...newcomers] = byClaimAge(who, incumbents.get(claimKey.worker(infraKey, text)));
    if (winner === undefined || newcomers.length === 0) continue;
    for (const a of newcomers) {
      lost.set(a, (lost.get(a) ?? new Set<number>()).add(addr));
      problems
        .for(attachmentRef(a))
        .warning(
          "",
          "DuplicateSourceIP",
          `worker address ${text} is already routed to ${winner.metadata.name}; it is not routed to this attachment`,
        );
    }
    problems
      .for(infra.ref)
      .warning(
        "",
        "DuplicateSourceIP",
        `worker address ${text} is reported by ${who.map((o) => o.metadata.name).join(", ")}; it stays routed to ${winner.metadata.name}`,
      );
  }
  const out = new Map<InfraClusterAttachment, readonly number[]>();
  for (const [a, addrs] of raw) {
    const gone = lost.get(a);
    out.set(a, gone === undefined ? addrs : addrs.filter((addr) => !gone.has(addr)));
  }
  return out;
}

/** How many of the lists counted hold each address, per Infra object; see anyShared. */
interface AddressCounts {
  readonly lists: Map<InfraClusterAttachment, readonly number[]>;
  readonly counts: Map<number, number>;
  /** Addresses held by two lists or more. */
  shared: number;
}

const counted = new WeakMap<object, AddressCounts>();

/**
 * Whether an address is in two of the lists. The counts of the Infra's previous call are brought
 * to these lists by the difference (a list is the same array while its attachment's workers are):
 * one changed hosted cluster costs its own addresses, not the VLAN's 50,000. The answer is exact
 * for any previous call, whichever build made it.
 */
export function anyShared(key: object, lists: ReadonlyMap<InfraClusterAttachment, readonly number[]>): boolean {
  let c = counted.get(key);
  if (c === undefined) {
    c = { lists: new Map(), counts: new Map(), shared: 0 };
    counted.set(key, c);
  }
  const state = c;
  const count = (addrs: readonly number[], by: 1 | -1): void => {
    // A list holds an address once (workerAddresses gathers them in a Set).
    for (const addr of addrs) {
      const before = state.counts.get(addr) ?? 0;
      const after = before + by;
      if (before < 2 && after >= 2) state.shared += 1;
      if (before >= 2 && after < 2) state.shared -= 1;
      if (after === 0) state.counts.delete(addr);
      else state.counts.set(addr, after);
    }
  };
  for (const [a, addrs] of state.lists) {
    if (lists.get(a) === addrs) continue;
    count(addrs, -1);
    state.lists.delete(a);
  }
  for (const [a, addrs] of lists) {
    if (state.lists.has(a)) continue;
    count(addrs, 1);
    state.lists.set(a, addrs);
  }
  return state.shared > 0;
}

/** The last worker addresses found per attachment object, with what they were found from. */
const found = new WeakMap<
  InfraClusterAttachment,
  { inputs: WorkerInputs; cidr: Cidr; allocated: boolean; addrs: readonly number[] }
>();

/**
 * workerAddresses of one attachment, the previous array itself when nothing it reads changed: on
 * a big VLAN every other hosted cluster's workers then keep their identity (and so their backends,
 * chains and formatted addresses). Kept only without DHCP allocations, which all attachments share.
 */
function attachmentWorkers(
  a: InfraClusterAttachment,
  src: WorkerIndex,
  cidr: Cidr,
  allocated: AllocatedAddresses | undefined,
): readonly number[] {
  const hc = hostedClusterOf(a);
  const cp = controlPlaneNamespaceOf(a);
  const inputs = workerInputs(src, cp, hc.namespace);
  const keepable = allocated === undefined || (allocated.byVmi.size === 0 && allocated.taken.size === 0);
  const kept = found.get(a);
  if (
    keepable &&
    kept !== undefined &&
    kept.allocated === (allocated !== undefined) &&
    kept.cidr.network === cidr.network &&
    kept.cidr.prefix === cidr.prefix &&
    sameWorkerInputs(kept.inputs, inputs)
  )
    return kept.addrs;
  const addrs = workerAddresses(src, hc, cp, cidr, allocated, inputs);
  if (keepable) found.set(a, { inputs, cidr, allocated: allocated !== undefined, addrs });
  return addrs;
}

function reportMissingInfra(
  state: ClusterState,
  a: InfraClusterAttachment,
  infraKey: string,
  problems: Problems,
): void {
  const p = problems.for(attachmentRef(a));
  const exists =
    state.infras.some((i) => `${i.metadata.namespace}/${i.metadata.name}` === infraKey) ||
    (state.invalid ?? []).some((i) => i.ref.kind === "Infra" && `${i.ref.namespace}/${i.ref.name}` === infraKey);
  if (exists) p.pending("spec.infraRef.name", "InfraNotReady", `Infra ${infraKey} is invalid; see its status`);
  else
    p.error(
      "spec.infraRef.name",
      "InfraNotFound",
      `Infra ${infraKey} does not exist in namespace ${a.metadata.namespace}`,
    );
}

/**
 * Claimants, oldest claim first: the incumbent (holder in the last accepted configuration), then
 * by metadata.creationTimestamp (RFC 3339 in UTC sorts as text; absent sorts first, as in a
 * manifest directory), then namespace/name — Gateway API's conflict resolution.
 */
export function byClaimAge(
  claimants: readonly InfraClusterAttachment[],
  incumbent: string | undefined,
): InfraClusterAttachment[] {
  const rank = (a: InfraClusterAttachment): number => (nameOf(a) === incumbent ? 0 : 1);
  return [...claimants].sort(
    (a, b) =>
      rank(a) - rank(b) ||
      cmp(a.metadata.creationTimestamp ?? "", b.metadata.creationTimestamp ?? "") ||
      cmp(nameOf(a), nameOf(b)),
  );
}

function nameOf(a: InfraClusterAttachment): string {
  return `${a.metadata.namespace}/${a.metadata.name}`;
}

/** A namespace exists when a Namespace object names it or any observed object lives in it. */
function existingNamespaces(state: ClusterState): Set<string> {
  const out = new Set<string>(Array.from(state.namespaces, (n) => n.metadata.name));
  for (const list of [state.services, state.machines, state.vmis, state.nodePools, state.hostedClusters]) {
    for (const o of list) out.add(o.metadata.namespace);
  }
  return out;
}
