// Applies complete Kea Dhcp4 configurations through the control socket: config-test, then
// config-set, then config-write, so Kea only ever runs a configuration it has accepted and a
// restarted Kea comes back with it. Used in-process by `oooi serve --kea-socket` and by the
// dhcp-agent sidecar, which turns the result into an xDS ACK or NACK.
import { performance } from "node:perf_hooks";
import { backoffDelay, realTimers, type BackoffOptions, type Timers } from "../util/backoff.js";
import { configHash } from "./kea/canonical.js";
import { KeaControlClient, type KeaCommander } from "./kea/client.js";
import { KeaResultError, KeaUnsupportedError, isTransient } from "./kea/errors.js";
import { addressCapacity, countActiveLeases, type LeaseCounts } from "./kea/leases.js";

/** A complete kea-dhcp4 configuration (the argument of config-test / config-set). */
export interface KeaConfig {
  readonly Dhcp4: object;
}

/** The outcome of one apply() call. */
export type ApplyResult =
  /** Kea runs the configuration. `persisted` false: config-write failed (`text` says why), so a Kea restart would lose it. */
  | {
      readonly status: "applied";
      readonly hash: string;
      readonly persisted: boolean;
      readonly text?: string;
      readonly setAt: number;
    }
  /** Kea already runs exactly this configuration (same canonical JSON, same Kea process); nothing was sent. */
  | { readonly status: "unchanged"; readonly hash: string }
  /** Kea refused it (`text` is Kea's message) and keeps serving the previous configuration. */
  | {
      readonly status: "rejected";
      readonly hash: string;
      readonly command: string;
      readonly result: number;
      readonly text: string;
    }
  /** A newer configuration was submitted before this one was sent; only the newest is applied. */
  | { readonly status: "superseded" }
  /** close() was called before the configuration reached Kea. */
  | { readonly status: "stopped" };

/** Progress worth logging: waiting for Kea's socket, and what each attempt did. */
export type ApplierEvent =
  | { readonly type: "waiting"; readonly attempt: number; readonly delayMs: number; readonly error: string }
  | { readonly type: "learned"; readonly controlSocket: unknown; readonly interfaces: readonly string[] | undefined }
  | { readonly type: "result"; readonly result: ApplyResult };

/** Options of KeaApplier; every field has a production default. */
export interface KeaApplierOptions {
  /** Per-command limit; default 10 s. Ignored when `client` is given. */
  readonly commandTimeoutMs?: number;
  /** Use this command channel instead of a new KeaControlClient (share one per socket). */
  readonly client?: KeaCommander;
  readonly backoff?: BackoffOptions;
  readonly timers?: Timers;
  readonly random?: () => number;
  /** Milliseconds since the Unix epoch (sub-millisecond resolution by default). */
  readonly now?: () => number;
  readonly onEvent?: (event: ApplierEvent) => void;
  /**
   * Keep the lease database Kea runs with instead of the rendered one (`serve --kea-socket`
   * without `--kea-lease-file`): a Kea someone started with its own lease file keeps its leases.
   */
  readonly keepLeaseDatabase?: boolean;
}

/** What Kea was started with and must keep: the channel we talk over and where it serves. */
export interface Pinned {
  readonly controlSocket: unknown;
  /** undefined when Kea was started listening nowhere: then the applied config chooses. */
  readonly interfaces: readonly string[] | undefined;
  /** Kea's own `lease-database`, kept when keepLeaseDatabase is set. */
  readonly leaseDatabase?: unknown;
  /** Kea was already serving subnets (from its persisted config) when the applier first reached it. */
  readonly serving: boolean;
}

interface Job {
  readonly config: KeaConfig;
  readonly resolve: (r: ApplyResult) => void;
}

/**
 * Drives one Kea through its control socket. apply() calls coalesce: while one is in progress
 * only the newest pending configuration is applied next, the others resolve "superseded".
 * While the socket is missing it retries with jittered backoff, always with the newest config.
 */
export class KeaApplier {
  private readonly client: KeaCommander;
  private readonly timers: Timers;
  private readonly random: () => number;
  private readonly now: () => number;
  private pinned: Pinned | undefined;
  /** The last configuration Kea accepted from us, and the Kea process (pid) that did. */
  private last: { readonly hash: string; readonly pid: number | undefined; readonly dhcp4: object } | undefined;
  private pending: Job | undefined;
  private draining = false;
  private stopped = false;
  private wake: (() => void) | undefined;

  constructor(
    readonly socketPath: string,
    private readonly options: KeaApplierOptions = {},
  ) {
    this.client =
      options.client ??
      new KeaControlClient(
        socketPath,
        options.commandTimeoutMs === undefined ? {} : { timeoutMs: options.commandTimeoutMs },
      );
    this.timers = options.timers ?? realTimers;
    this.random = options.random ?? Math.random;
    this.now = options.now ?? (() => performance.timeOrigin + performance.now());
  }

  /** Applies a complete configuration; resolves once Kea has answered for it (or it was superseded). */
  apply(config: KeaConfig): Promise<ApplyResult> {
    return new Promise((resolve) => {
      if (this.stopped) {
        resolve({ status: "stopped" });
        return;
      }
      this.pending?.resolve({ status: "superseded" });
      this.pending = {
        config,
        resolve: (r) => {
          this.emit({ type: "result", result: r });
          resolve(r);
        },
      };
      if (!this.draining) void this.drain();
    });
  }

  /** Hash of the configuration Kea last accepted from this applier, if any. */
  get appliedHash(): string | undefined {
    return this.last?.hash;
  }

  /**
   * DHCPServer status counters: held leases from lease4-get-all (result 3 = none) and the
   * address capacity of the running configuration (see kea/leases.ts for the definitions).
   */
  async leaseCounts(): Promise<LeaseCounts> {
    let leases: unknown = [];
    try {
      const answer = await this.client.command("lease4-get-all");
      leases = (answer.arguments as { leases?: unknown } | undefined)?.leases;
    } catch (err) {
      if (!(err instanceof KeaResultError && err.result === 3)) throw err;
    }
    const activeLeases = countActiveLeases(leases, Math.floor(this.now() / 1000));
    let dhcp4 = this.last?.dhcp4;
    if (dhcp4 === undefined) {
      const got = await this.client.command("config-get");
      dhcp4 = (got.arguments as { Dhcp4?: object } | undefined)?.Dhcp4 ?? {};
    }
    return { activeLeases, totalLeases: addressCapacity(dhcp4) };
  }

  /** Stops retrying; pending and waiting applies resolve "stopped". A command already sent finishes. */
  close(): void {
    this.stopped = true;
    this.pending?.resolve({ status: "stopped" });
    this.pending = undefined;
    this.wake?.();
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      let job = this.takePending();
      let attempt = 0;
      while (job !== undefined) {
        let result: ApplyResult | undefined;
        try {
          result = await this.attempt(job.config);
        } catch (err) {
          if (!isTransient(err)) {
            // A refusal outside test/set (e.g. config-get unsupported): report, do not loop.
            const e = err as Error;
            result = {
              status: "rejected",
              hash: "",
              command: err instanceof KeaResultError ? err.command : "apply",
              result: err instanceof KeaResultError ? err.result : -1,
              text: e.message,
            };
          } else {
            attempt++;
            const delayMs = backoffDelay(attempt, this.options.backoff, this.random);
            this.emit({ type: "waiting", attempt, delayMs, error: (err as Error).message });
            await this.sleep(delayMs);
            if (this.stopped) {
              job.resolve({ status: "stopped" });
              return;
            }
            // Retry with the newest configuration, not the one that could not be delivered.
            const newer = this.takePending();
            if (newer !== undefined) {
              job.resolve({ status: "superseded" });
              job = newer;
            }
            continue;
          }
        }
        attempt = 0;
        job.resolve(result);
        job = this.stopped ? undefined : this.takePending();
      }
    } finally {
      this.draining = false;
    }
  }

  private takePending(): Job | undefined {
    const job = this.pending;
    this.pending = undefined;
    return job;
  }

  private async attempt(config: KeaConfig): Promise<ApplyResult> {
    if ((config.Dhcp4 as unknown) === null || typeof config.Dhcp4 !== "object" || Array.isArray(config.Dhcp4)) {
      return {
        status: "rejected",
        hash: "",
        command: "apply",
        result: 1,
        text: "the configuration has no Dhcp4 object",
      };
    }
    const pid = await this.keaPid();
    this.pinned ??= await this.learn();
    // A Kea restarted from its persisted config serves every reservation on its own; nothing we
    // send before our first success may take that away with an empty config.
    if (this.last === undefined && this.pinned.serving && subnetCount(config.Dhcp4) === 0) {
      return {
        status: "rejected",
        hash: "",
        command: "apply",
        result: 1,
        text: "refusing to replace the subnets Kea serves with a configuration that has none",
      };
    }
    const dhcp4 = overlay(config.Dhcp4, this.pinned);
    const full = { Dhcp4: dhcp4 };
    const hash = configHash(full);
    if (this.last !== undefined && this.last.hash === hash && this.last.pid === pid)
      return { status: "unchanged", hash };

    for (const command of ["config-test", "config-set"] as const) {
      try {
        await this.client.command(command, full);
      } catch (err) {
        if (err instanceof KeaResultError)
          return { status: "rejected", hash, command, result: err.result, text: err.text };
        throw err;
      }
    }
    const setAt = this.now();
    this.last = { hash, pid, dhcp4 };
    try {
      // No filename: Kea writes the file it was started with (-c), so a restart keeps this config.
      await this.client.command("config-write");
      return { status: "applied", hash, persisted: true, setAt };
    } catch (err) {
      if (err instanceof KeaResultError) return { status: "applied", hash, persisted: false, text: err.text, setAt };
      throw err;
    }
  }

  /** Kea's process id, which changes when Kea restarts; undefined if status-get is unsupported. */
  private async keaPid(): Promise<number | undefined> {
    try {
      const answer = await this.client.command("status-get");
      const pid = (answer.arguments as { pid?: unknown } | undefined)?.pid;
      return typeof pid === "number" ? pid : undefined;
    } catch (err) {
      if (err instanceof KeaUnsupportedError) return undefined;
      throw err;
    }
  }

  /** Reads the control socket and interfaces Kea runs with, once: they are kept on every config. */
  private async learn(): Promise<Pinned> {
    const answer = await this.client.command("config-get");
    const dhcp4 = (answer.arguments as { Dhcp4?: Record<string, unknown> } | undefined)?.Dhcp4 ?? {};
    const ifaces = (dhcp4["interfaces-config"] as { interfaces?: unknown } | undefined)?.interfaces;
    const list = Array.isArray(ifaces) ? ifaces.filter((i): i is string => typeof i === "string") : [];
    const pinned: Pinned = {
      controlSocket: dhcp4["control-socket"],
      interfaces: list.length === 0 ? undefined : list,
      ...(this.options.keepLeaseDatabase === true && dhcp4["lease-database"] !== undefined
        ? { leaseDatabase: dhcp4["lease-database"] }
        : {}),
      serving: subnetCount(dhcp4) > 0,
    };
    this.emit({ type: "learned", controlSocket: pinned.controlSocket, interfaces: pinned.interfaces });
    return pinned;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const handle = this.timers.setTimeout(() => {
        this.wake = undefined;
        resolve();
      }, ms);
      this.wake = () => {
        this.wake = undefined;
        this.timers.clearTimeout(handle);
        resolve();
      };
    });
  }

  private emit(event: ApplierEvent): void {
    this.options.onEvent?.(event);
  }
}

/**
 * The configuration as sent: the caller's, with Kea's own control socket and (when Kea was
 * started listening somewhere) its interfaces, so no config can cut the applier off; and with
 * keepLeaseDatabase, Kea's own lease database.
 */
export function overlay(dhcp4: object, pinned: Pinned): object {
  const out: Record<string, unknown> = { ...(dhcp4 as Record<string, unknown>) };
  if (pinned.controlSocket !== undefined) out["control-socket"] = pinned.controlSocket;
  if (pinned.leaseDatabase !== undefined) out["lease-database"] = pinned.leaseDatabase;
  if (pinned.interfaces !== undefined) {
    const current = out["interfaces-config"];
    const base = current !== null && typeof current === "object" ? (current as Record<string, unknown>) : {};
    out["interfaces-config"] = { ...base, interfaces: [...pinned.interfaces] };
  }
  return out;
}

function subnetCount(dhcp4: object): number {
  const subnets = (dhcp4 as { subnet4?: unknown }).subnet4;
  return Array.isArray(subnets) ? subnets.length : 0;
}
