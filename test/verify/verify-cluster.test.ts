// `oooi verify --kubeconfig` (the built CLI) against the fake API server seeded with the example and
// reconciled once by the operator (so the children carry the status it writes). There is no kubelet:
// the test plays it — it checks the probe pod's NAD annotation, image, command and security context,
// then runs the pod's command with the real sh and dig against a real `oooi serve` DNS responder
// listening on the DNSServer's VLAN address (the VLAN emulated on loopback: the pod's address bound), sets the phase and serves the log.
import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, ROOT, ServeProcess, oooi, until } from "../support/cli.js";
import { FakeApiServer, writeKubeconfig, type KubeObject } from "../support/fake-apiserver/index.js";
import { eventually } from "../support/fake-apiserver/eventually.js";
import {
  markDeploymentsAvailable,
  readyOf,
  seededFake,
  startOperator,
  stored,
  storedList,
} from "../operator/support.js";
import { type Row, resultRows } from "./result-row.js";

const IMAGE = "example.test/dnsutils:1";
const tmp = mkdtempSync(join(tmpdir(), "oooi-verify-cluster-"));
let fake: FakeApiServer;
let kubeconfig = "";
let serve: ServeProcess;
let dnsPort = "";

beforeAll(async () => {
  fake = await seededFake();
  const { op } = startOperator(fake);
  await eventually(() => {
    markDeploymentsAvailable(fake);
    for (const [kind, name] of [
      ["ProxyServer", "tenant-vlan-proxy"],
      ["DHCPServer", "tenant-vlan-dhcp"],
    ] as const) {
      const o = stored(fake, "hostedcluster.densityops.com/v1alpha1", kind, "clusters", name);
      expect((o?.["status"] as { ackedVersion?: string } | undefined)?.ackedVersion).toBe("v1");
      expect(readyOf(o)?.["status"]).toBe("True");
    }
  }, 30_000);
  await op.close();
  kubeconfig = await writeKubeconfig(fake.url, tmp);
  serve = new ServeProcess([
    "--manifests",
    join(ROOT, "examples", "standalone"),
    "--dns-listen",
    "127.0.8.3:0",
    "--no-xds",
  ]);
  const port = await serve.dnsPort();
  await until(() => serve.log.includes('"msg":"rendered"'), "first rendering");
  dnsPort = String(port);
});

afterAll(async () => {
  await serve.stop();
  await fake.stop();
  rmSync(tmp, { recursive: true, force: true });
});

interface Meta {
  name: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

function meta(o: KubeObject): Meta {
  return o["metadata"] as unknown as Meta;
}

function pods(): KubeObject[] {
  return storedList(fake, "v1", "Pod", "clusters");
}

/** The VLAN address the pod asked for: from the NAD copy's static IPAM, or the network selection's `ips`. */
function podVlanAddress(pod: KubeObject): string {
  const sel = JSON.parse(meta(pod).annotations?.["k8s.v1.cni.cncf.io/networks"] ?? "[]") as {
    name: string;
    namespace: string;
    interface?: string;
    ips?: string[];
  }[];
  expect(sel).toHaveLength(1);
  const first = sel[0];
  if (first === undefined) throw new Error("no network selected");
  expect(first.interface).toBe("net1");
  if (first.ips !== undefined) return (first.ips[0] ?? "").split("/")[0] ?? "";
  const nad = stored(fake, "k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition", first.namespace, first.name);
  const config = JSON.parse((nad?.["spec"] as { config: string }).config) as {
    type: string;
    vlan: number;
    ipam: { type: string; addresses: { address: string }[] };
  };
  // The VLAN's own plugin config, with static IPAM.
  expect(config).toMatchObject({ type: "bridge", vlan: 100, ipam: { type: "static" } });
  return (config.ipam.addresses[0]?.address ?? "").split("/")[0] ?? "";
}

/** Runs `command` as the pod would, with dig on the emulated VLAN: serve's port, the pod's address. */
function runAsPod(command: string[], vlanAddress: string): Promise<{ code: number; log: string }> {
  const bin = mkdtempSync(join(tmp, "bin-"));
  writeFileSync(join(bin, "dig"), `#!/bin/sh\nexec /usr/bin/dig -p ${dnsPort} -b ${vlanAddress} "$@"\n`);
  chmodSync(join(bin, "dig"), 0o755);
  const [file, ...args] = command;
  return new Promise((resolve, reject) => {
    const child = spawn(file ?? "sh", args, { env: { ...process.env, PATH: `${bin}:${process.env["PATH"] ?? ""}` } });
    let log = "";
    child.stdout.on("data", (b: Buffer) => (log += b.toString()));
    child.stderr.on("data", (b: Buffer) => (log += b.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      resolve({ code: code ?? 1, log });
    });
  });
}

type Kubelet = "run" | "fail" | "ignore";
const seen = new Set<string>();

/** Plays the kubelet for the next probe pod; returns the pod as created and its VLAN address. */
async function kubelet(mode: Kubelet): Promise<{ pod: KubeObject; address: string }> {
  let pod: KubeObject | undefined;
  await eventually(() => {
    pod = pods().find(
      (p) => meta(p).labels?.["app.kubernetes.io/name"] === "oooi-verify-probe" && !seen.has(meta(p).name),
    );
    return pod !== undefined;
  }, 60_000);
  if (pod === undefined) throw new Error("no probe pod");
  seen.add(meta(pod).name);
  const address = podVlanAddress(pod);
  if (mode === "ignore") return { pod, address };
  const name = meta(pod).name;
  const container = (pod["spec"] as { containers: { command: string[] }[] }).containers[0];
  if (mode === "run") {
    const ran = await runAsPod(container?.command ?? [], address);
    fake.setPodLog("clusters", name, ran.log);
    fake.seed({ ...pod, apiVersion: "v1", kind: "Pod", status: { phase: ran.code === 0 ? "Succeeded" : "Failed" } });
  } else {
    fake.setPodLog("clusters", name, "sh: 1: dig: not found\n");
    fake.seed({ ...pod, apiVersion: "v1", kind: "Pod", status: { phase: "Failed", reason: "Error" } });
  }
  return { pod, address };
}

async function verify(extra: string[] = []): Promise<{ code: number; rows: Row[]; stderr: string }> {
  const run = await oooi(["verify", "--kubeconfig", kubeconfig, "--probe-image", IMAGE, "-o", "json", ...extra]);
  const rows = run.stdout === "" ? [] : resultRows(run.stdout);
  return { code: run.code, rows, stderr: run.stderr };
}

describe("oooi verify --kubeconfig", () => {
  it("exits 2 with one clear line when the API server is unreachable", async () => {
    const down = await FakeApiServer.start();
    const dir = mkdtempSync(join(tmp, "down-"));
    const path = await writeKubeconfig(down.url, dir);
    await down.stop();
    const run = await oooi(["verify", "--kubeconfig", path]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    expect(run.stderr).toMatch(/^oooi verify: cannot reach the API server: .*ECONNREFUSED/);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it("refuses --kubeconfig together with --manifests", async () => {
    const run = await oooi(["verify", "--kubeconfig", kubeconfig, "--manifests", join(ROOT, "examples", "standalone")]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("either --manifests");
  });

  it("passes on the example: every VLAN name from the probe pod, the children's ACKs, the reservations", async () => {
    const [result, { pod, address }] = await Promise.all([verify(), kubelet("run")]);
    expect(result.stderr).toBe("");
    expect(result.rows.filter((r) => r.verdict === "FAIL")).toEqual([]);
    expect(result.code).toBe(0);
    // The pod as created: the image, restartPolicy, restricted-v2 security context, dig per name.
    const spec = pod["spec"] as {
      restartPolicy: string;
      containers: { image: string; command: string[]; securityContext: Record<string, unknown> }[];
    };
    expect(spec.restartPolicy).toBe("Never");
    expect(spec.containers[0]?.image).toBe(IMAGE);
    expect(spec.containers[0]?.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      capabilities: { drop: ["ALL"] },
      runAsNonRoot: true,
      seccompProfile: { type: "RuntimeDefault" },
    });
    expect(spec.containers[0]?.command.join(" ")).toContain("dig @127.0.8.3 ");
    expect(address).toBe("127.0.8.254");
    const vlan = result.rows.filter((r) => r.check.startsWith("dns vlan "));
    expect(vlan.length).toBeGreaterThanOrEqual(7);
    expect(vlan.every((r) => r.verdict === "PASS")).toBe(true);
    expect(result.rows.find((r) => r.check.startsWith("dns vlan api.alpha."))?.detail).toBe("127.0.8.4");
    expect(result.rows.filter((r) => r.check.startsWith("dns default ")).every((r) => r.verdict === "SKIP")).toBe(true);
    expect(result.rows.filter((r) => r.check.startsWith("dhcp ")).map((r) => r.verdict)).toEqual([
      "PASS",
      "PASS",
      "PASS",
    ]);
    expect(result.rows.filter((r) => r.check.startsWith("ack ")).map((r) => [r.check, r.verdict])).toEqual([
      ["ack ProxyServer clusters/tenant-vlan-proxy", "PASS"],
      ["ack DHCPServer clusters/tenant-vlan-dhcp", "PASS"],
    ]);
    await eventually(() => pods().length === 0);
  });

  it("fails naming the check and the fix when the VLAN answer differs from the model", async () => {
    const infraKind = fake.store.kindByGvk("hostedcluster.densityops.com/v1alpha1", "Infra");
    if (infraKind === undefined) throw new Error("Infra not served");
    const infra = fake.store.get(infraKind, "clusters", "tenant-vlan");
    const edited = JSON.parse(JSON.stringify(infra).replace('"127.0.8.4"', '"127.0.8.44"')) as KubeObject;
    fake.seed(edited);
    try {
      const [result] = await Promise.all([verify(), kubelet("run")]);
      expect(result.code).toBe(1);
      const row = result.rows.find((r) => r.check === "dns vlan api.alpha.clusters.example.com (from 127.0.8.254)");
      expect(row).toMatchObject({
        verdict: "FAIL",
        detail: "answered 127.0.8.4, the model says 127.0.8.44",
        failure: "dns-wrong-answer",
      });
      expect(row?.fix).toContain("oooi render");
    } finally {
      fake.seed(infra);
    }
    await eventually(() => pods().length === 0);
  });

  it("fails with the cause when the probe pod fails, and deletes it", async () => {
    const [result] = await Promise.all([verify(), kubelet("fail")]);
    expect(result.code).toBe(1);
    const vlan = result.rows.filter((r) => r.check.startsWith("dns vlan "));
    expect(vlan.length).toBeGreaterThan(0);
    for (const r of vlan) {
      expect(r.verdict).toBe("FAIL");
      expect(r.failure).toBe("dns-unreachable");
      expect(r.detail).toMatch(
        /^probe pod clusters\/tenant-vlan-verify-[a-z0-9]+ failed \(Error\): sh: 1: dig: not found$/,
      );
    }
    await eventually(() => pods().length === 0);
  });

  it("fails when the probe pod does not finish in --timeout, and deletes it", async () => {
    const [result, { pod }] = await Promise.all([verify(["--timeout", "1500"]), kubelet("ignore")]);
    expect(result.code).toBe(1);
    const row = result.rows.find((r) => r.check.startsWith("dns vlan api.alpha."));
    expect(row?.verdict).toBe("FAIL");
    expect(row?.detail).toBe(`probe pod clusters/${meta(pod).name} did not finish within 1500 ms (phase Pending)`);
    await eventually(() => pods().length === 0);
    // The static-IPAM NAD copy went with it.
    expect(
      storedList(fake, "k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition", "clusters").map((n) => meta(n).name),
    ).not.toContain(meta(pod).name);
  });

  it("deletes the probe pod on Ctrl-C (SIGINT) and exits 130", async () => {
    const child = spawn(process.execPath, [CLI, "verify", "--kubeconfig", kubeconfig, "-o", "json"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    child.stdout.on("data", (b: Buffer) => (stdout += b.toString()));
    const exited = new Promise<number | null>((resolve) =>
      child.on("close", (code) => {
        resolve(code);
      }),
    );
    await kubelet("ignore");
    child.kill("SIGINT");
    expect(await exited).toBe(130);
    expect(pods()).toEqual([]);
    const rows = resultRows(stdout);
    expect(rows.find((r) => r.check.startsWith("dns vlan api.alpha."))?.detail).toMatch(/^interrupted; probe pod /);
  });
});
