// Structural checks a Kubernetes API server (and kubelet) would make on the objects we apply,
// done without one: names, labels, selectors, volume references, ConfigMap keys, env references.
import type { DesiredObject } from "../../../src/operator/desired/objects.js";
import {
  isConfigMapKey,
  isDns1035Label,
  isDns1123Label,
  isDns1123Subdomain,
  isLabelKey,
  isLabelValue,
  objectKey,
} from "../../../src/operator/desired/objects.js";

type Json = Record<string, unknown>;
const rec = (v: unknown): Json => (v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Json) : {});
const arr = (v: unknown): Json[] => (Array.isArray(v) ? v.map(rec) : []);
const IANA_SVC_NAME = /^(?=.*[a-z])[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;

/** Every violation found in the set (each prefixed with the object's key); empty = all valid. */
export function structuralViolations(objects: readonly DesiredObject[]): string[] {
  const out: string[] = [];
  const keys = new Set<string>();
  const byKind = (kind: string, ns: string | undefined) =>
    objects.filter((o) => o.kind === kind && o.metadata.namespace === ns);
  for (const o of objects) {
    const key = objectKey(o);
    const bad = (m: string) => out.push(`${key}: ${m}`);
    if (keys.has(key)) bad("duplicate object");
    keys.add(key);
    const m = o.metadata;
    if (o.kind === "Service" ? !isDns1035Label(m.name) : !isDns1123Subdomain(m.name)) bad(`invalid name ${m.name}`);
    if (m.namespace !== undefined && !isDns1123Label(m.namespace)) bad(`invalid namespace ${m.namespace}`);
    for (const [k, v] of Object.entries(m.labels))
      if (!isLabelKey(k) || !isLabelValue(v)) bad(`invalid label ${k}=${v}`);
    for (const k of Object.keys(m.annotations ?? {})) if (!isLabelKey(k)) bad(`invalid annotation key ${k}`);
    // Typed as always complete; the objects are checked as the API server would see them.
    for (const r of arr(m.ownerReferences)) {
      if (r["uid"] === "" || r["controller"] !== true || r["blockOwnerDeletion"] !== true)
        bad("incomplete ownerReference");
    }

    if (o.kind === "ConfigMap") {
      for (const k of Object.keys(rec(o["data"]))) if (!isConfigMapKey(k)) bad(`invalid ConfigMap key ${k}`);
    }
    if (o.kind === "NetworkAttachmentDefinition") {
      try {
        JSON.parse(String(rec(o["spec"])["config"]));
      } catch {
        bad("spec.config is not JSON");
      }
    }
    if (o.kind === "Service") {
      const spec = rec(o["spec"]);
      const selector = rec(spec["selector"]);
      const pods = byKind("Deployment", m.namespace).map((d) =>
        rec(rec(rec(rec(d["spec"])["template"])["metadata"])["labels"]),
      );
      if (!pods.some((labels) => Object.entries(selector).every(([k, v]) => labels[k] === v)))
        bad("selector matches no Deployment's pods");
      const names = arr(spec["ports"]).map((p) => String(p["name"]));
      if (new Set(names).size !== names.length) bad("duplicate port names");
      for (const n of names) if (!isDns1123Label(n)) bad(`invalid port name ${n}`);
    }
    if (o.kind === "Deployment") out.push(...deploymentViolations(o, objects).map((v) => `${key}: ${v}`));
  }
  return out;
}

function deploymentViolations(d: DesiredObject, objects: readonly DesiredObject[]): string[] {
  const out: string[] = [];
  const spec = rec(d["spec"]);
  const template = rec(spec["template"]);
  const labels = rec(rec(template["metadata"])["labels"]);
  const selector = rec(rec(spec["selector"])["matchLabels"]);
  if (Object.keys(selector).length === 0) out.push("empty selector");
  for (const [k, v] of Object.entries(selector))
    if (labels[k] !== v) out.push(`selector ${k}=${String(v)} not on the pod template`);
  for (const [k, v] of Object.entries(labels))
    if (!isLabelKey(k) || !isLabelValue(String(v))) out.push(`invalid pod label ${k}`);
  const annotations = rec(rec(template["metadata"])["annotations"]);
  const networks = annotations["k8s.v1.cni.cncf.io/networks"];
  if (typeof networks === "string") {
    try {
      if (!Array.isArray(JSON.parse(networks))) out.push("networks annotation is not a JSON list");
    } catch {
      out.push("networks annotation is not JSON");
    }
  }
  const pod = rec(template["spec"]);
  const volumes = arr(pod["volumes"]);
  const volumeNames = new Set(volumes.map((v) => String(v["name"])));
  if (volumeNames.size !== volumes.length) out.push("duplicate volume names");
  const ns = d.metadata.namespace;
  const exists = (kind: string, name: unknown) =>
    objects.some((o) => o.kind === kind && o.metadata.namespace === ns && o.metadata.name === name);
  for (const v of volumes) {
    const cm = rec(v["configMap"]);
    if (v["configMap"] !== undefined && !exists("ConfigMap", cm["name"]))
      out.push(`volume ${String(v["name"])}: ConfigMap ${String(cm["name"])} not desired`);
    const pvc = rec(v["persistentVolumeClaim"]);
    if (v["persistentVolumeClaim"] !== undefined && !exists("PersistentVolumeClaim", pvc["claimName"]))
      out.push(`volume ${String(v["name"])}: PVC not desired`);
  }
  const sa = pod["serviceAccountName"];
  if (typeof sa === "string" && !exists("ServiceAccount", sa)) out.push(`ServiceAccount ${sa} not desired`);
  const containers = [...arr(pod["initContainers"]), ...arr(pod["containers"])];
  const containerNames = containers.map((c) => String(c["name"]));
  if (new Set(containerNames).size !== containerNames.length) out.push("duplicate container names");
  for (const c of containers) {
    const name = String(c["name"]);
    if (!isDns1123Label(name)) out.push(`invalid container name ${name}`);
    if (typeof c["image"] !== "string" || c["image"] === "") out.push(`${name}: no image`);
    for (const m of arr(c["volumeMounts"])) {
      if (!volumeNames.has(String(m["name"]))) out.push(`${name}: mount of unknown volume ${String(m["name"])}`);
      const vol = volumes.find((v) => v["name"] === m["name"]);
      if (vol?.["configMap"] !== undefined && m["subPath"] !== undefined)
        out.push(`${name}: ConfigMap volume mounted with subPath (never updated)`);
    }
    const env = new Set(arr(c["env"]).map((e) => String(e["name"])));
    for (const a of [
      ...((c["command"] as unknown[] | undefined) ?? []),
      ...((c["args"] as unknown[] | undefined) ?? []),
    ]) {
      for (const ref of String(a).matchAll(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g)) {
        if (!env.has(ref[1] ?? "")) out.push(`${name}: $(${ref[1] ?? ""}) has no env var`);
      }
    }
    const ports = arr(c["ports"]).map((p) => String(p["name"]));
    for (const p of ports) if (p.length > 15 || !IANA_SVC_NAME.test(p)) out.push(`${name}: invalid port name ${p}`);
    const sc = rec(c["securityContext"]);
    if (sc["allowPrivilegeEscalation"] !== false) out.push(`${name}: privilege escalation allowed`);
    if (sc["readOnlyRootFilesystem"] !== true) out.push(`${name}: writable root filesystem`);
    const caps = rec(sc["capabilities"]);
    if (!Array.isArray(caps["drop"]) || !caps["drop"].includes("ALL")) out.push(`${name}: capabilities not dropped`);
    if (rec(rec(c["resources"])["requests"])["cpu"] === undefined) out.push(`${name}: no resource requests`);
    for (const probe of ["livenessProbe", "readinessProbe"]) {
      const port = rec(rec(c[probe])["httpGet"])["port"] ?? rec(rec(c[probe])["tcpSocket"])["port"];
      if (
        (typeof port === "number" || typeof port === "string") &&
        !arr(c["ports"]).some((p) => p["containerPort"] === port || p["name"] === port)
      ) {
        out.push(`${name}: ${probe} port ${port} not declared`);
      }
    }
  }
  if (rec(rec(pod["securityContext"])["seccompProfile"])["type"] !== "RuntimeDefault")
    out.push("no RuntimeDefault seccomp profile");
  return out;
}
