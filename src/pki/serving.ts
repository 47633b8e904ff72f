// The xDS server's own certificate, issued in memory by each replica from the shared CA (no key
// leaves the process) and re-issued at two thirds of its lifetime on the injected clock. The holder
// hands each new certificate to its server credentials: new connections use it, open streams keep
// theirs, nothing restarts.
import type { Clock, TimerHandle } from "../util/clock.js";
import type { IssuedCertificate } from "./issue.js";
import { rotationDueAt } from "./rotation.js";
import { issueServing, type OperatorCa } from "./store.js";

export interface ServingRotationOptions {
  readonly ca: OperatorCa;
  readonly dnsNames: readonly string[];
  readonly clock: Clock;
  /** Called with every certificate after the first (which start() returns). */
  readonly onRotate: (cert: IssuedCertificate) => void;
  /** A failed re-issue is retried after this long (default 1 min); the current certificate stays. */
  readonly retryMs?: number;
  readonly onError?: (e: Error) => void;
}

/** Issues the first serving certificate and keeps replacing it until stop(). */
export class ServingRotation {
  readonly #o: ServingRotationOptions;
  #timer: TimerHandle | undefined;
  #stopped = false;

  constructor(options: ServingRotationOptions) {
    this.#o = options;
  }

  /** The first certificate; its successor is scheduled at two thirds of its lifetime. */
  async start(): Promise<IssuedCertificate> {
    const first = await issueServing(this.#o.ca, this.#o.dnsNames, this.#o.clock.now());
    this.#schedule(rotationDueAt(first) - this.#o.clock.now());
    return first;
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) this.#o.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #schedule(ms: number): void {
    if (this.#stopped) return;
    this.#timer = this.#o.clock.setTimeout(
      () => {
        void this.#rotate();
      },
      Math.max(0, ms),
    );
  }

  async #rotate(): Promise<void> {
    try {
      const next = await issueServing(this.#o.ca, this.#o.dnsNames, this.#o.clock.now());
      if (this.#stopped) return;
      this.#o.onRotate(next);
      this.#schedule(rotationDueAt(next) - this.#o.clock.now());
    } catch (e) {
      this.#o.onError?.(e as Error);
      this.#schedule(this.#o.retryMs ?? 60_000);
    }
  }
}
