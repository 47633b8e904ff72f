// The filter_chain_matcher form (--filter-chain-matcher, src/envoy/render/chain-matcher.ts): what a
// worker joining changes, and that the form survives the trip through Envoy's own protos.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { renderEnvoy } from "../../src/envoy/render/index.js";
import type { Backend, ProxyModel } from "../../src/model/types.js";
import { decodeResource, encodeResource, LISTENER_TYPE_URL } from "../../src/xds/resource/protos.js";

const CASE = join(import.meta.dirname, "..", "golden", "envoy", "two-clusters-disjoint-worker-sources", "proxy.json");
const proxy = JSON.parse(readFileSync(CASE, "utf8")) as ProxyModel;

/** The proxy after one more worker of `attachment` joined: its by-source backends list the new /32. */
function withWorker(p: ProxyModel, attachment: string, ip: string): ProxyModel {
  const joined = (b: Backend): Backend =>
    b.attachment === attachment && b.sourcePrefixRanges.length > 0
      ? { ...b, sourcePrefixRanges: [...b.sourcePrefixRanges, `${ip}/32`] }
      : b;
  return { ...p, backends: p.backends.map(joined) };
}

function listeners(p: ProxyModel, filterChainMatcher: boolean): Record<string, unknown>[] {
  const r = renderEnvoy(p, { filterChainMatcher });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.resources.listeners as Record<string, unknown>[];
}

const chainsOf = (l: Record<string, unknown>): unknown => l["filter_chains"];

describe("--filter-chain-matcher: a worker joining changes only the matcher", () => {
  const before = proxy;
  const after = withWorker(proxy, "clusters/alpha", "192.0.2.99");

  it("with the flag, every listener's chains are the same and only filter_chain_matcher differs", () => {
    const [was, now] = [listeners(before, true), listeners(after, true)];
    expect(now.map((l) => l["name"])).toEqual(was.map((l) => l["name"]));
    now.forEach((l, i) => {
      expect(chainsOf(l)).toEqual(chainsOf(was[i] ?? {}));
      expect({ ...l, filter_chain_matcher: undefined }).toEqual({ ...was[i], filter_chain_matcher: undefined });
    });
    expect(now.map((l) => l["filter_chain_matcher"])).not.toEqual(was.map((l) => l["filter_chain_matcher"]));
  });

  it("without it, the joining worker's cluster's by-source chains change", () => {
    const changed = (ls: Record<string, unknown>[][]): string[] =>
      (ls[1] ?? []).flatMap((l, i) =>
        (l["filter_chains"] as { name: string }[])
          .filter((c, j) => JSON.stringify(c) !== JSON.stringify((ls[0]?.[i]?.["filter_chains"] as unknown[])[j]))
          .map((c) => c.name),
      );
    expect(changed([listeners(before, false), listeners(after, false)])).toEqual([
      "clusters/alpha/kubernetes-hostname",
      "clusters/alpha/kubernetes-service",
    ]);
  });

  it("chains carry no filter_chain_match, and every chain is named by the matcher", () => {
    for (const l of listeners(after, true)) {
      if (l["filter_chain_matcher"] === undefined) continue;
      const text = JSON.stringify(l["filter_chain_matcher"]);
      for (const c of l["filter_chains"] as Record<string, unknown>[]) {
        expect(c["filter_chain_match"]).toBeUndefined();
        expect(text).toContain(JSON.stringify(c["name"]));
      }
    }
  });

  it("the matcher form encodes with Envoy's protos and decodes to the same JSON", () => {
    for (const l of listeners(after, true)) {
      expect(decodeResource(LISTENER_TYPE_URL, encodeResource(LISTENER_TYPE_URL, l))).toEqual(l);
    }
  });
});

describe("--filter-chain-matcher refuses what the matcher would widen", () => {
  it("a sourced server name beside chains without SNI on the same listener", () => {
    // kube-apiserver on 6443 given sources: a stranger naming api.* would fall through to the
    // no-SNI kubernetes-service chains through on_no_match, where filter_chain_match closes it.
    const sourced = (b: Backend): Backend =>
      b.kind === "kube-apiserver" && b.attachment === "clusters/alpha"
        ? { ...b, sourcePrefixRanges: ["192.0.2.50/32"] }
        : b;
    const p = { ...proxy, backends: proxy.backends.map(sourced) };
    expect(renderEnvoy(p).ok).toBe(true);
    const r = renderEnvoy(p, { filterChainMatcher: true });
    expect(r.ok ? [] : r.errors.map((e) => [e.field, e.reason])).toEqual([
      [expect.stringMatching(/^spec\.backends\[\d+\]\.sourcePrefixRanges$/), "InconsistentConfig"],
    ]);
    expect(r.ok ? "" : (r.errors[0]?.message ?? "")).toMatch(/would reach "clusters\/alpha\/kubernetes-service"/);
  });
});
