// The operator's PKI kept in Kubernetes Secrets (docs/reference.md "Identity on the xDS port"):
// the CA in the operator's own namespace — created once, then shared by every replica and restart —
// and one client certificate per data-plane child in a Secret of the child's namespace, which its
// pod mounts. Secrets in, Secrets out; the clock is a parameter so rotation is tested without waiting.
import { statusCode, type KubeObject, type KubeRest } from "../kube/rest.js";
import { issueCa, issueLeaf, loadCa, type IssuedCertificate, type LoadedCa } from "./issue.js";
import { needsRotation } from "./rotation.js";
import { readTlsSecret, tlsSecretData } from "./secret.js";
import { nodeGroupUri } from "./spiffe.js";
import { clientSecretName } from "./mount.js";
import { X509Certificate } from "node:crypto";

/** The CA's Secret in the operator's namespace. */
export const CA_SECRET = "oooi-xds-ca";
/**
 * The CA's certificate alone, published in a ConfigMap of the operator's namespace (as kube-root-ca.crt
 * is) for clients that verify the xDS port without reading the Secret: `oooi debug --kubeconfig`.
 */
export const CA_CONFIGMAP = "oooi-xds-ca";

/** Writes (server-side apply) the CA_CONFIGMAP with `ca.crt`. */
export async function publishCaCertificate(
  rest: Pick<KubeRest, "request">,
  namespace: string,
  ca: Pick<OperatorCa, "certPem">,
  fieldManager: string,
): Promise<void> {
  await rest.request({
    method: "PATCH",
    path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps/${CA_CONFIGMAP}`,
    query: { fieldManager, force: "true" },
    contentType: "application/apply-patch+yaml",
    body: {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: CA_CONFIGMAP, namespace, labels: { "app.kubernetes.io/name": "oooi" } },
      data: { "ca.crt": ca.certPem },
    },
  });
}

/** A CA outlives many leaves; it is not rotated (a new CA would need a trust-bundle overlap). */
export const CA_LIFETIME_MS = 10 * 365 * 24 * 60 * 60 * 1000;
/** Leaves (serving and client): replaced at two thirds, so every 20 days. */
export const LEAF_LIFETIME_MS = 30 * 24 * 60 * 60 * 1000;

/** The CA as this replica holds it: PEM for trust bundles, loaded for signing. */
export interface OperatorCa {
  readonly certPem: string;
  readonly loaded: LoadedCa;
}

/** A Secret the operator will not use (someone else's, or garbled): never overwritten, the operator says so. */
export class UnusableSecretError extends Error {
  constructor(namespace: string, name: string, why: string) {
    super(`Secret ${namespace}/${name} ${why}; delete it to let oooi create a new one`);
    this.name = "UnusableSecretError";
  }
}

const secretPath = (namespace: string, name?: string): string =>
  `/api/v1/namespaces/${namespace}/secrets${name === undefined ? "" : `/${name}`}`;

async function readSecret(rest: KubeRest, namespace: string, name: string): Promise<KubeObject | undefined> {
  try {
    return await rest.request({ method: "GET", path: secretPath(namespace, name) });
  } catch (e) {
    if (statusCode(e) === 404) return undefined;
    throw e;
  }
}

function dataOf(secret: KubeObject): Record<string, string> | undefined {
  const data = secret["data"];
  return typeof data === "object" && data !== null ? (data as Record<string, string>) : undefined;
}

async function caFromSecret(secret: KubeObject, namespace: string): Promise<OperatorCa> {
  const held = readTlsSecret(dataOf(secret));
  if (held === undefined) throw new UnusableSecretError(namespace, CA_SECRET, "holds no certificate and key");
  try {
    return { certPem: held.certPem, loaded: await loadCa(held.certPem, held.keyPem) };
  } catch (e) {
    throw new UnusableSecretError(namespace, CA_SECRET, `does not hold a usable CA (${(e as Error).message})`);
  }
}

/** Labels of every Secret the PKI writes (so a person can tell them apart from their own). */
const LABELS = { "app.kubernetes.io/managed-by": "oooi", "app.kubernetes.io/component": "xds-tls" } as const;

/**
 * The CA, from its Secret or — the first time — created. Two replicas starting together both try to
 * create it; the API server admits one, and the other's conflict makes it read and use that one:
 * the first created wins, and every replica and restart signs with the same CA.
 */
export async function ensureCa(rest: KubeRest, namespace: string, now: number): Promise<OperatorCa> {
  const existing = await readSecret(rest, namespace, CA_SECRET);
  if (existing !== undefined) return caFromSecret(existing, namespace);
  const ca = await issueCa("oooi xDS CA", { now, lifetimeMs: CA_LIFETIME_MS });
  try {
    await rest.request({
      method: "POST",
      path: secretPath(namespace),
      body: {
        apiVersion: "v1",
        kind: "Secret",
        type: "kubernetes.io/tls",
        metadata: { name: CA_SECRET, namespace, labels: LABELS },
        data: tlsSecretData(ca, ca.certPem),
      },
    });
  } catch (e) {
    if (statusCode(e) !== 409) throw e;
    const winner = await readSecret(rest, namespace, CA_SECRET);
    if (winner === undefined)
      throw new Error(`Secret ${namespace}/${CA_SECRET} was created and is gone again`, { cause: e });
    return caFromSecret(winner, namespace);
  }
  return { certPem: ca.certPem, loaded: await loadCa(ca.certPem, ca.keyPem) };
}

/** The serving certificate of the xDS Service `<service>.<namespace>`: every name a pod may dial it by. */
export function servingNames(service: string, namespace: string): string[] {
  const svc = `${service}.${namespace}.svc`;
  return [service, `${service}.${namespace}`, svc, `${svc}.cluster.local`];
}

/** Issues the serving certificate for `dnsNames`, valid from `now`. */
export async function issueServing(
  ca: OperatorCa,
  dnsNames: readonly string[],
  now: number,
): Promise<IssuedCertificate> {
  return issueLeaf(
    ca.loaded,
    { kind: "server", commonName: dnsNames[0] ?? "oooi-xds", dnsNames },
    { now, lifetimeMs: LEAF_LIFETIME_MS },
  );
}

/** A data-plane child whose pod gets a client certificate. */
export interface ClientChild {
  readonly namespace: string;
  /** The child object's name (`<infra>-proxy`, `<infra>-dhcp`): the node group is `<namespace>/<name>`. */
  readonly name: string;
  /** Owner of the Secret (the Infra), so it goes with its children. */
  readonly owner?: object;
}

/** Why a held client certificate is kept: issued by this CA for this identity and not due yet. */
function isCurrent(data: Record<string, string> | undefined, ca: OperatorCa, uri: string, now: number): boolean {
  const held = readTlsSecret(data);
  if (held === undefined || needsRotation(held, now)) return false;
  const bundle = data?.["ca.crt"] === undefined ? "" : Buffer.from(data["ca.crt"], "base64").toString("utf8");
  if (bundle !== ca.certPem) return false;
  const cert = new X509Certificate(held.certPem);
  return cert.subjectAltName === `URI:${uri}` && cert.checkIssued(new X509Certificate(ca.certPem));
}

/**
 * Makes the child's Secret hold a current client certificate for `spiffe://oooi/ns/<ns>/<name>`:
 * issued when absent, re-issued at two thirds of its lifetime (or when another CA signed it). The
 * Secret's content changes in place; the pod keeps running and reads the new files (a Secret
 * volume is updated by the kubelet). Returns whether it wrote. A Secret of that name that oooi did
 * not create is left alone (UnusableSecretError).
 */
export async function ensureClientSecret(
  rest: KubeRest,
  ca: OperatorCa,
  child: ClientChild,
  now: number,
): Promise<boolean> {
  const name = clientSecretName(child.name);
  const uri = nodeGroupUri(child.namespace, child.name);
  const existing = await readSecret(rest, child.namespace, name);
  if (existing !== undefined) {
    if (existing.metadata?.labels?.["app.kubernetes.io/managed-by"] !== "oooi")
      throw new UnusableSecretError(child.namespace, name, "was not created by oooi");
    if (isCurrent(dataOf(existing), ca, uri, now)) return false;
  }
  const leaf = await issueLeaf(ca.loaded, { kind: "client", uri }, { now, lifetimeMs: LEAF_LIFETIME_MS });
  const body = {
    apiVersion: "v1",
    kind: "Secret",
    type: "kubernetes.io/tls",
    metadata: {
      name,
      namespace: child.namespace,
      labels: LABELS,
      ...(child.owner === undefined ? {} : { ownerReferences: [child.owner] }),
      // A replace carries the version read: a concurrent writer makes it fail, the next pass retries.
      ...(existing?.metadata?.resourceVersion === undefined
        ? {}
        : { resourceVersion: existing.metadata.resourceVersion }),
    },
    data: tlsSecretData(leaf, ca.certPem),
  };
  await rest.request(
    existing === undefined
      ? { method: "POST", path: secretPath(child.namespace), body }
      : { method: "PUT", path: secretPath(child.namespace, name), body },
  );
  return true;
}
