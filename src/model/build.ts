// The pure model: ClusterState → one Topology per servable Infra, plus every problem found.
import { resolveAttachments, type ResolvedAttachment } from "./attachments.js";
import { LayeredClaims, newClaimsSink } from "./incremental/claims-view.js";
import { buildDhcp } from "./dhcp.js";
import { buildDns } from "./dns.js";
import { buildProxy } from "./backends.js";
import { dhcpServer, dnsServer, proxyServer } from "./children.js";
import { resolveInfra, type ResolvedInfra, type ServiceIndex } from "./infra.js";
import { cmp, Problems } from "./problems.js";
import type {
  AttachmentExternalService,
  AttachmentModel,
  BuildResult,
  ClusterState,
  DhcpModel,
  Topology,
} from "./types.js";
import type { InfraClusterAttachment } from "../api/schema.js";
import { formatIPv4List, parseIPv4 } from "./ipv4.js";
import { groupBy } from "../util/group.js";
import type { AllocatedAddresses } from "./workers.js";

export function build(state: ClusterState): BuildResult {
  const problems = new Problems();
  recordSchemaProblems(state, problems);

  const services: ServiceIndex = new Map(
    Array.from(state.services, (s) => [`${s.metadata.namespace}/${s.metadata.name}`, s]),
  );
  const infras = new Map<string, ResolvedInfra>();
  const sortedInfras = [...state.infras].sort((a, b) =>
    cmp(`${a.metadata.namespace}/${a.metadata.name}`, `${b.metadata.namespace}/${b.metadata.name}`),
  );
  for (const infra of sortedInfras) {
    const resolved = resolveInfra(infra, services, problems);
    if (resolved !== undefined) infras.set(`${infra.metadata.namespace}/${infra.metadata.name}`, resolved);
  }

  const claims = newClaimsSink();
  // DHCP first: where it runs, its allocations are the worker addresses of the attachments.
  const dhcps = new Map<string, DhcpModel | undefined>();
  const allocated = new Map<string, AllocatedAddresses>();
  // Grouped once: a filter of every attachment per Infra made a cold build of 3,000 Infras quadratic.
  const attachmentsByInfra = groupBy(state.attachments, (a) => `${a.metadata.namespace}/${a.spec.infraRef.name}`);
  for (const [key, infra] of infras) {
    const dhcp = buildDhcp(
      infra,
      {
        vmis: state.vmis,
        attachments: attachmentsByInfra.get(key) ?? [],
        previous: state.dhcpAllocations?.get(`${key}-dhcp`) ?? [],
        now: state.now ?? 0,
      },
      problems,
    );
    dhcps.set(key, dhcp);
    if (dhcp !== undefined) allocated.set(key, allocatedAddresses(dhcp));
  }

  const attachments = resolveAttachments(state, infras, problems, claims, allocated);
  const topologies: Topology[] = [];
  for (const [key, infra] of infras) {
    const atts = attachments.get(key) ?? [];
    const proxy = buildProxy(infra, atts, services, problems);
    const dns = buildDns(infra, atts);
    const dhcp = dhcps.get(key);
    topologies.push({
      infra: infra.ref,
      children: {
        dhcp: dhcp === undefined ? undefined : dhcpServer(infra, dhcp),
        dns: dns === undefined ? undefined : dnsServer(infra, dns),
        proxy: proxy === undefined ? undefined : proxyServer(infra, proxy),
      },
      proxy,
      dns,
      dhcp,
      attachments: atts.map(attachmentModel),
    });
  }
  return { topologies, problems: problems.sorted(), claims: new LayeredClaims(claims.base, claims.layers) };
}

/** The schema's problems: versions validation refused, and fields it does not declare. */
export function recordSchemaProblems(
  state: {
    readonly invalid?: ClusterState["invalid"] | undefined;
    readonly unknownFields?: ClusterState["unknownFields"] | undefined;
  },
  problems: Problems,
): void {
  for (const inv of state.invalid ?? []) {
    for (const e of inv.errors) problems.for(inv.ref).error(e.field, "InvalidSpec", e.message);
  }
  for (const w of state.unknownFields ?? []) {
    for (const e of w.errors) problems.for(w.ref).warning(e.field, "UnknownField", e.message);
  }
}

/** The allocation table as workerAddresses reads it; released entries belong to no worker. */
function allocatedAddresses(dhcp: DhcpModel): AllocatedAddresses {
  const byVmi = new Map<string, number[]>();
  const taken = new Set<number>();
  for (const a of dhcp.allocations) {
    const addr = parseIPv4(a.ip);
    if (addr === undefined) continue;
    taken.add(addr);
    if (a.releasedAt === undefined) byVmi.set(a.vmi, [...(byVmi.get(a.vmi) ?? []), addr]);
  }
  return { byVmi, taken };
}

function attachmentModel(a: ResolvedAttachment): AttachmentModel {
  return {
    ref: a.ref,
    domain: a.domain,
    controlPlaneNamespace: a.controlPlaneNamespace,
    hostedCluster: `${a.hostedCluster.namespace}/${a.hostedCluster.name}`,
    served: a.served,
    workerAddresses: formatIPv4List(a.workers),
    endpoints: a.endpoints,
    externalService: externalServiceOf(a.attachment),
  };
}

function externalServiceOf(a: InfraClusterAttachment): AttachmentExternalService | undefined {
  const e = a.spec.externalService;
  if (e?.enabled !== true) return undefined;
  const pool = e.addressPoolName;
  return {
    addressPoolName: pool === undefined || pool === "" ? undefined : pool,
    labels: { ...e.labels },
    annotations: { ...e.annotations },
  };
}
