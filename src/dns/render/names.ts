// DNS name hygiene for the CoreDNS renderer: one spelling per name (lower case, no trailing dot),
// owner names relative to their zone, and ConfigMap keys for zone files. Pure.
import { createHash } from "node:crypto";

// Host-name style labels (underscore tolerated); anything else could break Corefile or zone syntax.
const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;
const MAX_NAME = 253;
/** Kubernetes caps ConfigMap keys at 253 characters of [-._a-zA-Z0-9]. */
const MAX_KEY = 253;

/** A domain name in our one spelling (lower case, no trailing dot); undefined when unusable. */
export function normalizeDomain(name: string): string | undefined {
  let n = name.trim().toLowerCase();
  if (n.endsWith(".")) n = n.slice(0, -1);
  if (n === "" || n.length > MAX_NAME) return undefined;
  return n.split(".").every((l) => LABEL.test(l)) ? n : undefined;
}

/**
 * The owner name of `name` written relative to `origin` ("@" for the apex, "*.apps" for a
 * wildcard); undefined when the name lies outside the zone or is not a valid owner name.
 * A wildcard label is only meaningful leftmost (RFC 4592).
 */
export function relativeOwner(name: string, origin: string): string | undefined {
  let n = name.trim().toLowerCase();
  if (n.endsWith(".")) n = n.slice(0, -1);
  if (n === origin) return "@";
  if (!n.endsWith(`.${origin}`) || n.length > MAX_NAME) return undefined;
  const relative = n.slice(0, -(origin.length + 1));
  const labels = relative.split(".");
  const valid = labels.every((l, i) => LABEL.test(l) || (i === 0 && l === "*"));
  return valid ? relative : undefined;
}

/** ConfigMap key of one view's zone file, e.g. "db.vlan.example.com"; always a valid key. */
export function zoneFileKey(view: string, origin: string): string {
  const key = `db.${view}.${origin}`;
  if (key.length <= MAX_KEY) return key;
  // Only reachable with near-maximal names: keep the key unique and legal by hashing.
  const digest = createHash("sha256").update(origin).digest("hex").slice(0, 16);
  return `db.${view}.${origin.slice(0, MAX_KEY - view.length - 22)}.${digest}`;
}
