// Every example rendered through the real pipeline, and what the user's Verification list
// (seeds: split-horizon DNS page) says each view must answer — derived from the manifests, not
// from the model: proxy.serverIP and the apps VIP from the VLAN, the internalProxyService
// ClusterIP (or nothing of ours at all) from the pod network, everything else forwarded.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { loadManifestDir } from "../../../src/watchers/manifests.js";
import type { ClusterState } from "../../../src/model/types.js";
import { renderState, type RenderedDnsServer, type RenderedExample } from "./render-state.js";

export const EXAMPLES_DIR = join(import.meta.dirname, "..", "..", "..", "examples");

export const EXAMPLES = readdirSync(EXAMPLES_DIR, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort();

/** Loads `example`'s manifests. */
export async function loadExample(example: string): Promise<ClusterState> {
  const load = await loadManifestDir(join(EXAMPLES_DIR, example));
  if (!load.ok) throw new Error(`example ${example} unreadable: ${JSON.stringify(load.error)}`);
  return load.state;
}

/** Loads and renders `example` as `oooi render` does; one entry per DNSServer it writes. */
export async function renderExample(example: string): Promise<RenderedExample> {
  return renderState(await loadExample(example));
}

/** What a name must get from one view: these A addresses authoritatively, or the upstream's answer. */
export type Expected = { readonly kind: "ours"; readonly address: string } | { readonly kind: "forwarded" };

export interface Expectation {
  readonly name: string;
  readonly vlan: Expected;
  readonly pods: Expected;
}

/** The Verification list for every served hosted cluster of one DNSServer, plus names oooi must not own. */
export function verificationList(state: ClusterState, server: RenderedDnsServer): Expectation[] {
  const infra = state.infras.find(
    (i) => i.metadata.namespace === server.topology.infra.namespace && i.metadata.name === server.topology.infra.name,
  );
  const proxy = infra?.spec.infraComponents?.proxy?.serverIP;
  if (proxy === undefined) throw new Error(`${server.name}: the example has no proxy.serverIP`);
  const internal = internalProxyIP(state, infra?.spec.infraComponents?.proxy?.internalProxyService);
  const ours = (vlan: string | undefined, pods: string | undefined): Pick<Expectation, "vlan" | "pods"> => ({
    vlan: vlan === undefined ? { kind: "forwarded" } : { kind: "ours", address: vlan },
    pods: pods === undefined ? { kind: "forwarded" } : { kind: "ours", address: pods },
  });
  const served = server.topology.attachments.filter((a) => a.served);
  const workersKnown = served.some((a) => a.workerAddresses.length > 0);
  const list: Expectation[] = [
    { name: "kubernetes.default.svc", ...ours(workersKnown ? proxy : undefined, workersKnown ? internal : undefined) },
    { name: "kubernetes", ...ours(workersKnown ? proxy : undefined, workersKnown ? internal : undefined) },
    { name: "www.example.net", ...ours(undefined, undefined) },
  ];
  for (const a of served) {
    const manifest = state.attachments.find(
      (m) => m.metadata.namespace === a.ref.namespace && m.metadata.name === a.ref.name,
    );
    const status = manifest?.status?.appsIngressStatus;
    const vip =
      manifest?.spec.appsIngress?.enabled === true && status?.phase === "Ready" ? status.externalIP : undefined;
    for (const host of ["api", "api-int", "oauth", "ignition", "konnectivity"]) {
      list.push({ name: `${host}.${a.domain}`, ...ours(proxy, internal) });
    }
    list.push(
      { name: `console-openshift-console.apps.${a.domain}`, ...ours(vip, vip === undefined ? undefined : internal) },
      // Issue 18: oooi does not own the domain; a record published elsewhere keeps resolving.
      { name: `foo.${a.domain}`, ...ours(undefined, undefined) },
      { name: a.domain, ...ours(undefined, undefined) },
    );
  }
  return list;
}

/** internalProxyService as the model must resolve it: a literal IP, or the named Service's ClusterIP. */
function internalProxyIP(state: ClusterState, ref: string | undefined): string | undefined {
  if (ref === undefined) return undefined;
  if (/^\d+\.\d+\.\d+\.\d+$/.test(ref)) return ref;
  const [name, namespace] = ref.split(".");
  const ip = [...state.services].find((s) => s.metadata.name === name && s.metadata.namespace === namespace)?.spec
    ?.clusterIP;
  return ip === undefined || ip === "None" ? undefined : ip;
}
