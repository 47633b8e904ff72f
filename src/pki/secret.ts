// Certificates as Kubernetes Secrets of type kubernetes.io/tls (keys tls.crt and tls.key, plus ca.crt
// as cert-manager writes it), and back. Pure; a Secret that does not hold a usable certificate reads
// as undefined, so the caller issues a new one rather than failing.
import { X509Certificate } from "node:crypto";
import type { IssuedCertificate } from "./issue.js";

/** Data of a kubernetes.io/tls Secret, base64 as the API carries it. */
export type TlsSecretData = Readonly<Record<"tls.crt" | "tls.key" | "ca.crt", string>>;

const b64 = (text: string): string => Buffer.from(text, "utf8").toString("base64");

/** The data of a Secret holding `issued` and the CA bundle its peers verify with. */
export function tlsSecretData(issued: IssuedCertificate, caPem: string): TlsSecretData {
  return { "tls.crt": b64(issued.certPem), "tls.key": b64(issued.keyPem), "ca.crt": b64(caPem) };
}

/** The certificate held in a Secret's data, or undefined when it is absent or does not parse. */
export function readTlsSecret(data: Readonly<Record<string, string>> | undefined): IssuedCertificate | undefined {
  const certB64 = data?.["tls.crt"];
  const keyB64 = data?.["tls.key"];
  if (certB64 === undefined || keyB64 === undefined) return undefined;
  const certPem = Buffer.from(certB64, "base64").toString("utf8");
  const keyPem = Buffer.from(keyB64, "base64").toString("utf8");
  try {
    const cert = new X509Certificate(certPem);
    return { certPem, keyPem, notBefore: Date.parse(cert.validFrom), notAfter: Date.parse(cert.validTo) };
  } catch {
    return undefined;
  }
}
