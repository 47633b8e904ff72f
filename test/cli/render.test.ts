// `oooi render` as a user runs it: the built CLI in a child process, on every example; the zone
// files checked by BIND's named-checkzone and the Kea files by kea-dhcp4 -t in a test namespace.
import { execFile } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { createNetns } from "../dhcp/support/netns.js";
import { findHooksDirectory, keaSkipReason } from "../dhcp/support/kea.js";
import { which } from "../dhcp/support/run.js";

const ROOT = join(import.meta.dirname, "..", "..");
const CLI = join(ROOT, "dist", "cli", "main.js");
const exec = promisify(execFile);
const scratch = mkdtempSync(join(tmpdir(), "oooi-render-"));
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

async function oooi(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await exec(process.execPath, [CLI, ...args]);
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

const examples = readdirSync(join(ROOT, "examples"), { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort();

describe("oooi render", () => {
  it("is built (npm test builds before running)", () => {
    expect(existsSync(CLI), `${CLI} missing: run npm run build`).toBe(true);
  });

  it.each(examples)(
    "renders examples/%s into the contract's files, every zone accepted by named-checkzone",
    async (name) => {
      const out = join(scratch, name);
      const r = await oooi(["render", "--manifests", join(ROOT, "examples", name), "--out", out]);
      expect(r.code, r.stderr).toBe(0);
      const status = JSON.parse(readFileSync(join(out, "status.json"), "utf8")) as {
        objects: { kind: string; name: string }[];
      };
      const children = status.objects.filter((o) => ["ProxyServer", "DNSServer", "DHCPServer"].includes(o.kind));
      expect(children.length).toBeGreaterThan(0);
      for (const c of children) {
        const dir = join(out, "clusters", c.name);
        const file = c.kind === "ProxyServer" ? "envoy.json" : c.kind === "DNSServer" ? "Corefile" : "kea-dhcp4.json";
        expect(existsSync(join(dir, file)), `${c.kind} ${c.name}: ${file}`).toBe(true);
      }
      const envoy = JSON.parse(
        readFileSync(
          join(out, "clusters", children.find((c) => c.kind === "ProxyServer")?.name ?? "", "envoy.json"),
          "utf8",
        ),
      ) as Record<string, unknown>;
      expect(Object.keys(envoy).sort()).toEqual(["clusters", "endpoints", "listeners", "routes"]);

      const checkzone = await which("named-checkzone");
      if (checkzone === undefined) return; // bind9-utils missing: .ci/run installs it
      const zones = walk(out).filter((f) => /\/db\.[^/]+$/.test(f) || f.endsWith(".zone"));
      for (const z of zones) {
        const origin = /^\$ORIGIN\s+(\S+)/m.exec(readFileSync(z, "utf8"))?.[1];
        expect(origin, `${z} has no $ORIGIN`).toBeDefined();
        const c = await exec("named-checkzone", [origin ?? "", z]).catch((e: unknown) => e as { stdout: string });
        expect(c.stdout, z).toMatch(/OK/);
      }
    },
  );

  it("exits 2 naming the file and line of unreadable YAML", async () => {
    const dir = join(scratch, "broken-yaml");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "good.yaml"), "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n");
    writeFileSync(join(dir, "bad.yaml"), "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: [unclosed\n");
    const r = await oooi(["render", "--manifests", dir, "--out", join(scratch, "broken-out")]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/bad\.yaml:\d+/);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  it("exits 2 for a missing manifest directory", async () => {
    const r = await oooi(["render", "--manifests", join(scratch, "nope"), "--out", join(scratch, "nope-out")]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("nope");
  });

  it("reports an invalid Infra by field path and still renders the valid one", async () => {
    const out = join(scratch, "invalid-again");
    const r = await oooi(["render", "--manifests", join(ROOT, "examples", "invalid-infra"), "--out", out]);
    expect(r.code).toBe(0);
    const status = JSON.parse(readFileSync(join(out, "status.json"), "utf8")) as {
      objects: {
        kind: string;
        name: string;
        status: { conditions: { status: string; reason: string }[] };
        problems: { field: string }[];
      }[];
    };
    const byName = new Map(status.objects.map((o) => [`${o.kind}/${o.name}`, o]));
    expect(byName.get("Infra/broken-vlan200")?.status.conditions[0]).toMatchObject({
      status: "False",
      reason: "InvalidSpec",
    });
    expect(byName.get("Infra/broken-vlan200")?.problems.map((p) => p.field)).toEqual(
      expect.arrayContaining(["spec.networkConfig.gateway", "spec.infraComponents.proxy.serverIP"]),
    );
    expect(byName.get("Infra/schema-broken")?.problems.map((p) => p.field)).toEqual(["spec.networkConfig.cidr"]);
    expect(byName.get("Infra/tenant-vlan100")?.status.conditions[0]).toMatchObject({ status: "True" });
    expect(byName.get("InfraClusterAttachment/orphan")?.status.conditions[0]).toMatchObject({
      status: "False",
      reason: "InfraNotReady",
    });
    expect(existsSync(join(out, "clusters", "tenant-vlan100-proxy", "envoy.json"))).toBe(true);
    expect(existsSync(join(out, "clusters", "broken-vlan200-proxy"))).toBe(false);
    expect(r.stderr).toMatch(/FAIL Infra clusters\/broken-vlan200: InvalidSpec/);
  });

  it.each([
    { enabled: true, routed: true },
    { enabled: false, routed: false },
  ])(
    "a Ready appsIngressStatus with spec.appsIngress.enabled $enabled: *.apps routed $routed, warned unless enabled",
    async ({ enabled, routed }) => {
      // The apps-ingress example (its status says Ready, VIP 192.0.2.200) with the feature switched as the row says.
      const manifests = join(scratch, `apps-enabled-${String(enabled)}`);
      cpSync(join(ROOT, "examples", "apps-ingress"), manifests, { recursive: true });
      const attachment = join(manifests, "attachment.yaml");
      const text = readFileSync(attachment, "utf8");
      expect(text).toContain("    enabled: true\n");
      writeFileSync(attachment, text.replace("    enabled: true\n", `    enabled: ${String(enabled)}\n`));
      const out = `${manifests}-out`;
      const r = await oooi(["render", "--manifests", manifests, "--out", out]);
      expect(r.code, r.stderr).toBe(0);
      const warning =
        /^warning \S*\/attachment\.yaml:\d+:\d+: InfraClusterAttachment clusters\/example-hcp: spec\.appsIngress\.enabled: status\.appsIngressStatus\.phase is Ready \(192\.0\.2\.200\) but spec\.appsIngress\.enabled is not true; .* \(AppsIngressStatusIgnored\)$/m;
      if (routed) expect(r.stderr).not.toMatch(/AppsIngressStatusIgnored/);
      else expect(r.stderr).toMatch(warning);
      const status = JSON.parse(readFileSync(join(out, "status.json"), "utf8")) as {
        objects: { kind: string; name: string; problems: { field: string; reason: string }[] }[];
      };
      const problems = status.objects.find((o) => o.kind === "InfraClusterAttachment")?.problems ?? [];
      expect(problems.filter((p) => p.reason === "AppsIngressStatusIgnored").map((p) => p.field)).toEqual(
        routed ? [] : ["spec.appsIngress.enabled"],
      );
      const envoy = readFileSync(join(out, "clusters", "tenant-vlan100-proxy", "envoy.json"), "utf8");
      expect(envoy.includes('"*.apps.example-hcp.clusters.example.com"')).toBe(routed);
      const vlanZone = join(out, "clusters", "tenant-vlan100-dns", "db.vlan.apps.example-hcp.clusters.example.com");
      expect(existsSync(vlanZone) && /^\* IN A 192\.0\.2\.200$/m.test(readFileSync(vlanZone, "utf8"))).toBe(routed);
    },
  );

  it("prints help for the program and for render", async () => {
    const top = await oooi(["--help"]);
    expect(top.stdout).toMatch(/render/);
    const render = await oooi(["render", "--help"]);
    expect(render.stdout).toMatch(/--manifests <dir\|file\|->/);
    expect(render.stdout).toMatch(/Exit status/);
  });
});

describe("rendered Kea configurations", () => {
  it("every example's kea-dhcp4.json passes kea-dhcp4 -t in a namespace that has its interface", async (ctx) => {
    const skip = await keaSkipReason();
    if (skip !== undefined) {
      ctx.skip(skip);
      return;
    }
    const hooks = await findHooksDirectory();
    for (const name of examples) {
      const out = join(scratch, `kea-${name}`);
      const r = await oooi([
        "render",
        "--manifests",
        join(ROOT, "examples", name),
        "--out",
        out,
        "--kea-hooks-dir",
        hooks ?? "",
      ]);
      expect(r.code, r.stderr).toBe(0);
      for (const file of walk(out).filter((f) => f.endsWith("kea-dhcp4.json"))) {
        const cfg = JSON.parse(readFileSync(file, "utf8")) as {
          Dhcp4: { "interfaces-config": { interfaces: string[] } };
        };
        const ns = await createNetns(
          cfg.Dhcp4["interfaces-config"].interfaces.map((i) => ({ name: i })),
          "oooi-rnd",
        );
        try {
          const work = mkdtempSync(join(tmpdir(), "oooi-kt-"));
          const check = await ns.exec("kea-dhcp4", ["-t", file], {
            env: { KEA_LOCKFILE_DIR: work, KEA_PIDFILE_DIR: work },
          });
          expect(check.code, `${name}: ${check.stdout}${check.stderr}`).toBe(0);
          rmSync(work, { recursive: true, force: true });
        } finally {
          await ns.delete();
        }
      }
    }
  });
});
