// The watch cache's copy of each watched kind: only what the model (src/model), the operator
// (src/operator) and `oooi verify` read of it. Other projects' objects are cut down to the typed
// slices of src/api/external.ts (a CAPI Machine as its controllers leave it is ~3 KB of JSON, of
// which the model reads its NodePool annotation and its addresses); objects oooi applies or writes
// status on keep everything but metadata.managedFields and kubectl's last-applied annotation, since
// the reconciler compares every field it applies (src/operator/writing/applied.ts). Pure; never throws:
// a field of an unexpected type is dropped, as the model would skip it.
import {
  NODEPOOL_ANNOTATION,
  type HostedCluster,
  type Machine,
  type Namespace,
  type NodePool,
  type Service,
  type VirtualMachineInstance,
} from "../../api/external.js";
import type { ObjectMeta } from "../../api/schema.js";
import { parseIPv4 } from "../../model/ipv4.js";
import { MANAGED_BY, MANAGED_BY_LABEL } from "../../api/labels.js";
import type { KubeObject } from "../../kube/rest.js";

/**
 * Which fields of a T to keep: `true` keeps a value whole, `"shared"` keeps a string of few distinct
 * values (a namespace, an address type) as one string shared by every object holding it, an object
 * keeps the fields it names (each by its own shape), a one-element array keeps every element by
 * that shape.
 */
export type Shape<T> =
  | true
  | (T extends string ? "shared" : never)
  | (T extends readonly (infer E)[]
      ? readonly [Shape<E>]
      : T extends object
        ? { readonly [K in keyof T]?: Shape<NonNullable<T[K]>> }
        : never);

/** Any shape, as `slice` walks it. */
type AnyShape = true | "shared" | readonly [AnyShape] | { readonly [field: string]: AnyShape };

/**
 * The shared strings. JSON.parse makes a string per occurrence (25,000 copies of one timestamp);
 * the pool is emptied when it grows past POOL_LIMIT, so strings of deleted objects are not kept forever.
 */
const pool = new Map<string, string>();
const POOL_LIMIT = 100_000;

function shared(s: string): string {
  const kept = pool.get(s);
  if (kept !== undefined) return kept;
  if (pool.size >= POOL_LIMIT) pool.clear();
  pool.set(s, s);
  return s;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** `value` cut down to `shape`; undefined when nothing of it is kept (an empty object is not kept). */
export function slice<T>(value: unknown, shape: Shape<T>): unknown {
  return sliceAny(value, shape as AnyShape);
}

const isTuple = (s: AnyShape): s is readonly [AnyShape] => Array.isArray(s);

function sliceAny(value: unknown, shape: AnyShape): unknown {
  if (shape === true) return value;
  if (shape === "shared") return typeof value === "string" ? shared(value) : value;
  if (isTuple(shape)) {
    const element = shape[0];
    return Array.isArray(value) ? value.map((v) => sliceAny(v, element) ?? {}) : undefined;
  }
  if (!isObject(value)) return undefined;
  const out: Record<string, unknown> = {};
  let kept = false;
  for (const [field, inner] of Object.entries(shape)) {
    if (!(field in value)) continue;
    const v = sliceAny(value[field], inner);
    if (v === undefined) continue;
    out[field] = v;
    kept = true;
  }
  return kept ? out : undefined;
}

/** Identity, version and lifecycle: what keys an object, orders claims and says it is going. */
const IDENTITY = {
  name: true,
  namespace: "shared",
  uid: true,
  resourceVersion: true,
  creationTimestamp: "shared",
  deletionTimestamp: true,
} as const satisfies Shape<ObjectMeta>;

const MACHINE: Shape<Machine> = {
  apiVersion: "shared",
  kind: "shared",
  metadata: { ...IDENTITY, annotations: { [NODEPOOL_ANNOTATION]: "shared" } },
  status: { addresses: [{ type: "shared", address: true }] },
};

const NODE_POOL: Shape<NodePool> = {
  apiVersion: "shared",
  kind: "shared",
  metadata: IDENTITY,
  spec: { clusterName: true, platform: { type: "shared" } },
};

/** The endpoints it publishes (src/model/endpoints.ts); apps ingress reads the kubeconfig Secret's name. */
const HOSTED_CLUSTER: Shape<HostedCluster> = {
  apiVersion: "shared",
  kind: "shared",
  metadata: IDENTITY,
  spec: {
    services: [
      {
        service: "shared",
        servicePublishingStrategy: {
          type: "shared",
          route: { hostname: true },
          loadBalancer: { hostname: true },
        },
      },
    ],
  },
  status: {
    kubeconfig: { name: true },
    controlPlaneEndpoint: { host: true, port: true },
    oauthCallbackURLTemplate: true,
    ignitionEndpoint: true,
  },
};

const VMI: Shape<VirtualMachineInstance> = {
  apiVersion: "shared",
  kind: "shared",
  metadata: IDENTITY,
  spec: {
    domain: { devices: { interfaces: [{ name: true, macAddress: true }] } },
    networks: [{ name: true, multus: { networkName: true }, pod: true }],
  },
  status: {
    interfaces: [{ name: true, mac: true, ipAddress: true, ipAddresses: true, interfaceName: true }],
    migrationState: true,
  },
};

/** A Service oooi does not manage: a control-plane target or the internalProxyService. */
const SERVICE: Shape<Service> = {
  apiVersion: "shared",
  kind: "shared",
  metadata: IDENTITY,
  spec: {
    type: "shared",
    clusterIP: true,
    ports: [{ name: "shared", port: true, targetPort: true, protocol: "shared" }],
  },
};

const NAMESPACE: Shape<Namespace> = { apiVersion: "shared", kind: "shared", metadata: IDENTITY };

const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

/**
 * An object without metadata.managedFields and kubectl's last-applied annotation, which are often
 * most of its bytes and which nothing reads. An object holding neither is returned as it is.
 */
export function withoutBookkeeping(o: KubeObject): KubeObject {
  const meta = o.metadata as (KubeObject["metadata"] & { managedFields?: unknown }) | undefined;
  const annotations = meta?.annotations;
  const lastApplied = annotations !== undefined && LAST_APPLIED in annotations;
  if (meta === undefined || (meta.managedFields === undefined && !lastApplied)) return o;
  const rest: Record<string, unknown> = { ...meta };
  delete rest["managedFields"];
  const kept =
    annotations === undefined || !lastApplied
      ? annotations
      : Object.fromEntries(Object.entries(annotations).filter(([k]) => k !== LAST_APPLIED));
  return { ...o, metadata: { ...rest, ...(kept === undefined ? {} : { annotations: kept }) } };
}

/** A projection by shape (the object is never dropped, only its unread fields). */
const by =
  <T>(shape: Shape<T>) =>
  (o: KubeObject): KubeObject =>
    (slice(o, shape) ?? {}) as KubeObject;

/**
 * A Machine's slice, then cut further: of its addresses only those the model can use — IPv4 text
 * (src/model/workers.ts skips the rest: CAPI also reports Hostname and InternalDNS entries, a
 * third to two thirds of them) — and its annotations object shared with every Machine of its
 * NodePool (a frozen object per distinct value). 25,000 Machines were most of the watch cache.
 */
function machineSlice(o: KubeObject): KubeObject {
  // Typed loosely: an object missing what the type requires is projected as far as it goes.
  const m = by<Machine>(MACHINE)(o) as {
    metadata?: KubeObject["metadata"];
    status?: { addresses?: { address?: unknown }[] };
  } & Record<string, unknown>;
  const all = m.status?.addresses;
  const usable = all?.filter((a) => typeof a.address === "string" && isIPv4(a.address));
  // filter's array keeps spare capacity (~145 bytes for one address); the slice's map made an exact one.
  const addresses = usable === undefined || usable.length === all?.length ? all : usable.slice();
  const pool: unknown = m.metadata?.annotations?.[NODEPOOL_ANNOTATION];
  // Built field by field, never with `delete` (it turns an object into a slower, bigger dictionary).
  const out: Record<string, unknown> = {};
  if (m["apiVersion"] !== undefined) out["apiVersion"] = m["apiVersion"];
  if (m["kind"] !== undefined) out["kind"] = m["kind"];
  if (m.metadata !== undefined)
    out["metadata"] = typeof pool === "string" ? { ...m.metadata, annotations: sharedAnnotations(pool) } : m.metadata;
  if (addresses !== undefined && addresses.length > 0) out["status"] = { addresses };
  return out;
}

const isIPv4 = (address: string): boolean => parseIPv4(address.trim()) !== undefined;

const annotationPool = new Map<string, Readonly<Record<string, string>>>();

/** The one frozen `{ nodePool annotation: value }` object for `value` (bounded as the string pool is). */
function sharedAnnotations(value: string): Readonly<Record<string, string>> {
  const kept = annotationPool.get(value);
  if (kept !== undefined) return kept;
  if (annotationPool.size >= POOL_LIMIT) annotationPool.clear();
  const made = Object.freeze({ [NODEPOOL_ANNOTATION]: shared(value) });
  annotationPool.set(value, made);
  return made;
}

/** Per kind of another project: the typed slice the model reads. */
export const project = {
  machine: machineSlice,
  nodePool: by<NodePool>(NODE_POOL),
  hostedCluster: by<HostedCluster>(HOSTED_CLUSTER),
  vmi: by<VirtualMachineInstance>(VMI),
  namespace: by<Namespace>(NAMESPACE),
  /** Services oooi applies keep every field (the reconciler compares them); others their slice. */
  service: (o: KubeObject): KubeObject =>
    o.metadata?.labels?.[MANAGED_BY_LABEL] === MANAGED_BY ? withoutBookkeeping(o) : by<Service>(SERVICE)(o),
  /** Kinds oooi owns or applies (and NADs, whose spec.config it copies): all but the bookkeeping. */
  whole: withoutBookkeeping,
} as const;
