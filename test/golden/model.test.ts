// Model goldens (test/golden/model/<case>): manifests read by the manifest loader `serve` and
// `render` use → the model's output as reviewed JSON (model.json): each servable Infra's Topology,
// every object's Ready condition with its problems, and who holds each claim. A change to the
// model is reviewed as a diff of these files; UPDATE_GOLDEN=1 writes them.
//
// A case folder holds manifests/ (YAML) and, optionally, context.json: what serve passes beside
// the manifests — `now` (RFC 3339), the persisted DHCP tables (`dhcpAllocations`, by DHCPServer
// "<namespace>/<name>") and the claims of the last accepted configuration (`incumbents`).
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { DHCPAllocation } from "../../src/api/schema.js";
import { build } from "../../src/model/build.js";
import { objectStatuses } from "../../src/model/status.js";
import type { ClusterState } from "../../src/model/types.js";
import { loadManifestDir } from "../../src/watchers/manifests.js";
import { caseNames, expectGolden, sortedJson } from "./layer-cases.js";
import { modelReasonsUncovered, unionMembers } from "./reason-coverage.js";

const LAYER = join(import.meta.dirname, "model");
const MODEL_FILE = "model.json";
/** A fixed clock for every case without its own: DHCP release stamps read the same every run. */
const DEFAULT_NOW = "2025-01-01T00:00:00.000Z";

interface Context {
  readonly now?: string;
  readonly dhcpAllocations?: Readonly<Record<string, readonly DHCPAllocation[]>>;
  readonly incumbents?: Readonly<Record<string, string>>;
}

async function caseState(dir: string): Promise<ClusterState> {
  const load = await loadManifestDir(join(dir, "manifests"));
  if (!load.ok) throw new Error(`${dir}: manifests unreadable: ${JSON.stringify(load.error)}`);
  const contextFile = join(dir, "context.json");
  const context = existsSync(contextFile) ? (JSON.parse(readFileSync(contextFile, "utf8")) as Context) : {};
  return {
    ...load.state,
    now: Date.parse(context.now ?? DEFAULT_NOW),
    ...(context.dhcpAllocations === undefined
      ? {}
      : { dhcpAllocations: new Map(Object.entries(context.dhcpAllocations)) }),
    ...(context.incumbents === undefined ? {} : { incumbents: new Map(Object.entries(context.incumbents)) }),
  };
}

/** The reviewed form: topologies, every object's status (its problems without the repeated object), claims. */
export async function modelJson(dir: string): Promise<string> {
  const state = await caseState(dir);
  const result = build(state);
  const status = objectStatuses(state, result).map((s) => ({
    object: s.object,
    ready: s.ready,
    problems: s.problems.map(({ field, reason, severity, message }) => ({ field, reason, severity, message })),
  }));
  const claims = Object.fromEntries([...result.claims].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return sortedJson({ topologies: result.topologies, status, claims });
}

const cases = caseNames(LAYER);

describe("model goldens: manifests → Topology + status", () => {
  it("has at least 30 cases", () => {
    expect(cases.length).toBeGreaterThanOrEqual(30);
  });

  it.each(cases)("%s", async (name) => {
    const dir = join(LAYER, name);
    expectGolden(dir, [MODEL_FILE], new Map([[MODEL_FILE, await modelJson(dir)]]), "model");
  });
});

describe("model goldens cover the model's vocabulary", () => {
  // Read when each test runs: an UPDATE_GOLDEN=1 run has written them by then.
  const goldens = (): GoldenModel[] =>
    cases
      .map((name) => join(LAYER, name, MODEL_FILE))
      .filter((file) => existsSync(file))
      .map((file) => JSON.parse(readFileSync(file, "utf8")) as GoldenModel);

  it("every ProblemReason the model reports appears in some model golden", () => {
    const seen = new Set(goldens().flatMap((m) => m.status.flatMap((s) => s.problems.map((p) => p.reason))));
    expect(modelReasonsUncovered(seen)).toEqual([]);
  });

  it("every BackendKind appears in some model golden", () => {
    const kinds = unionMembers("BackendKind");
    const seen = new Set(
      goldens().flatMap((m) => m.topologies.flatMap((t) => t.proxy?.backends.map((b) => b.kind) ?? [])),
    );
    expect(kinds.filter((k) => !seen.has(k))).toEqual([]);
  });

  it("both kinds of upstream appear in some model golden", () => {
    const seen = new Set(
      goldens().flatMap((m) => m.topologies.flatMap((t) => t.proxy?.upstreams.map((u) => u.kind) ?? [])),
    );
    expect([...seen].sort()).toEqual(["address", "dns"]);
  });
});

interface GoldenModel {
  readonly topologies: readonly {
    readonly proxy?: {
      readonly backends: readonly { kind: string }[];
      readonly upstreams: readonly { kind: string }[];
    };
  }[];
  readonly status: readonly { readonly problems: readonly { reason: string }[] }[];
}
