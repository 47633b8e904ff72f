// The generated pods against OpenShift's `restricted-v2` SCC, its rules written from OpenShift's
// documentation of the default SCCs ("Managing security context constraints", docs.openshift.com
// …/authentication/managing-security-context-constraints.html), not from src/:
// - no host network, PID, IPC or ports; not privileged; volumes only configMap, csi, downwardAPI,
//   emptyDir, ephemeral, persistentVolumeClaim, projected, secret;
// - runAsUser MustRunAsRange: the uid comes from the namespace's range, so a pod must not pin one
//   (runAsNonRoot must hold); seLinuxContext and fsGroup MustRunAs (nothing pinned either);
// - requiredDropCapabilities ALL, allowedCapabilities NET_BIND_SERVICE only;
// - allowPrivilegeEscalation false; seccompProfiles runtime/default (RuntimeDefault).
// Kea needs uid 0 and NET_RAW (raw sockets for DHCP on the VLAN) and is checked against the
// dedicated SCC the issue describes instead: uid 0, NET_RAW and NET_BIND_SERVICE, nothing more.
import { describe, expect, it } from "vitest";
import type { Infra } from "../../../src/api/schema.js";
import { allObjects, desiredState, operatorSettings, type DesiredObject } from "../../../src/operator/desired/index.js";
import { renderAll } from "../../../src/pipeline/outputs.js";
import { attachment, combine, hostedCluster, infra, NS } from "../../support/fixtures.js";

type Json = Record<string, unknown>;

const VOLUMES = new Set([
  "configMap",
  "csi",
  "downwardAPI",
  "emptyDir",
  "ephemeral",
  "persistentVolumeClaim",
  "projected",
  "secret",
]);

/** An SCC's rules as the documentation states them. */
interface Scc {
  readonly name: string;
  /** undefined: MustRunAsRange (no pinned uid, non-root); a number: that uid exactly. */
  readonly uid: number | undefined;
  readonly allowedCapabilities: readonly string[];
}

const RESTRICTED_V2: Scc = { name: "restricted-v2", uid: undefined, allowedCapabilities: ["NET_BIND_SERVICE"] };
const KEA_SCC: Scc = { name: "oooi-kea", uid: 0, allowedCapabilities: ["NET_BIND_SERVICE", "NET_RAW"] };

/** Every violation of `scc` by a pod template, as "container: rule" lines (empty = admitted). */
function violations(template: Json, scc: Scc): string[] {
  const spec = (template["spec"] ?? {}) as Json;
  const out: string[] = [];
  for (const host of ["hostNetwork", "hostPID", "hostIPC"])
    if (spec[host] === true) out.push(`pod: ${host} is not allowed`);
  for (const v of (spec["volumes"] ?? []) as Json[]) {
    const type = Object.keys(v).find((k) => k !== "name");
    if (type === undefined || !VOLUMES.has(type)) out.push(`pod: volume ${String(v["name"])} of type ${String(type)}`);
  }
  const pod = (spec["securityContext"] ?? {}) as Json;
  if (pod["seLinuxOptions"] !== undefined) out.push("pod: seLinuxOptions must come from the namespace");
  if (pod["fsGroup"] !== undefined) out.push("pod: fsGroup must come from the namespace");
  const containers = [...((spec["initContainers"] ?? []) as Json[]), ...((spec["containers"] ?? []) as Json[])];
  for (const c of containers) {
    const name = String(c["name"]);
    const sc = (c["securityContext"] ?? {}) as Json;
    const caps = (sc["capabilities"] ?? {}) as { add?: string[]; drop?: string[] };
    const seccomp = ((sc["seccompProfile"] ?? pod["seccompProfile"]) as Json | undefined)?.["type"];
    const uid = sc["runAsUser"] ?? pod["runAsUser"];
    const nonRoot = sc["runAsNonRoot"] ?? pod["runAsNonRoot"];
    if (sc["privileged"] === true) out.push(`${name}: privileged`);
    if (sc["allowPrivilegeEscalation"] !== false) out.push(`${name}: allowPrivilegeEscalation must be false`);
    if (!(caps.drop ?? []).includes("ALL")) out.push(`${name}: must drop ALL capabilities`);
    for (const cap of caps.add ?? [])
      if (!scc.allowedCapabilities.includes(cap)) out.push(`${name}: capability ${cap} is not allowed`);
    if (seccomp !== "RuntimeDefault") out.push(`${name}: seccomp profile must be RuntimeDefault`);
    if (sc["seLinuxOptions"] !== undefined) out.push(`${name}: seLinuxOptions must come from the namespace`);
    for (const p of (c["ports"] ?? []) as Json[])
      if (p["hostPort"] !== undefined) out.push(`${name}: hostPort ${JSON.stringify(p["hostPort"])}`);
    if (scc.uid === undefined) {
      if (uid !== undefined) out.push(`${name}: runAsUser ${JSON.stringify(uid)} is pinned (MustRunAsRange)`);
      if (nonRoot !== true) out.push(`${name}: runAsNonRoot must be true`);
    } else if (uid !== scc.uid) out.push(`${name}: runAsUser must be ${String(scc.uid)}`);
  }
  return out;
}

const withUid = (i: Infra): Infra => ({ ...i, metadata: { ...i.metadata, uid: `uid-${i.metadata.name}` } });

const state = combine(
  {
    infras: [withUid(infra())],
    attachments: [attachment("alpha")],
  },
  hostedCluster("alpha", 1, ["192.0.2.50"]),
);

function pods(pinUserIds: boolean): Map<string, Json> {
  const d = desiredState({
    state,
    outputs: renderAll(state),
    settings: operatorSettings({ namespace: "oooi-system", pinUserIds }),
    networkAttachments: new Map([
      [`${NS}/vlan100`, JSON.stringify({ cniVersion: "0.3.1", name: "vlan100", type: "bridge" })],
    ]),
  });
  const deployments = allObjects(d).filter((o: DesiredObject) => o.kind === "Deployment");
  return new Map(deployments.map((o) => [o.metadata.name, ((o["spec"] as Json)["template"] ?? {}) as Json]));
}

describe("generated pods on OpenShift (uids not pinned)", () => {
  const generated = pods(false);
  it("generates the three workloads", () => {
    expect([...generated.keys()].sort()).toEqual(["vlan100-dhcp", "vlan100-dns", "vlan100-proxy"]);
  });
  it.each([
    { pod: "vlan100-proxy", scc: RESTRICTED_V2 },
    { pod: "vlan100-dns", scc: RESTRICTED_V2 },
    { pod: "vlan100-dhcp", scc: KEA_SCC },
  ])("$pod passes $scc.name", ({ pod, scc }) => {
    const template = generated.get(pod) ?? {};
    expect(((template["spec"] as Json | undefined)?.["containers"] as Json[] | undefined)?.length).toBeGreaterThan(0);
    expect(violations(template, scc)).toEqual([]);
  });
});

describe("the rules can fail", () => {
  it("pinned uids (plain Kubernetes) fail restricted-v2, and Kea fails it always", () => {
    const pinned = pods(true);
    expect(violations(pinned.get("vlan100-proxy") ?? {}, RESTRICTED_V2).some((v) => v.includes("is pinned"))).toBe(
      true,
    );
    expect(violations(pods(false).get("vlan100-dhcp") ?? {}, RESTRICTED_V2)).not.toEqual([]);
  });
  it.each([
    { name: "host network", template: { spec: { hostNetwork: true, containers: [] } }, rule: "hostNetwork" },
    {
      name: "a hostPath volume",
      template: { spec: { volumes: [{ name: "h", hostPath: {} }], containers: [] } },
      rule: "hostPath",
    },
    {
      name: "an added NET_ADMIN",
      template: {
        spec: {
          securityContext: { seccompProfile: { type: "RuntimeDefault" } },
          containers: [
            {
              name: "c",
              securityContext: {
                allowPrivilegeEscalation: false,
                runAsNonRoot: true,
                capabilities: { drop: ["ALL"], add: ["NET_ADMIN"] },
              },
            },
          ],
        },
      },
      rule: "NET_ADMIN",
    },
    { name: "no security context at all", template: { spec: { containers: [{ name: "c" }] } }, rule: "drop ALL" },
  ])("$name is refused", ({ template, rule }) => {
    expect(violations(template, RESTRICTED_V2).join("\n")).toContain(rule);
  });
});
