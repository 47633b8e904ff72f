// Every rendered zone file must load in BIND's named-checkzone with strict checks, and its A
// records must be exactly the model's plus the NS glue.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { defaultViewNsAddress, renderCoreDns } from "../../src/dns/render/index.js";
import type { DnsModel } from "../../src/model/types.js";
import fc from "fast-check";
import { isolatedModel } from "./arbitraries.js";
import { DNS_IP, INTERNAL_IP, model } from "./fixtures.js";
import { skipUnless, toolMissing } from "../support/peers.js";

const HAVE_CHECKZONE = skipUnless(toolMissing("named-checkzone", "apt-get install bind9-utils")) === undefined;
const TITLE = HAVE_CHECKZONE
  ? "named-checkzone"
  : "named-checkzone — SKIPPED: named-checkzone not on PATH (apt-get install bind9-utils)";

const dir = mkdtempSync(join(tmpdir(), "oooi-checkzone-"));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Runs named-checkzone with every check fatal and returns its status and canonical dump. */
function checkZone(origin: string, text: string): { status: number | null; output: string } {
  const file = join(dir, `${origin}.${String(Math.random()).slice(2)}`);
  writeFileSync(file, text);
  const strict = ["-k", "fail", "-n", "fail", "-m", "fail", "-M", "fail", "-S", "fail", "-r", "fail"];
  const r = spawnSync("named-checkzone", [...strict, "-i", "local-sibling", "-D", "-o", "-", origin, file], {
    encoding: "utf8",
  });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

/** "name. A address" lines of a canonical dump, sorted. */
function dumpedA(output: string): string[] {
  return output
    .split("\n")
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f[2] === "IN" && f[3] === "A")
    .map((f) => `${f[0] ?? ""} A ${f[4] ?? ""}`)
    .sort();
}

function expectedA(view: DnsModel["views"][number], origin: string, nsAddress: string): string[] {
  const zone = view.zones.find((z) => z.origin === origin);
  const records = new Set((zone?.records ?? []).map((r) => `${r.name}. A ${r.address}`));
  return [`ns.${origin}. A ${nsAddress}`, ...records].sort();
}

/** Checks every zone file of `m`'s rendering and compares its A records with the model's. */
function expectAllZonesLoad(m: DnsModel): void {
  const files = renderCoreDns(m).files;
  const zoneKeys = Object.keys(files).filter((k) => k !== "Corefile");
  expect(zoneKeys.length).toBeGreaterThan(0);
  for (const key of zoneKeys) {
    const [, viewName, ...rest] = key.split(".");
    const origin = rest.join(".");
    const view = m.views.find((v) => v.name === viewName);
    if (view === undefined) throw new Error(`no view for ${key}`);
    const r = checkZone(origin, files[key] ?? "");
    expect(r.output, key).toContain(`zone ${origin}/IN: loaded serial 1`);
    expect(r.status, r.output).toBe(0);
    const ns =
      viewName === "vlan"
        ? m.serverIP
        : defaultViewNsAddress(m.views.flatMap((v) => (v.sourceCidr === undefined ? [] : [v.sourceCidr])));
    expect(dumpedA(r.output), key).toEqual(expectedA(view, origin, ns));
  }
}

const CASES: Record<string, DnsModel> = {
  "single cluster": model({ domains: ["example-hcp.clusters.example.com"], internal: INTERNAL_IP }),
  "three clusters with aliases and apps": model({
    domains: ["alpha.clusters.example.com", "beta.clusters.example.com", "gamma.apps.example.org"],
    aliases: true,
    apps: true,
    internal: INTERNAL_IP,
  }),
  "default view empty": model({ domains: ["example-hcp.clusters.example.com"], aliases: true, apps: true }),
  "resolv.conf upstream": model({ domains: ["x.example.com"], upstreams: "resolv.conf", internal: INTERNAL_IP }),
};

describe.skipIf(!HAVE_CHECKZONE)(TITLE, () => {
  for (const [name, m] of Object.entries(CASES)) {
    it(`accepts every zone file: ${name}`, () => {
      expectAllZonesLoad(m);
    });
  }

  it("accepts every zone file of generated models", () => {
    for (const m of fc.sample(isolatedModel, { numRuns: 12, seed: 20240601 })) expectAllZonesLoad(m);
  });

  it("loads the wildcard as a wildcard owner", () => {
    const files = renderCoreDns(model({ domains: ["d.example.com"], apps: true })).files;
    const r = checkZone("d.example.com", files["db.vlan.d.example.com"] ?? "");
    expect(r.status, r.output).toBe(0);
    expect(dumpedA(r.output)).toContain("*.apps.d.example.com. A 192.0.2.200");
  });

  it("accepts a bumped serial and moves the NS name aside when the model owns ns.<origin>", () => {
    const m = model({ domains: ["d.example.com"] });
    const first = renderCoreDns(m).files;
    const withNs: DnsModel = {
      ...m,
      views: [
        {
          ...m.views[0],
          zones: [{ origin: "d.example.com", records: [{ name: "ns.d.example.com", address: "192.0.2.77" }] }],
        },
        m.views[1],
      ],
    };
    const text = renderCoreDns(withNs, { previous: first }).files["db.vlan.d.example.com"] ?? "";
    const r = checkZone("d.example.com", text);
    expect(r.status, r.output).toBe(0);
    expect(r.output).toContain("loaded serial 2");
    expect(dumpedA(r.output)).toEqual(["ns.d.example.com. A 192.0.2.77", `ns1.d.example.com. A ${DNS_IP}`]);
  });
});
