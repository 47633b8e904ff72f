// `oooi debug --kubeconfig`: reach the operator's leader as the user's Kubernetes identity. The
// leader is the Lease's holder (a pod name, POD_NAME); its xDS port is reached through the API
// server's pods/portforward (client-node's PortForward behind a loopback listener); the server's
// certificate is checked against the CA the operator publishes in a ConfigMap; the user's bearer
// token from the kubeconfig is sent instead of the admin certificate (docs/security.md "Who may debug").
import type { RequestOptions } from "node:https";
import { createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { PassThrough } from "node:stream";
import type { KubeClientConfig } from "../kube/kubeconfig.js";
import { KubeRest, statusCode } from "../kube/rest.js";
import { LEASE_NAME } from "../operator/process/writers.js";
import { XDS_PORT, XDS_SERVICE } from "../operator/desired/settings.js";
import { CA_CONFIGMAP } from "../pki/store.js";
import { clientCredentials } from "../xds/server/tls.js";
import type { ChannelCredentials } from "@grpc/grpc-js";

/** What `oooi debug` needs to talk to the leader: where, trusting what, as whom. */
export interface KubeDebugTarget {
  readonly address: string;
  readonly credentials: ChannelCredentials;
  readonly token: string;
  readonly serverName: string;
  /** The leader's pod, for messages. */
  readonly pod: string;
  /** Why the port-forward failed, once it did (the gRPC error alone says only "unavailable"). */
  readonly forwardError: () => string | undefined;
  readonly close: () => Promise<void>;
}

/** A step that failed, said so the user can act on it. */
export class KubeDebugError extends Error {}

/** The kubeconfig's user has no bearer token to pass on. */
export class NoTokenError extends KubeDebugError {
  override readonly name = "NoTokenError";
}

/** The Lease's holder: the pod name of the leading replica. */
export async function leaderPod(rest: Pick<KubeRest, "request">, namespace: string): Promise<string> {
  const path = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases/${LEASE_NAME}`;
  let lease: { spec?: { holderIdentity?: string } };
  try {
    lease = await rest.request({ method: "GET", path });
  } catch (e) {
    throw new KubeDebugError(
      readFailure(`the Lease ${namespace}/${LEASE_NAME}`, e, "is the operator installed there?"),
    );
  }
  const holder = lease.spec?.holderIdentity ?? "";
  if (holder === "")
    throw new KubeDebugError(
      `no replica leads: the Lease ${namespace}/${LEASE_NAME} has no holder (is the operator running?)`,
    );
  return holder;
}

/** The CA certificate the operator publishes (src/pki/store.ts CA_CONFIGMAP). */
export async function operatorCa(rest: Pick<KubeRest, "request">, namespace: string): Promise<string> {
  const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps/${CA_CONFIGMAP}`;
  let cm: { data?: Record<string, string> };
  try {
    cm = await rest.request({ method: "GET", path });
  } catch (e) {
    throw new KubeDebugError(
      readFailure(
        `the ConfigMap ${namespace}/${CA_CONFIGMAP}`,
        e,
        "the operator publishes it once it runs with its own CA",
      ),
    );
  }
  const pem = cm.data?.["ca.crt"];
  if (pem === undefined || pem === "")
    throw new KubeDebugError(`the ConfigMap ${namespace}/${CA_CONFIGMAP} holds no ca.crt`);
  return pem;
}

function readFailure(what: string, e: unknown, hint: string): string {
  const code = statusCode(e);
  if (code === 404) return `cannot read ${what}: not found (${hint})`;
  if (code === 403)
    return `cannot read ${what}: forbidden (${(e as Error).message}); bind the ClusterRole oooi-debugger in that namespace (docs/install.md)`;
  return `cannot read ${what}: ${(e as Error).message}`;
}

/** The bearer token client-node would send for the kubeconfig's user (token, token file, exec plugin, OIDC). */
export async function userToken(config: KubeClientConfig): Promise<string> {
  const opts: RequestOptions = {};
  await config.kubeConfig.applyToHTTPSOptions(opts);
  const header = (opts.headers as Record<string, unknown> | undefined)?.["Authorization"];
  const token = typeof header === "string" ? /^Bearer (\S+)$/i.exec(header)?.[1] : undefined;
  if (token === undefined)
    throw new NoTokenError(
      `${config.origin}: the user has no bearer token (a client certificate cannot be passed on to the operator); ` +
        "use a kubeconfig with a token, an exec plugin or OIDC, or one made from `kubectl create token NAME`",
    );
  return token;
}

/**
 * A loopback listener whose every connection is forwarded to `pod`'s xDS port through the API
 * server. A refused forward (the API server answers the upgrade with an error status) is kept for
 * forwardError(): with no kubelet, no pod or no right, gRPC sees only a closed connection.
 */
async function forwardToPod(
  config: KubeClientConfig,
  namespace: string,
  pod: string,
): Promise<{ address: string; error: () => string | undefined; close: () => Promise<void> }> {
  const { PortForward } = await import("@kubernetes/client-node");
  const forward = new PortForward(config.kubeConfig);
  let failure: string | undefined;
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    const errors = new PassThrough();
    errors.setEncoding("utf8").on("data", (d: string) => {
      failure = `the operator's pod ${namespace}/${pod} answered the port-forward with: ${d.trim()}`;
    });
    forward.portForward(namespace, pod, [XDS_PORT], socket, errors, socket).then(
      (opened: unknown) => {
        // retryCount 0: the WebSocket itself (isomorphic-ws, whose types do not resolve here). Either
        // end closes the other, so gRPC sees a closed connection rather than waiting for its deadline.
        const ws = opened as { close: () => void; once: (event: "close", f: () => void) => void };
        socket.once("close", () => {
          ws.close();
        });
        ws.once("close", () => {
          socket.destroy();
        });
      },
      (e: unknown) => {
        failure = forwardRefusal(namespace, pod, e);
        socket.destroy();
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const port = (server.address() as AddressInfo).port;
  return {
    address: `127.0.0.1:${String(port)}`,
    error: () => failure,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => {
        server.close(() => {
          r();
        });
      });
    },
  };
}

function forwardRefusal(namespace: string, pod: string, e: unknown): string {
  const message = e instanceof Error ? e.message : String((e as { message?: unknown }).message ?? e);
  const status = /Unexpected server response: (\d+)/.exec(message)?.[1];
  const where = `the API server refused the port-forward to ${namespace}/${pod}:${String(XDS_PORT)}`;
  if (status === "403")
    return `${where} (403): your user may not create pods/portforward in ${namespace} (ClusterRole oooi-debugger)`;
  if (status === "404") return `${where} (404): the pod is gone; try again once a new leader holds the Lease`;
  if (status === "400" || status === "500" || status === "502")
    return `${where} (${status}): it could not reach the pod's kubelet (the pod is not running on a node, or the node is unreachable)`;
  return `${where}: ${message}`;
}

/** Finds the leader, reads the CA and the token, and opens the forward (or uses `direct`, an address already forwarded). */
export async function kubeDebugTarget(
  config: KubeClientConfig,
  namespace: string,
  direct?: string,
): Promise<KubeDebugTarget> {
  const rest = new KubeRest(config);
  const token = await userToken(config);
  const pod = await leaderPod(rest, namespace);
  const ca = await operatorCa(rest, namespace);
  const forward = direct === undefined ? await forwardToPod(config, namespace, pod) : undefined;
  return {
    address: forward?.address ?? direct ?? "",
    credentials: clientCredentials({ ca }),
    token,
    // The serving certificate names the xDS Service (src/cli/operator-pki.ts operatorServingNames).
    serverName: `${XDS_SERVICE}.${namespace}.svc`,
    pod,
    forwardError: forward?.error ?? (() => undefined),
    close: forward?.close ?? (() => Promise.resolve()),
  };
}
