// Envoy goldens (test/golden/envoy/<case>): a fixed ProxyModel (proxy.json, checked in) → what
// renderEnvoy makes of it: envoy.json, the text `oooi render` writes, or — when the renderer
// refuses the proxy — problems.json, the problems it reports instead (and no envoy.json). A
// renderer change is reviewed against inputs that do not move with the model; UPDATE_GOLDEN=1
// writes the outputs. A case may hold render-options.json, the EnvoyRenderOptions it renders with
// (the --filter-chain-matcher form); without it, the defaults.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { existsSync, readFileSync } from "node:fs";
import { renderEnvoy, type EnvoyRenderOptions } from "../../src/envoy/render/index.js";
import { prettyJson } from "../../src/envoy/render/json-text.js";
import type { ProxyModel } from "../../src/model/types.js";
import { caseNames, expectGolden, sortedJson } from "./layer-cases.js";
import { unionMembers } from "./reason-coverage.js";

const LAYER = join(import.meta.dirname, "envoy");
const ENVOY_FILE = "envoy.json";
const PROBLEMS_FILE = "problems.json";

function readProxy(dir: string): ProxyModel {
  return JSON.parse(readFileSync(join(dir, "proxy.json"), "utf8")) as ProxyModel;
}

function readOptions(dir: string): EnvoyRenderOptions {
  const file = join(dir, "render-options.json");
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as EnvoyRenderOptions) : {};
}

/** The case's outputs: envoy.json as the product writes it, or problems.json when refused. */
function render(dir: string): Map<string, string> {
  const r = renderEnvoy(readProxy(dir), readOptions(dir));
  return r.ok
    ? new Map([[ENVOY_FILE, `${prettyJson(r.resources)}\n`]])
    : new Map([[PROBLEMS_FILE, sortedJson(r.errors)]]);
}

const cases = caseNames(LAYER);

describe("envoy goldens: fixed ProxyModel → envoy.json", () => {
  it("has at least 30 cases", () => {
    expect(cases.length).toBeGreaterThanOrEqual(30);
  });

  it.each(cases)("%s", (name) => {
    const dir = join(LAYER, name);
    expectGolden(dir, [ENVOY_FILE, PROBLEMS_FILE], render(dir), "envoy");
  });
});

describe("envoy goldens cover the renderer's inputs and refusals", () => {
  const proxies = () => cases.map((name) => readProxy(join(LAYER, name)));

  it("every BackendKind is rendered by some case", () => {
    const seen = new Set<string>(proxies().flatMap((p) => p.backends.map((b) => b.kind)));
    expect(unionMembers("BackendKind").filter((k) => !seen.has(k))).toEqual([]);
  });

  it("both kinds of upstream are rendered by some case", () => {
    const seen = new Set(proxies().flatMap((p) => p.upstreams.map((u) => u.kind)));
    expect([...seen].sort()).toEqual(["address", "dns"]);
  });

  it("some cases are refused, each with InconsistentConfig problems on the ProxyServer", () => {
    const refused = cases
      .map((name) => renderEnvoy(readProxy(join(LAYER, name)), readOptions(join(LAYER, name))))
      .filter((r) => !r.ok);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) {
      expect(r.errors.length).toBeGreaterThan(0);
      for (const p of r.errors) expect([p.reason, p.object.kind]).toEqual(["InconsistentConfig", "ProxyServer"]);
    }
  });
});
