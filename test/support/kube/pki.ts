// Certificates and keys for a throwaway loopback cluster: a CA, kube-apiserver's serving
// certificate (127.0.0.1 and localhost), and the service-account signing key pair. openssl makes
// the certificates (node:crypto cannot issue X.509); every file lands in `dir`.
import { execFileSync } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

/** Paths of the PEM files a cluster starts with. */
export interface ClusterPki {
  readonly caCert: string;
  readonly servingCert: string;
  readonly servingKey: string;
  /** kube-apiserver signs service-account tokens with this (--service-account-signing-key-file). */
  readonly saKey: string;
  /** ...and verifies them with this (--service-account-key-file). */
  readonly saPub: string;
}

function openssl(args: string[]): void {
  execFileSync("openssl", args, { stdio: ["ignore", "ignore", "pipe"] });
}

const EC_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];

/** Signs `dir`/NAME.csr with the CA in `dir` and the extensions in NAME.ext, for two days; returns NAME.crt. */
function signWithCa(dir: string, name: string): string {
  const f = (file: string): string => join(dir, file);
  const crt = f(`${name}.crt`);
  openssl([
    ...["x509", "-req", "-in", f(`${name}.csr`), "-CA", f("ca.crt"), "-CAkey", f("ca.key"), "-CAcreateserial"],
    ...["-out", crt, "-days", "2", "-extfile", f(`${name}.ext`)],
  ]);
  return crt;
}

/** Writes a fresh CA, serving certificate and service-account key pair into `dir`. */
export function writeClusterPki(dir: string): ClusterPki {
  const f = (name: string): string => join(dir, name);
  openssl([
    "req",
    "-x509",
    ...EC_KEY,
    "-keyout",
    f("ca.key"),
    "-out",
    f("ca.crt"),
    "-days",
    "2",
    "-subj",
    "/CN=oooi-test-ca",
  ]);
  openssl(["req", ...EC_KEY, "-keyout", f("serving.key"), "-out", f("serving.csr"), "-subj", "/CN=kube-apiserver"]);
  // The client verifies the name it dialled: both loopback spellings, and the in-cluster names.
  writeFileSync(
    f("serving.ext"),
    [
      "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default.svc",
      "extendedKeyUsage=serverAuth",
      "keyUsage=digitalSignature,keyEncipherment",
    ].join("\n") + "\n",
  );
  signWithCa(dir, "serving");

  const sa = generateKeyPairSync("rsa", { modulusLength: 2048 });
  writeFileSync(f("sa.key"), sa.privateKey.export({ type: "pkcs8", format: "pem" }));
  writeFileSync(f("sa.pub"), sa.publicKey.export({ type: "spki", format: "pem" }));
  return {
    caCert: f("ca.crt"),
    servingCert: f("serving.crt"),
    servingKey: f("serving.key"),
    saKey: f("sa.key"),
    saPub: f("sa.pub"),
  };
}

/** A client certificate signed by the CA in `dir`: kube-apiserver (--client-ca-file) reads CN as user, O as groups. */
export function writeClientCert(
  dir: string,
  name: string,
  user: string,
  groups: readonly string[] = [],
): { cert: string; key: string } {
  const f = (file: string): string => join(dir, file);
  const subj = `/CN=${user}${groups.map((g) => `/O=${g}`).join("")}`;
  openssl(["req", ...EC_KEY, "-keyout", f(`${name}.key`), "-out", f(`${name}.csr`), "-subj", subj]);
  writeFileSync(f(`${name}.ext`), "extendedKeyUsage=clientAuth\nkeyUsage=digitalSignature\n");
  return { cert: signWithCa(dir, name), key: f(`${name}.key`) };
}
