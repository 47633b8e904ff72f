// Discovery documents built from the served kinds: legacy (/api, /apis, APIResourceList) and
// aggregated (apidiscovery.k8s.io/v2, which kubectl ≥ 1.26 asks for first), plus /version.
import type { JsonObject, ResourceKind } from "./types.js";

/** Verbs every served resource supports. */
export const RESOURCE_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];
const STATUS_VERBS = ["get", "patch", "update"];

/** Content type of an aggregated discovery answer. */
export const AGGREGATED_CONTENT_TYPE = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/** True when the Accept header asks for aggregated discovery v2. */
export function wantsAggregated(accept: string | undefined): boolean {
  return (
    accept !== undefined &&
    accept
      .split(",")
      .some((a) => a.includes("as=APIGroupDiscoveryList") && a.includes("v=v2") && !a.includes("v=v2beta1"))
  );
}

function groups(kinds: readonly ResourceKind[]): Map<string, Map<string, ResourceKind[]>> {
  const out = new Map<string, Map<string, ResourceKind[]>>();
  for (const k of [...kinds].sort((a, b) => a.plural.localeCompare(b.plural))) {
    const g = out.get(k.group) ?? new Map<string, ResourceKind[]>();
    g.set(k.version, [...(g.get(k.version) ?? []), k]);
    out.set(k.group, g);
  }
  return out;
}

// Highest version first, by the Kubernetes version priority (GA > beta > alpha, then number).
function versionRank(v: string): number {
  const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
  if (!m) return -1;
  const major = Number(m[1]);
  const level = m[2] === undefined ? 2 : m[2] === "beta" ? 1 : 0;
  return level * 1_000_000 + major * 1000 + Number(m[3] ?? 0);
}

function sortedVersions(vs: Iterable<string>): string[] {
  return [...vs].sort((a, b) => versionRank(b) - versionRank(a));
}

/** GET /api: APIVersions. */
export function apiVersions(host: string): JsonObject {
  return {
    kind: "APIVersions",
    versions: ["v1"],
    serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress: host }],
  };
}

function apiGroup(name: string, versions: Map<string, ResourceKind[]>): JsonObject {
  const vs = sortedVersions(versions.keys()).map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
  return { name, versions: vs, preferredVersion: vs[0] ?? null };
}

/** GET /apis: APIGroupList of the non-core groups. */
export function apiGroupList(kinds: readonly ResourceKind[]): JsonObject {
  const gs = [...groups(kinds)].filter(([g]) => g !== "").sort(([a], [b]) => a.localeCompare(b));
  return { kind: "APIGroupList", apiVersion: "v1", groups: gs.map(([g, vs]) => apiGroup(g, vs)) };
}

/** GET /apis/<group>: APIGroup, or undefined when the group is not served. */
export function apiGroupDoc(kinds: readonly ResourceKind[], group: string): JsonObject | undefined {
  const vs = groups(kinds).get(group);
  return vs === undefined || group === "" ? undefined : { kind: "APIGroup", apiVersion: "v1", ...apiGroup(group, vs) };
}

/** GET /api/v1 or /apis/<group>/<version>: APIResourceList, or undefined when not served. */
export function apiResourceList(
  kinds: readonly ResourceKind[],
  group: string,
  version: string,
): JsonObject | undefined {
  const ks = groups(kinds).get(group)?.get(version);
  if (ks === undefined) return undefined;
  const resources: JsonObject[] = [];
  for (const k of ks) {
    const r: JsonObject = {
      name: k.plural,
      singularName: k.singular ?? k.kind.toLowerCase(),
      namespaced: k.namespaced,
      kind: k.kind,
      verbs: RESOURCE_VERBS,
    };
    if (k.shortNames !== undefined && k.shortNames.length > 0) r["shortNames"] = [...k.shortNames];
    if (k.categories !== undefined && k.categories.length > 0) r["categories"] = [...k.categories];
    resources.push(r);
    if (k.statusSubresource === true) {
      resources.push({
        name: `${k.plural}/status`,
        singularName: "",
        namespaced: k.namespaced,
        kind: k.kind,
        verbs: STATUS_VERBS,
      });
    }
  }
  return {
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion: group === "" ? version : `${group}/${version}`,
    resources,
  };
}

function discoveryResource(k: ResourceKind): JsonObject {
  const r: JsonObject = {
    resource: k.plural,
    responseKind: { group: k.group, version: k.version, kind: k.kind },
    scope: k.namespaced ? "Namespaced" : "Cluster",
    singularResource: k.singular ?? k.kind.toLowerCase(),
    verbs: RESOURCE_VERBS,
  };
  if (k.shortNames !== undefined && k.shortNames.length > 0) r["shortNames"] = [...k.shortNames];
  if (k.categories !== undefined && k.categories.length > 0) r["categories"] = [...k.categories];
  if (k.statusSubresource === true) {
    r["subresources"] = [
      {
        subresource: "status",
        responseKind: { group: k.group, version: k.version, kind: k.kind },
        verbs: STATUS_VERBS,
      },
    ];
  }
  return r;
}

/** Aggregated discovery (apidiscovery.k8s.io/v2 APIGroupDiscoveryList) for /api (core) or /apis (the rest). */
export function aggregatedDiscovery(kinds: readonly ResourceKind[], core: boolean): JsonObject {
  const items = [...groups(kinds)]
    .filter(([g]) => (g === "") === core)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([g, vs]) => ({
      metadata: g === "" ? {} : { name: g },
      versions: sortedVersions(vs.keys()).map((v) => ({
        version: v,
        resources: (vs.get(v) ?? []).map(discoveryResource),
        freshness: "Current",
      })),
    }));
  return { kind: "APIGroupDiscoveryList", apiVersion: "apidiscovery.k8s.io/v2", metadata: {}, items };
}

/** Server version reported by /version. */
export interface ServerVersion {
  major: string;
  minor: string;
}

/** GET /version: version.Info. */
export function versionInfo(v: ServerVersion): JsonObject {
  return {
    major: v.major,
    minor: v.minor,
    gitVersion: `v${v.major}.${v.minor}.0-oooi-fake`,
    gitCommit: "0000000000000000000000000000000000000000",
    gitTreeState: "clean",
    buildDate: "2025-01-01T00:00:00Z",
    goVersion: "go1.23.0",
    compiler: "gc",
    platform: "linux/amd64",
  };
}
