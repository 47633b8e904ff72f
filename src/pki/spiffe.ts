// SPIFFE-style identities on the xDS port (docs/reference.md "Identity on the xDS port"): the URI SAN
// of a client certificate names the one node group it may receive, or the administrator.
// Pure: formatting and parsing only.

/** The trust domain of every identity oooi issues. */
export const TRUST_DOMAIN = "oooi";

/** URI SAN of the administrator: CSDS, oooi.debug.v1 and reflection. */
export const ADMIN_URI = `spiffe://${TRUST_DOMAIN}/admin`;

/** Who a certificate says its holder is. */
export type Identity =
  | { readonly kind: "admin" }
  /** A data-plane child: `group` is `<namespace>/<name>`, the `node.cluster` it must declare. */
  | { readonly kind: "group"; readonly group: string };

/** URI SAN of the data-plane child `<namespace>/<name>` (a ProxyServer or a DHCPServer). */
export function nodeGroupUri(namespace: string, name: string): string {
  return `spiffe://${TRUST_DOMAIN}/ns/${namespace}/${name}`;
}

// Kubernetes names (RFC 1123 labels and subdomains): what a namespace and an object name can be.
const NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/** The identity a URI names, or undefined for any other URI (another trust domain, a malformed path). */
export function parseIdentityUri(uri: string): Identity | undefined {
  if (uri === ADMIN_URI) return { kind: "admin" };
  const prefix = `spiffe://${TRUST_DOMAIN}/ns/`;
  if (!uri.startsWith(prefix)) return undefined;
  const parts = uri.slice(prefix.length).split("/");
  if (parts.length !== 2) return undefined;
  const [namespace = "", name = ""] = parts;
  if (!NAME.test(namespace) || !NAME.test(name)) return undefined;
  return { kind: "group", group: `${namespace}/${name}` };
}
