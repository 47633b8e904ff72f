// Runs one async task at a time: triggers during a run coalesce into one more run afterwards, a
// failed run is retried with jittered backoff, and a periodic resync re-runs it anyway (the task
// itself makes no write when nothing changed).
import { backoffDelay, type BackoffOptions } from "../dhcp/kea/backoff.js";
import type { Clock, TimerHandle } from "../util/clock.js";

/** Options of SerialRunner. */
export interface SerialRunnerOptions {
  readonly clock: Clock;
  readonly backoff?: BackoffOptions;
  /** Re-run this often even without triggers; 0 disables. */
  readonly resyncMs: number;
  readonly onError: (error: unknown, attempt: number) => void;
}

/** Coalescing, serialized, retrying task runner. */
export class SerialRunner {
  readonly #task: () => Promise<void>;
  readonly #o: SerialRunnerOptions;
  #running: Promise<void> | undefined;
  #pending = false;
  #attempt = 0;
  #retry: TimerHandle | undefined;
  #resync: TimerHandle | undefined;
  #stopped = false;

  constructor(task: () => Promise<void>, o: SerialRunnerOptions) {
    this.#task = task;
    this.#o = o;
    this.#armResync();
  }

  /** Asks for a run as soon as the current one (if any) finishes. */
  trigger(): void {
    if (this.#stopped) return;
    if (this.#running !== undefined) {
      this.#pending = true;
      return;
    }
    if (this.#retry !== undefined) {
      this.#o.clock.clearTimeout(this.#retry);
      this.#retry = undefined;
    }
    this.#running = this.#runLoop();
  }

  /** No more runs; waits for the current one. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#retry !== undefined) this.#o.clock.clearTimeout(this.#retry);
    if (this.#resync !== undefined) this.#o.clock.clearTimeout(this.#resync);
    await this.#running;
  }

  /** Resolves when no run is in progress. */
  async idle(): Promise<void> {
    while (this.#running !== undefined) await this.#running;
  }

  async #runLoop(): Promise<void> {
    do {
      this.#pending = false;
      try {
        await this.#task();
        this.#attempt = 0;
      } catch (e) {
        this.#attempt++;
        this.#o.onError(e, this.#attempt);
        if (!this.#isPending() && !this.#stopped) {
          this.#retry = this.#o.clock.setTimeout(
            () => {
              this.#retry = undefined;
              this.trigger();
            },
            backoffDelay(this.#attempt, this.#o.backoff ?? { initialMs: 200, maxMs: 30_000 }),
          );
        }
      }
    } while (this.#isPending() && !this.#stopped);
    this.#running = undefined;
  }

  // A method, so TypeScript does not narrow the field across the awaited task.
  #isPending(): boolean {
    return this.#pending;
  }

  #armResync(): void {
    if (this.#o.resyncMs <= 0 || this.#stopped) return;
    this.#resync = this.#o.clock.setTimeout(() => {
      this.#armResync();
      this.trigger();
    }, this.#o.resyncMs);
  }
}
