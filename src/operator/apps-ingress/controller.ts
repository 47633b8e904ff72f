// The leader's apps-ingress loop: for every attachment with spec.appsIngress.enabled, reach its
// hosted cluster, gate on a Ready Node, install MetalLB through OLM (unless an existing one is
// used), apply the LoadBalancer Service, watch it for the VIP, and write
// status.appsIngressStatus (its own field manager: the rest of the status is the reconciler's).
// The model turns that status into *.apps routes and the wildcard record. On delete or
// enabled: false it removes what it installed, in order, then clears the status — which is what
// lets the reconciler release the finalizer.
import {
  GROUP,
  VERSION,
  type AppsIngressStatus,
  type InfraClusterAttachmentSpec,
  type InfraSpec,
} from "../../api/schema.js";
import type { BackoffOptions } from "../../util/backoff.js";
import { canonicalJson } from "../desired/objects.js";
import type { Clock } from "../../util/clock.js";
import type { Observed } from "../../watchers/kube/observed.js";
import { apiPrefix } from "../../watchers/kube/resources.js";
import { KubeRest, statusCode, type KubeObject } from "../../kube/rest.js";
import { runPasses, type Passes } from "../../pipeline/passes.js";
import { clockScheduler } from "../../pipeline/schedulers.js";
import { appsIngressSettings, resolveAppsIngressConfig, type AppsIngressConfig } from "../../model/apps-ingress.js";
import { hostedKubeConfig, serviceAddress } from "./hosted.js";
import {
  appliedNames,
  cleanupOrderApplied,
  ingressService,
  METALLB_API,
  METALLB_RESOURCES,
  metallbObjects,
  metallbSubscription,
  staleObjects,
  type HostedObject,
} from "./objects.js";
import { appliedOf, nextAppsIngressStatus, vipOf, type Observation } from "./phase.js";
import { ServiceWatch } from "./service-watch.js";
import { cacheBehind, type OwnWrite } from "../writing/unobserved.js";
import { changedKeys } from "../../util/overlay-map.js";
import type { Logger } from "../../util/logger.js";

/** Field manager of the appsIngressStatus writes and of the hosted objects. */
export const APPS_INGRESS_FIELD_MANAGER = "oooi-apps-ingress";

export interface AppsIngressOptions {
  /** The management cluster. */
  readonly rest: KubeRest;
  readonly clock: Clock;
  readonly logger: Pick<Logger, "info" | "warn">;
  /** Checked before every write. */
  readonly isLeader: () => boolean;
  readonly backoff?: BackoffOptions;
  /** Passes without a trigger (default 30 s). */
  readonly resyncMs?: number;
  /** Per-request timeout towards a hosted cluster (default 10 s). */
  readonly requestTimeoutMs?: number;
}

/** One hosted cluster connection, kept while its kubeconfig and address stay the same. */
interface Session {
  readonly key: string;
  readonly rest: KubeRest;
  watch: { readonly target: string; readonly w: ServiceWatch } | undefined;
}

type Access = { readonly session: Session } | { readonly gone: Observation };

export class AppsIngressController {
  readonly #o: AppsIngressOptions;
  readonly #runner: Passes;
  readonly #sessions = new Map<string, Session>();
  /** What a pass wrote, by attachment, until the cache holds it (cacheBehind). */
  readonly #written = new Map<string, OwnWrite & { readonly status: AppsIngressStatus | undefined }>();
  #latest: Observed | undefined;
  /** Keys of the attachments with apps ingress enabled or its status, as of `#seen`. */
  readonly #withAppsIngress = new Set<string>();
  /** The attachments `#withAppsIngress` was last brought up to date with. */
  #seen: ReadonlyMap<string, KubeObject> | undefined;

  constructor(o: AppsIngressOptions) {
    this.#o = o;
    this.#runner = runPasses(() => this.#pass(), {
      scheduler: clockScheduler(o.clock),
      resyncMs: o.resyncMs ?? 30_000,
      ...(o.backoff === undefined ? {} : { backoff: o.backoff }),
      onError: (e, attempt) => {
        o.logger.warn({ attempt, err: (e as Error).message }, "apps ingress pass failed; retrying with backoff");
      },
    });
  }

  /** A new snapshot: run a pass (coalesced with one in progress). */
  sync(observed: Observed): void {
    this.#latest = observed;
    this.#runner.trigger();
  }

  /** Whether the attachment's finalizer must stay: apps-ingress objects may still exist in its hosted cluster. */
  holds(attachment: KubeObject): boolean {
    return (attachment["status"] as { appsIngressStatus?: unknown } | undefined)?.appsIngressStatus !== undefined;
  }

  async close(): Promise<void> {
    await this.#runner.stop();
    for (const s of this.#sessions.values()) await s.watch?.w.close();
    this.#sessions.clear();
  }

  async #pass(): Promise<void> {
    const observed = this.#latest;
    if (observed === undefined || !this.#o.isLeader()) return;
    const failures: string[] = [];
    const live = new Set<string>();
    const attachments = observed.raw.attachments;
    // Only an attachment with apps ingress, its status or a write of ours in hand has anything to
    // do; the others are skipped without a look, so a pass costs what changed plus those.
    const keys = this.#seen === undefined ? attachments.keys() : changedKeys(this.#seen, attachments);
    for (const key of keys) {
      const a = attachments.get(key);
      if (a !== undefined && hasAppsIngress(a)) this.#withAppsIngress.add(key);
      else this.#withAppsIngress.delete(key);
    }
    this.#seen = attachments;
    for (const key of new Set([...this.#withAppsIngress, ...this.#written.keys()])) {
      const a = attachments.get(key);
      if (a === undefined) continue;
      const spec = a["spec"] as InfraClusterAttachmentSpec | undefined;
      if (spec === undefined) continue;
      const current = this.#currentStatus(key, a);
      const wanted = spec.appsIngress?.enabled === true && a.metadata?.deletionTimestamp === undefined;
      try {
        if (wanted) {
          live.add(key);
          const observation = await this.#observe(key, a, spec, observed, current);
          const next = nextAppsIngressStatus(current, observation, this.#o.clock.now());
          if (canonicalJson(next) !== canonicalJson(current ?? null)) await this.#writeStatus(a, next);
        } else if (current !== undefined) {
          await this.#cleanup(key, a, spec, current, observed);
        }
      } catch (e) {
        failures.push(`${key}: ${(e as Error).message}`);
      }
    }
    for (const key of this.#written.keys()) if (!attachments.has(key)) this.#written.delete(key);
    for (const [key, s] of this.#sessions) {
      if (live.has(key)) continue;
      await s.watch?.w.close();
      this.#sessions.delete(key);
    }
    if (failures.length > 0) throw new Error(failures.join("; "));
  }

  /** One attachment's pass: the first thing missing or failing, else the VIP. */
  async #observe(
    key: string,
    a: KubeObject,
    spec: InfraClusterAttachmentSpec,
    observed: Observed,
    current: AppsIngressStatus | undefined,
  ): Promise<Observation> {
    const infra = observed.raw.infras.get(`${a.metadata?.namespace ?? ""}/${spec.infraRef.name}`);
    const checked = resolveAppsIngressConfig(spec, infra?.["spec"] as InfraSpec | undefined);
    if (!checked.ok)
      return { phase: "Degraded", reason: "InvalidConfiguration", message: `${checked.field}: ${checked.message}` };
    const config = checked.config;
    const access = await this.#access(key, spec, observed);
    if ("gone" in access) return access.gone;
    const { session } = access;
    const hosted = session.rest;

    let nodes: { items?: KubeObject[] };
    try {
      nodes = await hosted.request<{ items?: KubeObject[] }>({ method: "GET", path: "/api/v1/nodes" });
    } catch (e) {
      return { phase: "Degraded", reason: "HostedClusterAccessFailed", message: `hosted API: ${describe(e)}` };
    }
    if (!(nodes.items ?? []).some(nodeReady))
      return {
        phase: "Pending",
        reason: "WaitingForHostedClusterNodes",
        message: `the hosted cluster has ${String(nodes.items?.length ?? 0)} Node(s), none Ready`,
      };

    if (config.installMetalLB) {
      const metallb = await this.#installMetalLB(hosted, config);
      if (metallb !== undefined) return metallb;
    }

    const desired = ingressService(config);
    const where = `${desired.body.metadata.namespace}/${desired.body.metadata.name}`;
    let applied: KubeObject;
    try {
      applied = await this.#apply(hosted, desired);
    } catch (e) {
      return { phase: "Degraded", reason: "IngressServiceFailed", message: `Service ${where}: ${describe(e)}` };
    }
    // What a changed spec no longer names (a renamed Service or pool) goes once the new one is applied.
    const names = appliedNames(config);
    const stale = staleObjects(appliedOf(current), names);
    try {
      for (const o of stale) await this.#delete(hosted, objectPath(o));
    } catch (e) {
      return {
        phase: "Degraded",
        reason: "CleanupFailed",
        message: `removing what the spec no longer names: ${describe(e)}`,
      };
    }
    const watch = this.#watch(session, desired);
    if (watch.error !== undefined && !watch.synced)
      return {
        phase: "Degraded",
        reason: "ExternalIPDiscoveryFailed",
        message: `watching Service ${where}: ${watch.error.message}`,
      };
    const ingress = vipOf(watch.synced ? watch.object : applied);
    if (ingress === undefined)
      return {
        phase: "Pending",
        reason: "WaitingForExternalIP",
        applied: names,
        message: `LoadBalancer Service ${where} has no address yet${config.pool === undefined ? "" : ` from pool ${config.pool}`}`,
      };
    return { phase: "Ready", ingress, service: where, applied: names };
  }

  /** Subscription, then (once its CRDs are served) MetalLB, IPAddressPool, L2Advertisement. */
  async #installMetalLB(hosted: KubeRest, config: AppsIngressConfig): Promise<Observation | undefined> {
    const failed = (what: string, e: unknown): Observation => ({
      phase: "Degraded",
      reason: "MetalLBInstallFailed",
      message: `${what}: ${describe(e)}`,
    });
    const subscription = metallbSubscription(config);
    try {
      await this.#apply(hosted, subscription);
    } catch (e) {
      return failed(`Subscription ${subscription.body.metadata.name}`, e);
    }
    let served: string[];
    try {
      const list = await hosted.request<{ resources?: { name?: string }[] }>({
        method: "GET",
        path: `/apis/${METALLB_API}`,
      });
      served = (list.resources ?? []).map((r) => r.name ?? "");
    } catch (e) {
      if (statusCode(e) !== 404) return failed(`discovery of ${METALLB_API}`, e);
      served = [];
    }
    const missing = METALLB_RESOURCES.filter((r) => !served.includes(r));
    if (missing.length > 0)
      return {
        phase: "Pending",
        reason: "WaitingForMetalLBCRDs",
        message: `OLM is installing metallb-operator (channel ${config.channel}, source ${config.source}); ${METALLB_API} does not serve ${missing.join(", ")} yet`,
      };
    for (const o of metallbObjects(config)) {
      try {
        await this.#apply(hosted, o);
      } catch (e) {
        return failed(`${o.kind} ${o.body.metadata.name}`, e);
      }
    }
    return undefined;
  }

  /** The hosted cluster's client, or the Pending/Degraded observation saying why there is none. */
  async #access(key: string, spec: InfraClusterAttachmentSpec, observed: Observed): Promise<Access> {
    const hcNs = spec.hostedClusterRef.namespace ?? "clusters";
    const hcName = spec.hostedClusterRef.name;
    const hc = observed.raw.hostedclusters.get(`${hcNs}/${hcName}`);
    const pending = (
      reason: "WaitingForHostedCluster" | "WaitingForKubeconfig" | "WaitingForAPIServerService",
      message: string,
    ): Access => ({
      gone: { phase: "Pending", reason, message },
    });
    if (hc === undefined) return pending("WaitingForHostedCluster", `HostedCluster ${hcNs}/${hcName} not found`);
    const secretName = (hc["status"] as { kubeconfig?: { name?: string } } | undefined)?.kubeconfig?.name;
    if (secretName === undefined || secretName === "")
      return pending("WaitingForKubeconfig", `HostedCluster ${hcNs}/${hcName} reports no status.kubeconfig yet`);
    let secret: KubeObject;
    try {
      secret = await this.#o.rest.request({
        method: "GET",
        path: `/api/v1/namespaces/${encodeURIComponent(hcNs)}/secrets/${encodeURIComponent(secretName)}`,
      });
    } catch (e) {
      if (statusCode(e) === 404)
        return pending("WaitingForKubeconfig", `kubeconfig Secret ${hcNs}/${secretName} not found`);
      return {
        gone: {
          phase: "Degraded",
          reason: "HostedClusterAccessFailed",
          message: `Secret ${hcNs}/${secretName}: ${describe(e)}`,
        },
      };
    }
    const encoded = (secret["data"] as Record<string, string> | undefined)?.["kubeconfig"];
    if (encoded === undefined)
      return {
        gone: {
          phase: "Degraded",
          reason: "HostedClusterAccessFailed",
          message: `Secret ${hcNs}/${secretName} has no key "kubeconfig"`,
        },
      };
    const cp = spec.controlPlaneNamespace ?? `${hcNs}-${hcName}`;
    const svcName = spec.apiServerService ?? "kube-apiserver";
    const address = serviceAddress(observed.raw.services.get(`${cp}/${svcName}`));
    if (typeof address === "string")
      return pending("WaitingForAPIServerService", `Service ${cp}/${svcName} ${address}`);
    const sessionKey = `${secret.metadata?.resourceVersion ?? ""}@${address.host}:${String(address.port)}`;
    const existing = this.#sessions.get(key);
    if (existing?.key === sessionKey) return { session: existing };
    let rest: KubeRest;
    try {
      const text = Buffer.from(encoded, "base64").toString("utf8");
      rest = new KubeRest(hostedKubeConfig(text, address, `Secret ${hcNs}/${secretName} key "kubeconfig"`), {
        requestTimeoutMs: this.#o.requestTimeoutMs ?? 10_000,
      });
    } catch (e) {
      return {
        gone: {
          phase: "Degraded",
          reason: "HostedClusterAccessFailed",
          message: describe(e),
        },
      };
    }
    await existing?.watch?.w.close();
    const session: Session = { key: sessionKey, rest, watch: undefined };
    this.#sessions.set(key, session);
    return { session };
  }

  #watch(session: Session, service: HostedObject): ServiceWatch {
    const target = `${service.body.metadata.namespace}/${service.body.metadata.name}`;
    if (session.watch?.target === target) return session.watch.w;
    void session.watch?.w.close();
    let lastVip = "";
    const w = new ServiceWatch(
      session.rest,
      { namespace: service.body.metadata.namespace, name: service.body.metadata.name },
      {
        clock: this.#o.clock,
        backoff: this.#o.backoff ?? {},
        // Only a VIP change (or a failure) is worth a pass: status churn of the Service is not.
        onChange: () => {
          const vip = JSON.stringify([vipOf(w.object), w.error?.message]);
          if (vip === lastVip) return;
          lastVip = vip;
          this.#runner.trigger();
        },
      },
    );
    session.watch = { target, w };
    return w;
  }

  /** Server-side apply; returns the object as stored (with its status). */
  async #apply(hosted: KubeRest, o: HostedObject): Promise<KubeObject> {
    this.#guard();
    return hosted.request({
      method: "PATCH",
      path: objectPath(o),
      query: { fieldManager: APPS_INGRESS_FIELD_MANAGER, force: "true" },
      contentType: "application/apply-patch+yaml",
      body: o.body,
    });
  }

  /** Deletes in order, ignoring NotFound (also what an unserved kind answers); then clears the status. */
  async #cleanup(
    key: string,
    a: KubeObject,
    spec: InfraClusterAttachmentSpec,
    current: AppsIngressStatus,
    observed: Observed,
  ): Promise<void> {
    const access = await this.#access(key, spec, observed);
    // Nothing to reach (HostedCluster, kubeconfig or API Service gone): nothing is left to clean.
    if ("session" in access) {
      try {
        await this.#deleteAll(access.session.rest, cleanupOrderApplied(appsIngressSettings(spec), appliedOf(current)));
      } catch (e) {
        const message = `cleanup of the hosted apps-ingress objects failed, retrying: ${describe(e)}`;
        const next = nextAppsIngressStatus(
          current,
          { phase: "Degraded", reason: "CleanupFailed", message },
          this.#o.clock.now(),
        );
        if (canonicalJson(next) !== canonicalJson(current)) await this.#writeStatus(a, next);
        throw new Error(message);
      }
    } else if (access.gone.phase === "Degraded") {
      throw new Error(`cannot reach the hosted cluster to clean up: ${access.gone.message}`);
    }
    await this.#session(key)?.watch?.w.close();
    this.#sessions.delete(key);
    await this.#writeStatus(a, undefined);
    this.#o.logger.info({ attachment: key }, "apps ingress cleaned up");
  }

  /** The attachment's appsIngressStatus: ours while the cache is older than our write. */
  #currentStatus(key: string, a: KubeObject): AppsIngressStatus | undefined {
    const cached = (a["status"] as { appsIngressStatus?: AppsIngressStatus } | undefined)?.appsIngressStatus;
    const mine = this.#written.get(key);
    if (mine !== undefined && cacheBehind(a.metadata?.resourceVersion, mine)) return mine.status;
    this.#written.delete(key);
    return cached;
  }

  #session(key: string): Session | undefined {
    return this.#sessions.get(key);
  }

  async #deleteAll(hosted: KubeRest, objects: readonly HostedObject[]): Promise<void> {
    for (const o of objects) {
      let csv: string | undefined;
      if (o.kind === "Subscription") {
        const sub = await getOrUndefined(hosted, objectPath(o));
        csv = (sub?.["status"] as { installedCSV?: string } | undefined)?.installedCSV;
      }
      await this.#delete(hosted, objectPath(o));
      if (csv !== undefined)
        await this.#delete(
          hosted,
          `${apiPrefix("operators.coreos.com", "v1alpha1")}/namespaces/${encodeURIComponent(o.body.metadata.namespace)}/clusterserviceversions/${encodeURIComponent(csv)}`,
        );
    }
  }

  async #delete(hosted: KubeRest, path: string): Promise<void> {
    this.#guard();
    try {
      await hosted.request({ method: "DELETE", path, query: { propagationPolicy: "Background" } });
    } catch (e) {
      if (statusCode(e) !== 404) throw e;
    }
  }

  /** Applies (or, with undefined, removes) status.appsIngressStatus. */
  async #writeStatus(a: KubeObject, status: AppsIngressStatus | undefined): Promise<void> {
    this.#guard();
    const m = a.metadata ?? {};
    const key = `${m.namespace ?? ""}/${m.name ?? ""}`;
    this.#written.delete(key);
    const path = `${apiPrefix(GROUP, VERSION)}/namespaces/${encodeURIComponent(m.namespace ?? "")}/infraclusterattachments/${encodeURIComponent(m.name ?? "")}/status`;
    // Removal is a merge patch: whoever else once wrote the field (kubectl, a former manager), it goes.
    const result = await this.#o.rest.request(
      status === undefined
        ? {
            method: "PATCH",
            path,
            contentType: "application/merge-patch+json",
            body: { status: { appsIngressStatus: null } },
          }
        : {
            method: "PATCH",
            path,
            query: { fieldManager: APPS_INGRESS_FIELD_MANAGER, force: "true" },
            contentType: "application/apply-patch+yaml",
            body: {
              apiVersion: `${GROUP}/${VERSION}`,
              kind: "InfraClusterAttachment",
              metadata: { name: m.name, namespace: m.namespace },
              status: { appsIngressStatus: status },
            },
          },
    );
    this.#written.set(key, { seenRv: m.resourceVersion, resultRv: result.metadata?.resourceVersion, status });
  }

  #guard(): void {
    if (!this.#o.isLeader()) throw new Error("not the leader");
  }
}

function nodeReady(n: KubeObject): boolean {
  const conditions = ((n["status"] ?? {}) as { conditions?: { type?: string; status?: string }[] }).conditions ?? [];
  return conditions.some((c) => c.type === "Ready" && c.status === "True");
}

function objectPath(o: HostedObject): string {
  const slash = o.apiVersion.indexOf("/");
  const prefix =
    slash < 0 ? apiPrefix("", o.apiVersion) : apiPrefix(o.apiVersion.slice(0, slash), o.apiVersion.slice(slash + 1));
  return `${prefix}/namespaces/${encodeURIComponent(o.body.metadata.namespace)}/${o.plural}/${encodeURIComponent(o.body.metadata.name)}`;
}

async function getOrUndefined(rest: KubeRest, path: string): Promise<KubeObject | undefined> {
  try {
    return await rest.request({ method: "GET", path });
  } catch (e) {
    if (statusCode(e) === 404) return undefined;
    throw e;
  }
}

function describe(e: unknown): string {
  const code = statusCode(e);
  const message = e instanceof Error ? e.message : String(e);
  return code === undefined ? message : `HTTP ${String(code)}: ${message}`;
}

/** Whether a pass has anything to do for the attachment: apps ingress enabled, or a status of it left to clear. */
function hasAppsIngress(a: KubeObject): boolean {
  const spec = a["spec"] as InfraClusterAttachmentSpec | undefined;
  const status = a["status"] as { appsIngressStatus?: unknown } | undefined;
  return spec?.appsIngress?.enabled === true || status?.appsIngressStatus !== undefined;
}
