// Certificates of the operator's private CA: the CA itself, the xDS serving certificate (DNS names
// of the xDS Service) and client certificates (a SPIFFE URI SAN each). PEM in, PEM out; the time of
// issue is a parameter so rotation can be tested without waiting. ECDSA P-256 with SHA-256, as
// Kubernetes' own certificates use.
import { randomBytes, webcrypto } from "node:crypto";
import { x509 } from "./x509.js";

const ALGORITHM = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;

/** A certificate and its private key, both PEM (the key PKCS #8), with the validity they carry. */
export interface IssuedCertificate {
  readonly certPem: string;
  readonly keyPem: string;
  /** Milliseconds since the epoch. */
  readonly notBefore: number;
  readonly notAfter: number;
}

/** What a leaf certificate is for. */
export type LeafRequest =
  | { readonly kind: "server"; readonly commonName: string; readonly dnsNames: readonly string[] }
  | { readonly kind: "client"; readonly uri: string };

/** Validity of a certificate issued at `now`. */
export interface Validity {
  readonly now: number;
  readonly lifetimeMs: number;
}

// Clocks of peers drift: a certificate is valid from a minute before it was issued.
const BACKDATE_MS = 60_000;

function serial(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] ?? 0) & 0x7f; // positive (RFC 5280 §4.1.2.2)
  return bytes.toString("hex");
}

function pemKey(der: ArrayBuffer): string {
  return x509.PemConverter.encode(der, "PRIVATE KEY");
}

function dates(validity: Validity): { notBefore: Date; notAfter: Date } {
  // X.509 stores whole seconds: round so the dates read back are the dates reported.
  const second = (ms: number): Date => new Date(Math.floor(ms / 1000) * 1000);
  return { notBefore: second(validity.now - BACKDATE_MS), notAfter: second(validity.now + validity.lifetimeMs) };
}

async function newKeys(): Promise<webcrypto.CryptoKeyPair> {
  return webcrypto.subtle.generateKey(ALGORITHM, true, ["sign", "verify"]);
}

async function issued(cert: x509.X509Certificate, keys: webcrypto.CryptoKeyPair): Promise<IssuedCertificate> {
  return {
    certPem: cert.toString("pem") + "\n",
    keyPem: pemKey(await webcrypto.subtle.exportKey("pkcs8", keys.privateKey)) + "\n",
    notBefore: cert.notBefore.getTime(),
    notAfter: cert.notAfter.getTime(),
  };
}

/** A new key pair and a certificate it signs itself, with the extensions `extensions` makes for it. */
async function selfSigned(
  commonName: string,
  validity: Validity,
  extensions: (keys: webcrypto.CryptoKeyPair) => Promise<x509.Extension[]> | x509.Extension[],
): Promise<IssuedCertificate> {
  const keys = await newKeys();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: [{ CN: [commonName] }],
    ...dates(validity),
    signingAlgorithm: ALGORITHM,
    keys,
    extensions: await extensions(keys),
  });
  return issued(cert, keys);
}

/** A new self-signed CA that may sign leaf certificates only (path length 0). */
export function issueCa(commonName: string, validity: Validity): Promise<IssuedCertificate> {
  return selfSigned(commonName, validity, async (keys) => [
    new x509.BasicConstraintsExtension(true, 0, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
    await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
  ]);
}

/**
 * A self-signed server certificate for `dnsNames` (no CA behind it): what a port serves when it is
 * given no certificate, so its traffic is encrypted though its clients cannot verify whom they reach.
 */
export function issueSelfSignedServer(
  commonName: string,
  dnsNames: readonly string[],
  validity: Validity,
): Promise<IssuedCertificate> {
  return selfSigned(commonName, validity, () => [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
    new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
    new x509.SubjectAlternativeNameExtension(dnsNames.map((value) => ({ type: "dns" as const, value }))),
  ]);
}

/** The CA's certificate and signing key, read back from PEM (as kept in its Secret). */
export interface LoadedCa {
  readonly cert: x509.X509Certificate;
  readonly key: webcrypto.CryptoKey;
}

/** Parses the CA's PEM; throws a readable error when either part is not what it should be. */
export async function loadCa(certPem: string, keyPem: string): Promise<LoadedCa> {
  const cert = new x509.X509Certificate(certPem);
  const basic = cert.getExtension(x509.BasicConstraintsExtension);
  if (basic?.ca !== true) throw new Error(`the certificate ${cert.subject} is not a CA`);
  const der = x509.PemConverter.decodeFirst(keyPem);
  const key = await webcrypto.subtle.importKey("pkcs8", der, ALGORITHM, false, ["sign"]);
  return { cert, key };
}

/** A leaf certificate signed by `ca`: a server certificate for DNS names, or a client certificate for a URI. */
export async function issueLeaf(ca: LoadedCa, request: LeafRequest, validity: Validity): Promise<IssuedCertificate> {
  const keys = await newKeys();
  const usage = request.kind === "server" ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth;
  const names =
    request.kind === "server"
      ? request.dnsNames.map((value) => ({ type: "dns" as const, value }))
      : [{ type: "url" as const, value: request.uri }];
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: [{ CN: [request.kind === "server" ? request.commonName : request.uri] }],
    issuer: ca.cert.subjectName,
    ...dates(validity),
    signingAlgorithm: ALGORITHM,
    publicKey: keys.publicKey,
    signingKey: ca.key,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([usage]),
      new x509.SubjectAlternativeNameExtension(names, request.kind === "client"),
      await x509.AuthorityKeyIdentifierExtension.create(ca.cert.publicKey),
    ],
  });
  return issued(cert, keys);
}
