// The running operator's API server going away: every caller that fails to reach it (Lease
// renewals, replica reports and heartbeats, reconcile passes, watches) hands its transport error
// here instead of logging it. The log gets one warning when the API server is lost (failures for a
// second at least, so a connection cut while the API server answers is none), then one
// summary line per interval ("API server unreachable for 1m 25s, 37 attempts (leader Lease, …),
// last error: …"), and one info line when it answers again — as ApiRetry does at start (issue 27,
// finding 3). KubeRest tells it of every request that failed at the transport and every answer;
// only while the last of those was a transport failure is a caller's error taken as the outage's,
// so an error the API server answered with, or a bug, is still the caller's to log.
import { statusCode } from "../../kube/rest.js";
import type { Clock } from "../../util/clock.js";
import type { Logger } from "../../util/logger.js";
import { DEFAULT_API_RETRY_MAX_MS, formatSpan } from "./api-retry.js";

/** Failures for less than this (or the summary interval, if shorter) are not announced. */
const ANNOUNCE_AFTER_MS = 1_000;

/** Options of ApiOutage. */
export interface ApiOutageOptions {
  readonly clock: Clock;
  readonly log: Pick<Logger, "info" | "warn">;
  /** The least time between two summary lines (default `--api-retry-max`'s, 30 s). */
  readonly intervalMs?: number;
}

interface Outage {
  readonly since: number;
  /** When the last line about it was logged; undefined before it is announced. */
  reported: number | undefined;
  attempts: number;
  readonly what: Set<string>;
  lastError: string;
}

/** One API server outage at a time, as the log tells it. */
export class ApiOutage {
  readonly #o: ApiOutageOptions;
  readonly #intervalMs: number;
  /** How long failures must last before the outage is announced. */
  readonly #announceMs: number;
  #outage: Outage | undefined;
  /** The latest request failed at the transport (no answer since). */
  #transportDown = false;

  constructor(o: ApiOutageOptions) {
    this.#o = o;
    this.#intervalMs = Math.max(1, o.intervalMs ?? DEFAULT_API_RETRY_MAX_MS);
    this.#announceMs = Math.min(ANNOUNCE_AFTER_MS, this.#intervalMs);
  }

  /** A request failed at the transport (KubeRest's status 0). */
  transportFailed(): void {
    this.#transportDown = true;
  }

  /** A caller's failed request: true when it is the API server being unreachable, and reported here. */
  unreachable(what: string, e: unknown): boolean {
    if (statusCode(e) !== undefined || !this.#transportDown) return false;
    const now = this.#o.clock.now();
    const error = e instanceof Error ? e.message : String(e);
    const outage = this.#outage ?? {
      since: now,
      reported: undefined,
      attempts: 0,
      what: new Set<string>(),
      lastError: "",
    };
    this.#outage = outage;
    outage.attempts++;
    outage.what.add(what);
    outage.lastError = error;
    const whats = [...outage.what].sort().join(", ");
    if (outage.reported === undefined) {
      // Announced once it lasts: a request cut while another is answered (a restart, a connection
      // reset) is no outage.
      if (now - outage.since < this.#announceMs) return true;
      outage.reported = now;
      this.#o.log.warn(
        { attempts: outage.attempts, err: error },
        `API server unreachable for ${formatSpan(now - outage.since)} (${whats}): ${error}; ` +
          `retrying, one summary line per ${formatSpan(this.#intervalMs)}`,
      );
    } else if (now - outage.reported >= this.#intervalMs) {
      outage.reported = now;
      this.#o.log.warn(
        { attempts: outage.attempts, err: error },
        `API server unreachable for ${formatSpan(now - outage.since)}, ${String(outage.attempts)} attempts ` +
          `(${whats}), last error: ${error}`,
      );
    }
    return true;
  }

  /** The API server answered a request (any status): ends an outage, with one line. */
  answered(): void {
    this.#transportDown = false;
    const outage = this.#outage;
    this.#outage = undefined;
    if (outage?.reported === undefined) return;
    this.#o.log.info(
      { attempts: outage.attempts },
      `API server answered again after ${formatSpan(this.#o.clock.now() - outage.since)}, ` +
        `${String(outage.attempts)} failed attempts`,
    );
  }
}
