// `oooi operator`'s default xDS security: the CA from its Secret (created by the first replica),
// this replica's serving certificate issued from it and rotated in memory, and credentials that
// identify clients by a certificate signed by the CA (or, on the debug services, by a bearer token).
import {
  CA_CONFIGMAP,
  ensureCa,
  publishCaCertificate,
  servingNames,
  UnusableSecretError,
  type OperatorCa,
} from "../pki/store.js";
import { ServingRotation } from "../pki/serving.js";
import { SYSTEM_CLOCK, type Clock } from "../util/clock.js";
import { ApiRetry } from "../operator/process/api-retry.js";
import type { KubeRest } from "../kube/rest.js";
import { RotatingServerCredentials } from "../xds/server/tls.js";
import { splitHostPort } from "../envoy/xds-address.js";
import { FIELD_MANAGER, XDS_SERVICE, type OperatorSettings } from "../operator/desired/settings.js";

export interface OperatorPki {
  readonly ca: OperatorCa;
  readonly credentials: RotatingServerCredentials;
  readonly rotation: ServingRotation;
}

interface PkiLogger {
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string): void;
}

/** The names the serving certificate carries: the xDS Service's, and the host of OOOI_XDS_ADDRESS. */
export function operatorServingNames(settings: Pick<OperatorSettings, "namespace" | "xdsAddress">): string[] {
  const names = servingNames(XDS_SERVICE, settings.namespace);
  const host = splitHostPort(settings.xdsAddress)?.host;
  return host === undefined || names.includes(host) ? names : [...names, host];
}

/**
 * Reads (or creates) the CA and issues the serving certificate. The API server may be away at
 * start: the CA is retried with backoff (`retry`); a CA Secret that cannot be used is an error to fix.
 */
export async function startOperatorPki(
  rest: KubeRest,
  settings: Pick<OperatorSettings, "namespace" | "xdsAddress">,
  log: PkiLogger,
  clock: Clock = SYSTEM_CLOCK,
  retry: ApiRetry = new ApiRetry({ clock, log }),
): Promise<OperatorPki> {
  const authority: OperatorCa = await retry.until(
    "reading or creating the xDS CA Secret",
    () => ensureCa(rest, settings.namespace, clock.now()),
    (e) => e instanceof UnusableSecretError,
  );
  await retry.until(`publishing the xDS CA certificate (ConfigMap ${CA_CONFIGMAP})`, () =>
    publishCaCertificate(rest, settings.namespace, authority, FIELD_MANAGER),
  );
  // Set once the first certificate exists; rotations (timers, later) update it.
  const holder: { credentials?: RotatingServerCredentials } = {};
  const rotation = new ServingRotation({
    ca: authority,
    dnsNames: operatorServingNames(settings),
    clock,
    onRotate: (cert) => {
      holder.credentials?.update({ cert: cert.certPem, key: cert.keyPem, ca: authority.certPem });
      log.info(`xDS serving certificate rotated; valid until ${new Date(cert.notAfter).toISOString()}`);
    },
    onError: (e) => {
      log.error(`cannot rotate the xDS serving certificate, keeping the current one: ${e.message}`);
    },
  });
  const first = await rotation.start();
  // A client without a certificate connects but has no identity: `oooi debug --kubeconfig` sends a token instead.
  const credentials = new RotatingServerCredentials(
    { cert: first.certPem, key: first.keyPem, ca: authority.certPem },
    { clientCertificate: "optional" },
  );
  holder.credentials = credentials;
  log.info(
    `xDS: mTLS with the operator's CA; serving certificate valid until ${new Date(first.notAfter).toISOString()}`,
  );
  return { ca: authority, credentials, rotation };
}
