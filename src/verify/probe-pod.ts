// The VLAN-side DNS probe of `oooi verify --kubeconfig`: a short-lived pod on the Infra's NAD, at
// the VLAN source address the plan asks from, running dig once per planned name against the
// DNSServer's VLAN address. Its log is parsed back into DnsAnswers for the ordinary judge. The pod
// (and the static-IPAM NAD copy it may need) is deleted afterwards in every case.
import type { NetworkAttachment } from "../model/network.js";
import { componentNetwork } from "../operator/desired/network.js";
import { infraOwner } from "../operator/desired/objects.js";
import { parseIPv4 } from "../model/ipv4.js";
import type { KubeObject, KubeRest } from "../kube/rest.js";
import type { DnsAnswer } from "./probe-dns.js";

/** Label on every probe object, so a leftover one is recognisable (and selectable). */
export const PROBE_LABEL = "app.kubernetes.io/name";
export const PROBE_LABEL_VALUE = "oooi-verify-probe";
/** The probe's interface on the VLAN. */
export const PROBE_INTERFACE = "net1";

const MARK = "oooi-probe";
const NAME_RE = /^[A-Za-z0-9*_.-]+$/;

/** What one probe pod needs. */
export interface ProbePodInput {
  readonly name: string;
  readonly namespace: string;
  readonly infraName: string;
  readonly infraUid: string;
  readonly attachment: NetworkAttachment;
  readonly nadConfig: string | undefined;
  /** The VLAN source address (the plan's), with the CIDR's prefix length and gateway. */
  readonly address: string;
  readonly prefixLength: number;
  readonly gateway: string;
  /** The DNSServer's VLAN address. */
  readonly server: string;
  readonly names: readonly string[];
  readonly image: string;
}

/**
 * The pod (and the NAD copy for a classic CNI config) — the same attachment form the components
 * get (src/operator/desired/network.ts). The container passes restricted-v2: non-root, no privilege
 * escalation, no capabilities, RuntimeDefault seccomp; no runAsUser, so OpenShift assigns one from
 * the namespace's range.
 */
export function probePod(input: ProbePodInput): { pod: KubeObject; nad: KubeObject | undefined } {
  if (parseIPv4(input.server) === undefined) throw new Error(`DNS server address ${input.server} is not IPv4`);
  const bad = input.names.find((n) => !NAME_RE.test(n));
  if (bad !== undefined) throw new Error(`name ${JSON.stringify(bad)} cannot be asked by the probe`);
  const labels = { [PROBE_LABEL]: PROBE_LABEL_VALUE, "app.kubernetes.io/instance": input.infraName };
  const network = componentNetwork({
    attachment: input.attachment,
    nadConfig: input.nadConfig,
    name: input.name,
    namespace: input.namespace,
    serverIP: input.address,
    prefixLength: input.prefixLength,
    gateway: input.gateway,
    interfaceName: PROBE_INTERFACE,
    labels,
    owner: infraOwner(input.infraName, input.infraUid),
  });
  const pod: KubeObject = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: input.name,
      namespace: input.namespace,
      labels,
      annotations: { "k8s.v1.cni.cncf.io/networks": network.annotation },
    },
    spec: {
      restartPolicy: "Never",
      automountServiceAccountToken: false,
      securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
      containers: [
        {
          name: "dig",
          image: input.image,
          command: ["sh", "-c", probeScript(input.server, input.names)],
          securityContext: {
            allowPrivilegeEscalation: false,
            capabilities: { drop: ["ALL"] },
            runAsNonRoot: true,
            seccompProfile: { type: "RuntimeDefault" },
          },
        },
      ],
    },
  };
  return { pod, nad: network.nad as KubeObject | undefined };
}

/**
 * One dig per name, framed so the log parses back: `oooi-probe NAME`, dig's header comments
 * (status, flags — the AA bit tells a zone answer from a forwarded one, which `+short` hides) and
 * answer section, then `oooi-probe-exit CODE`.
 */
export function probeScript(server: string, names: readonly string[]): string {
  return names
    .map(
      (n) =>
        `echo '${MARK} ${n}'; dig @${server} +time=2 +tries=1 +noall +comments +answer '${n}' A; echo "${MARK}-exit $?"`,
    )
    .join("; ");
}

/** The probe's log → the answer (or the failure) for each name it asked. */
export function parseProbeLog(log: string): Map<string, DnsAnswer | Error> {
  const out = new Map<string, DnsAnswer | Error>();
  let name: string | undefined;
  let rcode: number | undefined;
  let aa = false;
  let addresses: string[] = [];
  for (const line of log.split("\n").map((l) => l.trim())) {
    if (line.startsWith(`${MARK}-exit `)) {
      if (name === undefined) continue;
      const exit = line.slice(MARK.length + 6);
      out.set(
        name,
        exit === "0" && rcode !== undefined
          ? { rcode, authoritative: aa, addresses: addresses.sort() }
          : new Error(`no answer for ${name} from the DNS server (dig exit ${exit})`),
      );
      name = undefined;
    } else if (line.startsWith(`${MARK} `)) {
      name = line.slice(MARK.length + 1);
      rcode = undefined;
      aa = false;
      addresses = [];
    } else if (name !== undefined) {
      const status = /status: ([A-Z]+)/.exec(line)?.[1];
      if (status !== undefined) rcode = RCODES.indexOf(status) >= 0 ? RCODES.indexOf(status) : 2;
      const flags = /^;; flags:([^;]*);/.exec(line)?.[1];
      if (flags !== undefined) aa = flags.trim().split(/\s+/).includes("aa");
      const a = /^\S+\s+\d+\s+IN\s+A\s+(\S+)$/.exec(line)?.[1];
      if (a !== undefined) addresses.push(a);
    }
  }
  return out;
}

const RCODES = ["NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED"];

/** How the probe ended. */
export type ProbeOutcome = { ok: true; answers: Map<string, DnsAnswer | Error> } | { ok: false; cause: string };

export interface RunProbeOptions {
  readonly timeoutMs: number;
  readonly pollMs?: number;
  /** Aborted (SIGINT): stop waiting; the pod is still deleted. */
  readonly signal?: AbortSignal;
}

/** Creates the probe, waits for it to end, reads its log; deletes what it created in every case. */
export async function runProbePod(
  rest: KubeRest,
  made: { pod: KubeObject; nad: KubeObject | undefined },
  opts: RunProbeOptions,
): Promise<ProbeOutcome> {
  const ns = made.pod.metadata?.namespace ?? "";
  const name = made.pod.metadata?.name ?? "";
  const podPath = `/api/v1/namespaces/${ns}/pods`;
  const nadPath = `/apis/k8s.cni.cncf.io/v1/namespaces/${ns}/network-attachment-definitions`;
  let nadCreated = false;
  let podCreated = false;
  try {
    if (made.nad !== undefined) {
      await rest.request({ method: "POST", path: nadPath, body: made.nad });
      nadCreated = true;
    }
    await rest.request({ method: "POST", path: podPath, body: made.pod });
    podCreated = true;
    const deadline = Date.now() + opts.timeoutMs;
    let phase = "Pending";
    let reason = "";
    for (;;) {
      const pod = await rest.request({ method: "GET", path: `${podPath}/${name}` });
      const status = (pod["status"] ?? {}) as { phase?: string; reason?: string; message?: string };
      phase = status.phase ?? "Pending";
      reason = [status.reason, status.message].filter((s) => s !== undefined && s !== "").join(": ");
      if (phase === "Succeeded" || phase === "Failed") break;
      if (opts.signal?.aborted === true) return { ok: false, cause: `interrupted; probe pod ${ns}/${name} ${phase}` };
      if (Date.now() >= deadline)
        return {
          ok: false,
          cause: `probe pod ${ns}/${name} did not finish within ${String(opts.timeoutMs)} ms (phase ${phase}${reason === "" ? "" : `, ${reason}`})`,
        };
      await wait(Math.min(opts.pollMs ?? 1000, Math.max(1, deadline - Date.now())), opts.signal);
    }
    const log = await rest.text({ method: "GET", path: `${podPath}/${name}/log` }).catch(() => "");
    if (phase === "Failed") {
      const last = log.trim().split("\n").pop() ?? "";
      return {
        ok: false,
        cause: `probe pod ${ns}/${name} failed${reason === "" ? "" : ` (${reason})`}${last === "" ? "" : `: ${last}`}`,
      };
    }
    return { ok: true, answers: parseProbeLog(log) };
  } catch (e) {
    return { ok: false, cause: `probe pod ${ns}/${name}: ${e instanceof Error ? e.message : String(e)}` };
  } finally {
    if (podCreated) await rest.request({ method: "DELETE", path: `${podPath}/${name}` }).catch(() => undefined);
    if (nadCreated) await rest.request({ method: "DELETE", path: `${nadPath}/${name}` }).catch(() => undefined);
  }
}

function wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}
