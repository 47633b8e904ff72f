// `oooi verify --kubeconfig`: the Verification list against a cluster. The state is listed once
// (the operator's own watch set, no watch kept), the model built as the operator builds it, and:
//   dns vlan  from a probe pod on each Infra's NAD (./probe-pod.ts), judged as in serve mode
//   ack       from each ProxyServer / DHCPServer status (what the operator saw its data planes ACK)
//   dhcp      the DHCPServer's allocations (fed to the model) against the VMIs' reported addresses
// The pod-network view and the routes need a pod inside the cluster network and the operator's
// xDS port: they are SKIPped naming how to check them.
import { networkAttachment } from "../model/network.js";
import { persistedAllocations } from "../operator/inputs/allocations.js";
import { parseCidr } from "../model/ipv4.js";
import { renderAll } from "../pipeline/outputs.js";
import { ClusterWatcher } from "../watchers/kube/cluster.js";
import type { Observed } from "../watchers/kube/observed.js";
import type { KubeObject, KubeRest } from "../kube/rest.js";
import type { Topology } from "../model/types.js";
import {
  dnsCheckName,
  fail,
  judgeDns,
  judgeReservation,
  pass,
  routeCheckName,
  skip,
  type CheckResult,
} from "./judge.js";
import { planChecks, vlanProbeSource, type DnsCheck } from "./plan.js";
import { probePod, runProbePod, type ProbeOutcome } from "./probe-pod.js";

export interface ClusterVerifyOptions {
  /** Only the Infras of this namespace. */
  readonly namespace?: string;
  readonly probeImage: string;
  readonly timeoutMs: number;
  readonly forwardName?: string;
  readonly signal?: AbortSignal;
  readonly pollMs?: number;
}

/** Thrown when the API server cannot be read (exit 2). */
export class ClusterUnreachable extends Error {}

/** Lists the operator's watch set once: every resource's first list, then stops. */
export async function readCluster(rest: KubeRest, timeoutMs: number): Promise<Observed> {
  try {
    await rest.request({ method: "GET", path: "/version" });
  } catch (e) {
    throw new ClusterUnreachable(`cannot reach the API server: ${e instanceof Error ? e.message : String(e)}`);
  }
  const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined };
  const watcher = new ClusterWatcher({ rest, logger: quiet, discoveryIntervalMs: 3_600_000 });
  let timer: NodeJS.Timeout | undefined;
  try {
    watcher.start();
    await Promise.race([
      watcher.ready,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          reject(new ClusterUnreachable(`the API server did not list every resource within ${String(timeoutMs)} ms`));
        }, timeoutMs);
      }),
    ]);
    return watcher.snapshot();
  } finally {
    clearTimeout(timer);
    await watcher.close();
  }
}

/** Every check for the cluster's Infras; a failed probe is a FAIL, never a throw. */
export async function runClusterVerify(
  rest: KubeRest,
  obs: Observed,
  opts: ClusterVerifyOptions,
): Promise<CheckResult[]> {
  const out = renderAll(obs.state, { dhcpAllocations: persistedAllocations(obs.raw.dhcpservers), now: Date.now() });
  const topologies = out.model.topologies.filter(
    (t) => opts.namespace === undefined || t.infra.namespace === opts.namespace,
  );
  // The pod-network source only selects the default view, which is SKIPped here.
  const checks = planChecks(topologies, obs.state.vmis, {
    podSource: "0.0.0.0",
    ...(opts.forwardName === undefined ? {} : { forwardName: opts.forwardName }),
  });
  const results: CheckResult[] = [];
  for (const t of topologies) {
    const infra = `${t.infra.namespace}/${t.infra.name}`;
    const mine = checks.filter((c) => c.infra === infra);
    const vlan = mine.filter((c): c is DnsCheck => c.kind === "dns" && c.view === "vlan");
    if (vlan.length > 0) {
      const outcome = await probeInfra(rest, obs, t, vlan, opts);
      for (const c of vlan) {
        const answer = outcome.ok
          ? (outcome.answers.get(c.name) ?? new Error(`the probe's log has no answer for ${c.name}`))
          : new Error(outcome.cause);
        results.push(judgeDns(c, answer));
      }
    }
    for (const c of mine) {
      if (c.kind === "dns" && c.view === "default")
        results.push(skip(dnsCheckName(c), c.infra, "the pod-network view is not probed in cluster mode"));
      else if (c.kind === "route")
        results.push(
          skip(routeCheckName(c), c.attachment, "needs the served snapshot: oooi verify --xds OPERATOR-XDS-ADDRESS"),
        );
      else if (c.kind === "reservation") results.push(judgeReservation(c));
    }
    results.push(...judgeChildren(t, obs));
  }
  return results;
}

async function probeInfra(
  rest: KubeRest,
  obs: Observed,
  t: Topology,
  checks: readonly DnsCheck[],
  opts: ClusterVerifyOptions,
): Promise<ProbeOutcome> {
  const infra = obs.state.infras.find(
    (i) => i.metadata.namespace === t.infra.namespace && i.metadata.name === t.infra.name,
  );
  const dns = t.dns;
  if (infra === undefined || dns === undefined) return { ok: false, cause: "the Infra has no DNS model" };
  const nc = infra.spec.networkConfig;
  const address = vlanProbeSource(nc.cidr);
  const source = checks[0]?.source;
  if (address === undefined || source !== address)
    return { ok: false, cause: `no probe address in ${nc.cidr} (the plan asks from ${source ?? "(none)"})` };
  const attachment = networkAttachment(nc, t.infra.namespace);
  const gateway = nc.gateway;
  if (attachment === undefined || gateway === undefined)
    return { ok: false, cause: "the Infra names no network and gateway to attach the probe to" };
  const suffix = Math.random().toString(36).slice(2, 7);
  let made;
  try {
    made = probePod({
      name: `${t.infra.name}-verify-${suffix}`.slice(0, 63),
      namespace: t.infra.namespace,
      infraName: t.infra.name,
      infraUid: infra.metadata.uid ?? "",
      attachment,
      nadConfig: obs.networkAttachments.get(`${attachment.namespace}/${attachment.name}`),
      address,
      prefixLength: parseCidr(nc.cidr)?.prefix ?? 32,
      gateway,
      server: dns.serverIP,
      names: [...new Set(checks.map((c) => c.name))],
      image: opts.probeImage,
    });
  } catch (e) {
    return { ok: false, cause: e instanceof Error ? e.message : String(e) };
  }
  return runProbePod(rest, made, {
    timeoutMs: opts.timeoutMs,
    ...(opts.pollMs === undefined ? {} : { pollMs: opts.pollMs }),
    ...(opts.signal === undefined ? {} : { signal: opts.signal }),
  });
}

/** Each ProxyServer / DHCPServer child: what its data planes ACKed, as the operator reported it. */
export function judgeChildren(t: Topology, obs: Pick<Observed, "raw">): CheckResult[] {
  const out: CheckResult[] = [];
  if (t.proxy !== undefined) out.push(judgeChild(t.proxy.node, obs.raw.proxyservers.get(t.proxy.node), "ProxyServer"));
  if (t.dhcp !== undefined) out.push(judgeChild(t.dhcp.name, obs.raw.dhcpservers.get(t.dhcp.name), "DHCPServer"));
  return out;
}

/** One child's status: ACKed, NACKed, or not yet ACKed. */
export function judgeChild(key: string, child: KubeObject | undefined, kind: string): CheckResult {
  const name = `ack ${kind} ${key}`;
  if (child === undefined) return fail(name, key, `the model expects ${kind} ${key}; it does not exist`, "node-stale");
  const status = (child["status"] ?? {}) as {
    ackedVersion?: string;
    lastNack?: string;
    conditions?: { type?: string; status?: string; message?: string }[];
  };
  if (status.lastNack !== undefined && status.lastNack !== "")
    return fail(name, key, `NACKed: ${status.lastNack}`, "node-nack");
  if (status.ackedVersion === undefined || status.ackedVersion === "")
    return fail(name, key, "no data plane has ACKed a configuration (status.ackedVersion unset)", "node-stale");
  const ready = status.conditions?.find((c) => c.type === "Ready");
  if (ready !== undefined && ready.status !== "True")
    return fail(
      name,
      key,
      `ACKed ${status.ackedVersion}, but Ready is ${ready.status ?? "Unknown"}: ${ready.message ?? ""}`,
      "node-behind",
    );
  return pass(name, key, `ACKed ${status.ackedVersion}`);
}
