// Leader election on a coordination.k8s.io/v1 Lease, with client-go's rules: a candidate takes the
// Lease only when it is free or its record has not changed for a whole lease duration as seen by
// the candidate's own clock (no clock comparison across machines); the holder renews every retry
// period and stops leading when it could not renew within the renew deadline, which is shorter
// than the lease duration, so two leaders never overlap while clocks run at similar rates.
import { CoordinationV1Api, V1MicroTime, type V1Lease, type V1LeaseSpec } from "@kubernetes/client-node";
import { sleep, SYSTEM_CLOCK, type Clock } from "../../util/clock.js";
import { statusCode, withSignal, type KubeRest } from "../../kube/rest.js";

/** Timing of the election (client-go's defaults for controllers: 15 s / 10 s / 2 s). */
export interface LeaseTiming {
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
}

/** The usual controller timing. */
export const DEFAULT_LEASE_TIMING: LeaseTiming = {
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
};

/** Options of LeaderElector. */
export interface LeaderElectorOptions {
  readonly rest: KubeRest;
  readonly namespace: string;
  /** Lease name, shared by every replica. */
  readonly name: string;
  /** This replica's identity (the pod name). */
  readonly identity: string;
  readonly timing?: LeaseTiming;
  readonly clock?: Clock;
  readonly onChange?: (leading: boolean) => void;
  readonly logger?: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
  /**
   * Told about a failed request; true when it was the API server being unreachable and is reported
   * there (src/operator/process/api-outage.ts), so this one logs nothing of it.
   */
  readonly unreachable?: (what: string, e: unknown) => boolean;
}

/** Runs the election loop; `isLeader()` is what guards every write. */
export class LeaderElector {
  readonly #o: LeaderElectorOptions;
  readonly #t: LeaseTiming;
  readonly #clock: Clock;
  readonly #leases: CoordinationV1Api;
  readonly #stop = new AbortController();
  #loop: Promise<void> | undefined;
  #leading = false;
  #lastRenew = 0;
  /** The last record seen and when this replica first saw it. */
  #observed: { record: string; at: number } | undefined;

  constructor(o: LeaderElectorOptions) {
    this.#o = o;
    this.#t = o.timing ?? DEFAULT_LEASE_TIMING;
    this.#clock = o.clock ?? SYSTEM_CLOCK;
    this.#leases = o.rest.api(CoordinationV1Api);
  }

  /** True while this replica holds the Lease and renewed it within the renew deadline. */
  isLeader(): boolean {
    if (this.#leading && this.#clock.now() - this.#lastRenew > this.#t.renewDeadlineMs) this.#set(false);
    return this.#leading;
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  /** Stops campaigning; when leading, releases the Lease so another replica takes over at once. */
  async stop(release = true, signal?: AbortSignal): Promise<void> {
    this.#stop.abort();
    await this.#loop;
    const wasLeading = this.#leading;
    this.#set(false);
    if (release && wasLeading) {
      try {
        await this.#release(signal);
      } catch (e) {
        this.#o.logger?.warn({ err: (e as Error).message }, "could not release the leader Lease; it expires by itself");
      }
    }
  }

  async #run(): Promise<void> {
    const signal = this.#stop.signal;
    while (!signal.aborted) {
      try {
        await this.#tryAcquireOrRenew();
      } catch (e) {
        if (isAborted(signal)) break;
        if (this.#o.unreachable?.("leader Lease", e) !== true)
          this.#o.logger?.warn({ err: (e as Error).message, lease: this.#o.name }, "leader Lease update failed");
      }
      this.isLeader();
      // Followers add jitter so candidates do not race in lockstep.
      const wait = this.#leading ? this.#t.retryPeriodMs : this.#t.retryPeriodMs * (1 + 0.2 * Math.random());
      await sleep(this.#clock, wait, signal);
    }
  }

  async #tryAcquireOrRenew(): Promise<void> {
    const now = this.#clock.now();
    const id = this.#o.identity;
    const { name, namespace } = this.#o;
    const signal = withSignal(this.#stop.signal);
    let lease: V1Lease;
    try {
      lease = await this.#leases.readNamespacedLease({ name, namespace }, signal);
    } catch (e) {
      if (statusCode(e) !== 404) throw e;
      const spec: V1LeaseSpec = {
        holderIdentity: id,
        leaseDurationSeconds: this.#seconds(),
        acquireTime: new V1MicroTime(now),
        renewTime: new V1MicroTime(now),
        leaseTransitions: 0,
      };
      try {
        await this.#leases.createNamespacedLease(
          {
            namespace,
            body: { apiVersion: "coordination.k8s.io/v1", kind: "Lease", metadata: { name, namespace }, spec },
          },
          signal,
        );
      } catch (err) {
        if (statusCode(err) === 409) return;
        throw err;
      }
      this.#renewed(now);
      return;
    }
    const spec = lease.spec ?? {};
    // The times as the server wrote them: client-node keeps a MicroTime it reads as its text.
    const record = JSON.stringify([
      spec.holderIdentity ?? "",
      spec.renewTime ?? "",
      lease.metadata?.resourceVersion ?? "",
    ]);
    if (this.#observed?.record !== record) this.#observed = { record, at: now };
    const holder = spec.holderIdentity ?? "";
    const durationMs = (spec.leaseDurationSeconds ?? this.#seconds()) * 1000;
    if (holder !== "" && holder !== id && now < this.#observed.at + durationMs) {
      if (this.#leading) this.#set(false);
      return;
    }
    const next: V1LeaseSpec = {
      holderIdentity: id,
      leaseDurationSeconds: this.#seconds(),
      acquireTime: holder === id && spec.acquireTime !== undefined ? spec.acquireTime : new V1MicroTime(now),
      renewTime: new V1MicroTime(now),
      leaseTransitions: (spec.leaseTransitions ?? 0) + (holder === id ? 0 : 1),
    };
    try {
      await this.#leases.replaceNamespacedLease({ name, namespace, body: { ...leaseHead(lease), spec: next } }, signal);
    } catch (e) {
      if (statusCode(e) === 409) return;
      throw e;
    }
    this.#renewed(now);
  }

  #renewed(at: number): void {
    this.#lastRenew = at;
    if (!this.#leading) {
      this.#o.logger?.info({ lease: this.#o.name, identity: this.#o.identity }, "became leader");
      this.#set(true);
    }
  }

  #set(leading: boolean): void {
    if (this.#leading === leading) return;
    this.#leading = leading;
    if (!leading) this.#o.logger?.info({ lease: this.#o.name, identity: this.#o.identity }, "stopped leading");
    this.#o.onChange?.(leading);
  }

  #seconds(): number {
    return Math.max(1, Math.round(this.#t.leaseDurationMs / 1000));
  }

  async #release(stop: AbortSignal | undefined): Promise<void> {
    const { name, namespace } = this.#o;
    const signal = withSignal(stop);
    const lease = await this.#leases.readNamespacedLease({ name, namespace }, signal);
    const spec = lease.spec ?? {};
    if (spec.holderIdentity !== this.#o.identity) return;
    const now = new V1MicroTime(this.#clock.now());
    await this.#leases.replaceNamespacedLease(
      {
        name,
        namespace,
        body: {
          ...leaseHead(lease),
          spec: {
            holderIdentity: "",
            leaseDurationSeconds: 1,
            renewTime: now,
            acquireTime: now,
            ...(spec.leaseTransitions === undefined ? {} : { leaseTransitions: spec.leaseTransitions }),
          },
        },
      },
      signal,
    );
    this.#o.logger?.info({ lease: this.#o.name }, "released the leader Lease");
  }
}

/** A Lease read, without its spec: what a replace sends back (its resourceVersion makes it conditional). */
function leaseHead(lease: V1Lease): Omit<V1Lease, "spec"> {
  return {
    ...(lease.apiVersion === undefined ? {} : { apiVersion: lease.apiVersion }),
    ...(lease.kind === undefined ? {} : { kind: lease.kind }),
    ...(lease.metadata === undefined ? {} : { metadata: lease.metadata }),
  };
}

// A function call, so TypeScript does not narrow `aborted` across awaits.
function isAborted(signal: AbortSignal): boolean {
  return signal.aborted;
}
