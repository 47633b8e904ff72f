// The watched objects at one moment → ClusterState (what the model reads) plus the raw objects the
// operator compares its writes against. Our own kinds pass through the API schema: invalid ones
// become ClusterState.invalid, undeclared fields ClusterState.unknownFields. Pure.
import type {
  HostedCluster,
  Machine,
  Namespace,
  NodePool,
  Service,
  VirtualMachineInstance,
} from "../../api/external.js";
import type { Infra, InfraClusterAttachment } from "../../api/schema.js";
import { decodeResource, type Decoded } from "../../api/validate.js";
import type { ClusterState, InvalidObject } from "../../model/types.js";
import type { ResourceName } from "./resources.js";
import type { KubeObject } from "./rest.js";

/** Raw objects per watched resource, keyed "<namespace>/<name>". */
export type RawObjects = Readonly<Record<ResourceName, ReadonlyMap<string, KubeObject>>>;

/** One consistent view of the cluster, emitted after every (coalesced) change. */
export interface Observed {
  /** Increases with every snapshot. */
  readonly seq: number;
  readonly state: ClusterState;
  readonly raw: RawObjects;
  /** spec.config of every observed NetworkAttachmentDefinition by "<namespace>/<name>". */
  readonly networkAttachments: ReadonlyMap<string, string>;
}

/** Memo of schema decoding, keyed by object identity (watch events replace objects, never mutate them). */
export type DecodeCache = WeakMap<KubeObject, Decoded<unknown>>;

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function sorted(m: ReadonlyMap<string, KubeObject>): KubeObject[] {
  return [...m.entries()].sort(([a], [b]) => cmp(a, b)).map(([, o]) => o);
}

/** Builds the snapshot; `cache` spares re-validating unchanged Infras and attachments. */
export function buildObserved(raw: RawObjects, seq: number, cache: DecodeCache = new WeakMap()): Observed {
  const invalid: InvalidObject[] = [];
  const unknown: InvalidObject[] = [];
  const decode = <T>(objects: ReadonlyMap<string, KubeObject>, kind: string): T[] => {
    const out: T[] = [];
    for (const o of sorted(objects)) {
      let d = cache.get(o);
      if (d === undefined) {
        d = decodeResource(o, kind);
        cache.set(o, d);
      }
      const ref = { kind, namespace: o.metadata?.namespace ?? "", name: o.metadata?.name ?? "" };
      if (d.ok) out.push(d.value as T);
      else invalid.push({ ref, errors: d.errors });
      if (d.unknown.length > 0) unknown.push({ ref, errors: d.unknown });
    }
    return out;
  };
  const state: ClusterState = {
    infras: decode<Infra>(raw.infras, "Infra"),
    attachments: decode<InfraClusterAttachment>(raw.attachments, "InfraClusterAttachment"),
    hostedClusters: sorted(raw.hostedclusters) as unknown as HostedCluster[],
    nodePools: sorted(raw.nodepools) as unknown as NodePool[],
    machines: sorted(raw.machines) as unknown as Machine[],
    vmis: sorted(raw.vmis) as unknown as VirtualMachineInstance[],
    services: sorted(raw.services) as unknown as Service[],
    namespaces: sorted(raw.namespaces) as unknown as Namespace[],
    invalid,
    unknownFields: unknown,
  };
  const networkAttachments = new Map<string, string>();
  for (const [key, nad] of raw.networkattachments) {
    const config = (nad["spec"] as { config?: unknown } | undefined)?.config;
    if (typeof config === "string") networkAttachments.set(key, config);
  }
  return { seq, state, raw, networkAttachments };
}
