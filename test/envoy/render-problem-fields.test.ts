// Renderer and consistency problems name the field of the ProxyServer they come from: each row
// breaks one thing in a model, renders it, and follows the reported field into the ProxyServer the
// operator would publish (model/children.ts) to find the value at fault there.
import { describe, expect, test } from "vitest";
import { proxyServer } from "../../src/model/children.js";
import { resolveInfra } from "../../src/model/infra.js";
import { Problems } from "../../src/model/problems.js";
import type { Backend, AddressUpstream, ProxyModel } from "../../src/model/types.js";
import { consistencyFindings } from "../../src/envoy/validate/consistency.js";
import { proxyFields, type ResourceAt } from "../../src/envoy/render/fields.js";
import { renderEnvoy } from "../../src/envoy/render/index.js";
import type { EnvoyResources } from "../../src/envoy/resources.js";
import { infra } from "../support/fixtures.js";
import { richModel } from "./proxy-fixture.js";

const PROXY_SERVER = { kind: "ProxyServer", namespace: "clusters", name: "vlan100-proxy" };

type Mutable<T> = { -readonly [K in keyof T]: T[K] extends readonly (infer E)[] ? Mutable<E>[] : T[K] };

/** richModel() as the ProxyServer "clusters/vlan100-proxy" (backends 0–20, see proxy-fixture.ts). */
function model(): Mutable<ProxyModel> {
  return { ...(structuredClone(richModel()) as Mutable<ProxyModel>), node: "clusters/vlan100-proxy" };
}

function backend(m: Mutable<ProxyModel>, i: number): Mutable<Backend> {
  const b = m.backends[i];
  if (b === undefined) throw new Error(`no backend ${String(i)}`);
  return b;
}

function upstream(m: Mutable<ProxyModel>, name: string): Mutable<AddressUpstream> {
  const u = m.upstreams.find((x) => x.name === name);
  if (u?.kind !== "address") throw new Error(`no address upstream ${name}`);
  return u;
}

/** The value at a field path ("spec.backends[3].alternateHostnames[0]") of the published ProxyServer. */
function valueAt(m: ProxyModel, field: string): unknown {
  const resolved = resolveInfra(infra(), new Map(), new Problems());
  if (resolved === undefined) throw new Error("fixture Infra does not resolve");
  let at: unknown = proxyServer(resolved, m);
  for (const step of field.split(/\.|(?=\[)/)) {
    const index = /^\[(\d+)\]$/.exec(step)?.[1];
    if (index !== undefined) at = Array.isArray(at) ? (at as unknown[])[Number(index)] : undefined;
    else at = at !== null && typeof at === "object" ? (at as Record<string, unknown>)[step] : undefined;
  }
  return at;
}

describe("renderEnvoy problems carry the ProxyServer and the field", () => {
  // The last column: what the ProxyServer holds at the field (a whole backend: its name).
  test.each<[string, (m: Mutable<ProxyModel>) => void, string, (m: ProxyModel) => unknown]>([
    // The renderers' own checks.
    [
      "a backend on a port without a listener",
      (m) => {
        (backend(m, 2) as { port: number }).port = 8443;
      },
      "spec.backends[2].port",
      () => 8443,
    ],
    [
      "source ranges on the HTTP listener",
      (m) => {
        backend(m, 0).sourcePrefixRanges = ["192.168.10.0/24"];
      },
      "spec.backends[0].sourcePrefixRanges",
      () => ["192.168.10.0/24"],
    ],
    [
      "a source range that is not a CIDR",
      (m) => {
        backend(m, 13).sourcePrefixRanges = ["192.168.10.30/32", "192.168.10.0/33"];
      },
      "spec.backends[13].sourcePrefixRanges[1]",
      () => "192.168.10.0/33",
    ],
    [
      "a connect timeout that is not positive",
      (m) => {
        upstream(m, "clusters-beta/oauth-openshift:6443").connectTimeoutSeconds = 0;
      },
      "spec.backends[15].timeoutSeconds",
      () => 0,
    ],
    [
      "an endpoint address that is not IPv4",
      (m) => {
        upstream(m, "clusters-alpha/konnectivity-server:8091").endpoints = [{ address: "fe80::1", port: 8091 }];
      },
      "spec.backends[3].targetService",
      (m) => m.upstreams.find((u) => u.name === "clusters-alpha/konnectivity-server:8091")?.target.service,
    ],
    [
      "an endpoint port out of range",
      (m) => {
        upstream(m, "tenant-x-gamma/ignition-server-proxy:443").endpoints = [{ address: "10.128.3.7", port: 70000 }];
      },
      "spec.backends[16].targetPort",
      (m) => m.upstreams.find((u) => u.name === "tenant-x-gamma/ignition-server-proxy:443")?.target.port,
    ],
    // The consistency check on the rendered set, mapped back through the chain or virtual host.
    [
      "a partial wildcard server name",
      (m) => {
        backend(m, 6).serverNames = ["kubernetes", "kube*.alpha.example.com"];
      },
      "spec.backends[6].alternateHostnames[0]",
      () => "kube*.alpha.example.com",
    ],
    [
      "two chains with the same SNI on one listener",
      (m) => {
        backend(m, 9).serverNames = ["ignition.alpha.example.com"];
      },
      "spec.backends[9]",
      (m) => m.backends[9]?.name,
    ],
    [
      "a chain forwarding to an upstream that is not there",
      (m) => {
        m.upstreams = m.upstreams.filter((u) => u.name !== "clusters-beta/konnectivity-server:8091");
      },
      "spec.backends[10]",
      (m) => m.backends[10]?.name,
    ],
    [
      "a Host domain in two virtual hosts",
      (m) => {
        const copy = {
          ...backend(m, 0),
          name: "clusters/alpha/apps-http-2",
          serverNames: ["*.APPS.alpha.example.com"],
        };
        m.backends.splice(1, 0, copy);
      },
      "spec.backends[1].hostname",
      () => "*.APPS.alpha.example.com",
    ],
  ])("%s", (_what, mutate, field, expected) => {
    const m = model();
    mutate(m);
    const r = renderEnvoy(m);
    expect(r.ok).toBe(false);
    const errors = r.ok ? [] : r.errors;
    expect(errors.map((p) => ({ object: p.object, field: p.field, reason: p.reason }))).toContainEqual({
      object: PROXY_SERVER,
      field,
      reason: "InconsistentConfig",
    });
    // Every problem names a field; the one under test points at the value that was broken.
    for (const p of errors) expect(p.field).not.toBe("");
    const held = valueAt(m, field);
    expect(typeof held === "object" && !Array.isArray(held) ? valueAt(m, `${field}.name`) : held).toStrictEqual(
      expected(m),
    );
  });
});

describe("consistency findings name their resources; proxyFields maps them to a field", () => {
  const base = (): EnvoyResources => {
    const r = renderEnvoy(richModel());
    if (!r.ok) throw new Error(r.errors.map((e) => e.message).join("\n"));
    return structuredClone(r.resources);
  };

  test.each<[string, (r: EnvoyResources) => void, ResourceAt, string]>([
    [
      "a cluster referenced by tcp_proxy is missing",
      (r) => {
        r.clusters = r.clusters.filter((c) => (c as { name: string }).name !== "clusters-beta/oauth-openshift:6443");
      },
      {
        listener: "https-443",
        chain: "clusters/beta/oauth-openshift",
        cluster: "clusters-beta/oauth-openshift:6443",
      },
      "spec.backends[15]",
    ],
    [
      "a cluster referenced by a route is missing",
      (r) => {
        r.clusters = r.clusters.filter((c) => (c as { name: string }).name !== "vip/192.168.10.200:80");
      },
      { routeConfig: "http-80", virtualHost: "clusters/alpha/apps-http", cluster: "vip/192.168.10.200:80" },
      "spec.backends[0]",
    ],
    [
      "a cluster has no ClusterLoadAssignment",
      (r) => {
        r.endpoints = r.endpoints.filter(
          (e) => (e as { cluster_name: string }).cluster_name !== "tenant-x-gamma/konnectivity-server:8091",
        );
      },
      { cluster: "tenant-x-gamma/konnectivity-server:8091" },
      "spec.backends[17]",
    ],
    [
      "the RDS route configuration is missing",
      (r) => {
        r.routes = [];
      },
      { listener: "http-80", chain: "http-80", routeConfig: "http-80" },
      "spec.backends",
    ],
    [
      "a route configuration name repeats",
      (r) => {
        r.routes.push(structuredClone(r.routes[0] ?? {}));
      },
      { routeConfig: "http-80" },
      "spec.backends",
    ],
    [
      "two listeners bind the same port",
      (r) => {
        const copy = structuredClone(r.listeners[2] ?? {}) as { name: string };
        copy.name = "other";
        r.listeners.push(copy);
      },
      { listener: "other" },
      "spec.backends",
    ],
    [
      "a domain is in two virtual hosts",
      (r) => {
        const rc = r.routes[0] as { virtual_hosts: { name: string; domains: string[] }[] };
        const first = rc.virtual_hosts[0] ?? { name: "", domains: [] };
        rc.virtual_hosts.push({ ...structuredClone(first), name: "clusters/alpha/apps-https" });
      },
      {
        routeConfig: "http-80",
        virtualHost: "clusters/alpha/apps-https",
        serverName: "*.apps.alpha.example.com",
      },
      "spec.backends[1].hostname",
    ],
    [
      "a tcp_proxy has no stat_prefix",
      (r) => {
        const chain = (r.listeners[1] as { filter_chains: { filters: { typed_config: Record<string, unknown> }[] }[] })
          .filter_chains[0];
        delete chain?.filters[0]?.typed_config["stat_prefix"];
      },
      { listener: "https-443", chain: "clusters/alpha/apps-https" },
      "spec.backends[1]",
    ],
    [
      "a connect_timeout is 0s",
      (r) => {
        (r.clusters[0] as Record<string, unknown>)["connect_timeout"] = "0s";
      },
      { cluster: "clusters-alpha/ignition-server-proxy:443" },
      "spec.backends[2]",
    ],
    [
      "a filter chain name repeats",
      (r) => {
        const l = r.listeners[2] as { filter_chains: { name: string }[] };
        const second = l.filter_chains[1];
        if (second) second.name = l.filter_chains[0]?.name ?? "";
      },
      { listener: "kube-6443", chain: "clusters/alpha/kube-apiserver" },
      "spec.backends[4]",
    ],
  ])("%s", (_what, mutate, at, field) => {
    const r = base();
    mutate(r);
    const found = consistencyFindings(r);
    expect(found.map((f) => f.at)).toContainEqual(at);
    expect(proxyFields(richModel()).at(at)).toBe(field);
  });
});
