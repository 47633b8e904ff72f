// Certificates of the operator's PKI for mTLS tests of the xDS server: a CA, client certificates
// carrying a node group's or the administrator's URI SAN, a serving certificate for "localhost".
import { credentials, type ChannelCredentials } from "@grpc/grpc-js";
import { issueCa, issueLeaf, loadCa, type IssuedCertificate, type LoadedCa } from "../../../src/pki/issue.js";
import { RotatingServerCredentials } from "../../../src/xds/server/tls.js";

const DAY = 86_400_000;

/** A CA as issued and as loaded for signing. */
export interface Authority {
  readonly issued: IssuedCertificate;
  readonly loaded: LoadedCa;
}

export async function authority(name: string): Promise<Authority> {
  const issued = await issueCa(name, { now: Date.now(), lifetimeMs: DAY });
  return { issued, loaded: await loadCa(issued.certPem, issued.keyPem) };
}

/** A client certificate whose URI SAN is `uri`. */
export async function clientCert(ca: Authority, uri: string): Promise<IssuedCertificate> {
  return issueLeaf(ca.loaded, { kind: "client", uri }, { now: Date.now(), lifetimeMs: DAY });
}

/** Server credentials for "localhost" requiring client certificates of `ca`. */
export async function mtlsServer(ca: Authority): Promise<RotatingServerCredentials> {
  const leaf = await issueLeaf(
    ca.loaded,
    { kind: "server", commonName: "oooi-xds", dnsNames: ["localhost"] },
    { now: Date.now(), lifetimeMs: DAY },
  );
  return new RotatingServerCredentials({ cert: leaf.certPem, key: leaf.keyPem, ca: ca.issued.certPem });
}

/** Channel credentials trusting `trust`, presenting `leaf` when given. */
export function clientCreds(trust: Authority, leaf?: IssuedCertificate): ChannelCredentials {
  return credentials.createSsl(
    Buffer.from(trust.issued.certPem),
    leaf === undefined ? null : Buffer.from(leaf.keyPem),
    leaf === undefined ? null : Buffer.from(leaf.certPem),
  );
}
