// Real kubectl against the fake: get, apply --server-side (with conflicts), delete (with finalizers).
// Runs every kubectl found: $KUBECTL and the one on PATH (CI installs Debian's kubernetes-client, 1.20;
// newer ones use aggregated discovery and OpenAPI v3, older ones legacy discovery and OpenAPI v2).
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BUILTIN_KINDS, FakeApiServer, OOOI_KINDS, writeKubeconfig } from "../support/fake-apiserver/index.js";
import { onPath, skipUnless } from "../support/peers.js";

const run = promisify(execFile);

const kubectls = [
  ...new Set([process.env["KUBECTL"], onPath("kubectl")].filter((k): k is string => k !== undefined && k !== "")),
];
skipUnless(kubectls.length === 0 ? "no kubectl on PATH (apt-get install kubernetes-client)" : undefined);

describe.skipIf(kubectls.length === 0)(
  "kubectl against the fake (skipped: no kubectl on PATH; CI installs kubernetes-client)",
  () => {
    describe.each(kubectls)("%s", (bin) => {
      let fake: FakeApiServer;
      let dir: string;
      let kubeconfig: string;
      // Async exec: the fake runs in this process, a synchronous child would block it.
      const kubectl = async (...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> => {
        try {
          const r = await run(bin, ["--kubeconfig", kubeconfig, "--request-timeout=20s", ...args], {
            encoding: "utf8",
            timeout: 40_000,
          });
          return { code: 0, stdout: r.stdout, stderr: r.stderr };
        } catch (e) {
          const x = e as { code?: number; stdout?: string; stderr?: string };
          return { code: typeof x.code === "number" ? x.code : -1, stdout: x.stdout ?? "", stderr: x.stderr ?? "" };
        }
      };

      beforeAll(async () => {
        fake = await FakeApiServer.start({ kinds: [...BUILTIN_KINDS, ...OOOI_KINDS] });
        dir = await mkdtemp(join(tmpdir(), "oooi-kubectl-"));
        kubeconfig = await writeKubeconfig(fake.url, dir);
      });
      afterAll(async () => {
        await fake.stop();
        await rm(dir, { recursive: true, force: true });
      });

      const manifest = (replicas: number): string =>
        [
          "apiVersion: apps/v1",
          "kind: Deployment",
          "metadata:",
          "  name: web",
          "  labels: {app: web}",
          "spec:",
          `  replicas: ${replicas}`,
          "  selector: {matchLabels: {app: web}}",
          "  template:",
          "    metadata: {labels: {app: web}}",
          "    spec:",
          "      containers: [{name: web, image: registry.example/web:1}]",
          "---",
          "apiVersion: hostedcluster.densityops.com/v1alpha1",
          "kind: Infra",
          "metadata: {name: vlan100}",
          "spec: {networkConfig: {cidr: 192.0.2.0/24}}",
          "",
        ].join("\n");

      it("applies server-side, reports conflicts with another field manager, and forces them", async () => {
        const file = join(dir, "m.yaml");
        await writeFile(file, manifest(2));
        const first = await kubectl("apply", "--server-side", "-f", file);
        expect(first.stderr).toBe("");
        expect(first.stdout).toContain("deployment.apps/web serverside-applied");
        expect(first.stdout).toContain("infra.hostedcluster.densityops.com/vlan100 serverside-applied");
        const stored = fake.store.get(
          BUILTIN_KINDS.find((k) => k.kind === "Deployment") ?? (BUILTIN_KINDS[0] as never),
          "default",
          "web",
        );
        expect(
          (stored["metadata"] as { managedFields: { manager: string }[] }).managedFields.map((m) => m.manager),
        ).toEqual(["kubectl"]);

        await writeFile(file, manifest(3));
        const conflict = await kubectl("apply", "--server-side", "--field-manager=other", "-f", file);
        expect(conflict.code).not.toBe(0);
        expect(conflict.stderr).toContain('conflict with "kubectl"');
        expect(conflict.stderr).toContain(".spec.replicas");
        const forced = await kubectl(
          "apply",
          "--server-side",
          "--field-manager=other",
          "--force-conflicts",
          "-f",
          file,
        );
        expect(forced.code).toBe(0);
        const replicas = await kubectl(
          "get",
          "deployment",
          "web",
          "-o",
          "jsonpath={.spec.replicas} {.metadata.generation}",
        );
        expect(replicas.stdout).toBe("3 2");
      });

      it("gets by name, short name, label selector and across namespaces", async () => {
        fake.seed({
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "cfg", namespace: "kube-system", labels: { tier: "x" } },
        });
        const table = await kubectl("get", "deploy");
        expect(table.stdout).toMatch(/^NAME\s+.*\nweb\s/);
        const all = await kubectl("get", "configmaps", "-A", "-l", "tier=x", "-o", "name");
        expect(all.stdout.trim()).toBe("configmap/cfg");
        const infra = await kubectl("get", "infra", "vlan100", "-o", "json");
        expect(JSON.parse(infra.stdout)).toMatchObject({
          kind: "Infra",
          spec: { networkConfig: { cidr: "192.0.2.0/24" } },
        });
        // Server-side printing with the columns deploy/crds declares (priority 1 only under -o wide).
        const infras = await kubectl("get", "infras");
        expect(infras.stdout).toMatch(/^NAME\s+READY\s+ATTACHMENTS\s+DHCP\s+DNS\s+PROXY\s+AGE\n/);
        expect(infras.stdout).toMatch(/\nvlan100\s/);
        const wide = await kubectl("get", "infra", "vlan100", "-o", "wide");
        expect(wide.stdout).toMatch(/^NAME\s+READY\s+ATTACHMENTS\s+DHCP\s+DNS\s+PROXY\s+AGE\s+REASON\s+MESSAGE\n/);
        const missing = await kubectl("get", "configmap", "nope");
        expect(missing.code).not.toBe(0);
        expect(missing.stderr).toContain('configmaps "nope" not found');
      });

      it("deletes, waiting for finalizers to clear", async () => {
        fake.seed({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "plain", namespace: "default" } });
        const del = await kubectl("delete", "configmap", "plain");
        expect(del.stdout).toContain('configmap "plain" deleted');
        fake.seed({
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "held", namespace: "default", finalizers: ["oooi/x"] },
        });
        const pending = kubectl("delete", "configmap", "held", "--timeout=30s");
        // kubectl waits on a watch until the object is gone; a controller removing the finalizer lets it finish.
        const cm = BUILTIN_KINDS.find((k) => k.kind === "ConfigMap");
        if (cm === undefined) throw new Error("no ConfigMap kind");
        await expect
          .poll(
            () =>
              (fake.store.get(cm, "default", "held")["metadata"] as { deletionTimestamp?: string }).deletionTimestamp,
            { timeout: 20_000 },
          )
          .toEqual(expect.any(String));
        const patched = await kubectl(
          "patch",
          "configmap",
          "held",
          "--type=merge",
          "-p",
          '{"metadata":{"finalizers":null}}',
        );
        expect(patched.code).toBe(0);
        const done = await pending;
        expect(done.stdout).toContain('configmap "held" deleted');
        expect((await kubectl("get", "configmap", "held")).code).not.toBe(0);
      });
    });
  },
);
