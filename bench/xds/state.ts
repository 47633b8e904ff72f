// Large ClusterStates for the xDS benchmark, built from the test fixtures: Infras with hosted
// clusters and their KubeVirt worker Machines. Two address layouts: "interleaved" (worker w of
// cluster c at offset w·clusters + c: no two neighbouring addresses share a cluster, so every
// worker stays its own /32 source range — the largest listener a worker count can produce) and
// "blocks" (each cluster's workers contiguous in an aligned block, which aggregates to a few CIDRs).
import type { Machine, Namespace, NodePool, Service } from "../../src/api/external.js";
import type { ClusterState } from "../../src/model/types.js";
import { formatIPv4 } from "../../src/model/ipv4.js";
import { attachment, infra, machine, namespace, nodePool, NS, service, state } from "../../test/support/fixtures.js";

/** Shape of one generated Infra. */
export interface InfraShape {
  /** Index, unique in the state: names and address blocks derive from it. */
  readonly index: number;
  /** First address of the Infra's network. */
  readonly base: number;
  /** Prefix length of the Infra's network. */
  readonly prefix: number;
  readonly clusters: number;
  readonly workers: number;
  readonly layout: "interleaved" | "blocks";
}

/** Offset of the first worker address in an Infra's network (gateway, servers below it). */
const WORKER_OFFSET = 256;

/** Name of Infra `i`. */
export function infraName(i: number): string {
  return `vlan-${String(i).padStart(3, "0")}`;
}

/** Name of hosted cluster `c` of Infra `i`. */
export function clusterName(i: number, c: number): string {
  return `hc-${String(i).padStart(3, "0")}-${String(c).padStart(3, "0")}`;
}

/** Node group (Envoy node.cluster) of Infra `i`'s ProxyServer. */
export function groupOf(i: number): string {
  return `${NS}/${infraName(i)}-proxy`;
}

/** Aligned block size per cluster in the "blocks" layout: a power of two ≥ workers. */
function blockSize(shape: InfraShape): number {
  return 2 ** Math.ceil(Math.log2(Math.max(1, shape.workers)));
}

/** Address of worker `w` of cluster `c`. */
export function workerAddress(shape: InfraShape, c: number, w: number): string {
  const offset = shape.layout === "interleaved" ? w * shape.clusters + c : c * blockSize(shape) + w;
  return formatIPv4(shape.base + WORKER_OFFSET + offset);
}

/** A free address of the Infra above every worker and below the DHCP pool, for moves. */
export function spareAddress(shape: InfraShape, k: number): string {
  const size = 2 ** (32 - shape.prefix);
  const first = WORKER_OFFSET + shape.clusters * (shape.layout === "interleaved" ? shape.workers : blockSize(shape));
  const room = size - 256 - first; // the DHCP pool takes the top 256
  return formatIPv4(shape.base + first + (k % room));
}

/** Every object of one Infra: the Infra, its attachments and each hosted cluster's parts. */
export function infraState(shape: InfraShape): ClusterState {
  const { index: i, base, prefix } = shape;
  const size = 2 ** (32 - prefix);
  const ip = (offset: number): string => formatIPv4(base + offset);
  const parts: ClusterState = state({
    infras: [
      infra(infraName(i), {
        networkConfig: {
          cidr: `${ip(0)}/${String(prefix)}`,
          gateway: ip(1),
          networkAttachmentDefinition: infraName(i),
        },
        infraComponents: {
          dhcp: { serverIP: ip(2), rangeStart: ip(size - 256), rangeEnd: ip(size - 2) },
          dns: { serverIP: ip(3) },
          proxy: { serverIP: ip(4), internalProxyService: "10.96.0.44" },
        },
      }),
    ],
  });
  const out = {
    infras: [...parts.infras],
    attachments: [] as ClusterState["attachments"][number][],
    namespaces: [] as Namespace[],
    services: [] as Service[],
    nodePools: [] as NodePool[],
    machines: [] as Machine[],
  };
  for (let c = 0; c < shape.clusters; c += 1) {
    const name = clusterName(i, c);
    const cp = `${NS}-${name}`;
    out.attachments.push(attachment(name, { infra: infraName(i), baseDomain: "bench.example.com" }));
    out.namespaces.push(namespace(cp));
    // ClusterIPs from 172.16.0.0/12, unique per hosted cluster.
    const svcBase = ((172 << 24) | (16 << 16)) + (i * 1024 + c) * 4;
    const svc = (k: number): string => formatIPv4((svcBase + k) >>> 0);
    out.services.push(
      service(cp, "kube-apiserver", svc(0), [6443]),
      service(cp, "oauth-openshift", svc(1), [6443]),
      service(cp, "ignition-server-proxy", svc(2), [443]),
      service(cp, "konnectivity-server", svc(3), [8091]),
    );
    out.nodePools.push(nodePool(name));
    for (let w = 0; w < shape.workers; w += 1) {
      out.machines.push(machine(cp, workerName(i, c, w), `${name}-workers`, [workerAddress(shape, c, w)]));
    }
  }
  return state(out);
}

/** Name of worker Machine `w` of cluster `c` of Infra `i`. */
export function workerName(i: number, c: number, w: number): string {
  return `${clusterName(i, c)}-worker-${String(w)}`;
}

/** Concatenates per-Infra states into one (arrays kept in order). */
export function merge(parts: readonly ClusterState[]): ClusterState {
  return state({
    infras: parts.flatMap((p) => p.infras),
    attachments: parts.flatMap((p) => p.attachments),
    namespaces: parts.flatMap((p) => [...p.namespaces]),
    services: parts.flatMap((p) => [...p.services]),
    nodePools: parts.flatMap((p) => [...p.nodePools]),
    machines: parts.flatMap((p) => [...p.machines]),
  });
}

/** A copy of `s` where Machine `name` in namespace `cp` reports `address` instead. */
export function moveMachine(s: ClusterState, cp: string, name: string, pool: string, address: string): ClusterState {
  const machines = [...s.machines].map((m) =>
    m.metadata.namespace === cp && m.metadata.name === name ? machine(cp, name, pool, [address]) : m,
  );
  return { ...s, machines };
}
