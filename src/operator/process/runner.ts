// Runs one async task at a time: triggers during a run coalesce into one more run afterwards, runs
// start at most once per minimum interval (the triggers inside it make one run at its end), a
// failed run is retried with jittered backoff, and a periodic resync re-runs it anyway (the task
// itself makes no write when nothing changed).
import { backoffDelay, type BackoffOptions } from "../../util/backoff.js";
import type { Clock, TimerHandle } from "../../util/clock.js";

/** Options of SerialRunner. */
export interface SerialRunnerOptions {
  readonly clock: Clock;
  readonly backoff?: BackoffOptions;
  /** Re-run this often even without triggers; 0 disables. */
  readonly resyncMs: number;
  /**
   * At least this long between the starts of two runs (default 0): a trigger sooner waits for the
   * interval's end, and every trigger meanwhile joins that one run. A run that walks everything
   * then costs its share of the CPU at most once per interval however fast events come.
   */
  readonly minIntervalMs?: number;
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
  /** The run due at the end of the minimum interval. */
  #spaced: TimerHandle | undefined;
  #lastStart = -Infinity;
  #stopped = false;

  constructor(task: () => Promise<void>, o: SerialRunnerOptions) {
    this.#task = task;
    this.#o = o;
    this.#armResync();
  }

  /** Asks for a run as soon as the current one (if any) finishes and the minimum interval allows. */
  trigger(): void {
    if (this.#stopped) return;
    if (this.#running !== undefined) {
      this.#pending = true;
      return;
    }
    if (this.#spaced !== undefined) return;
    const wait = this.#lastStart + (this.#o.minIntervalMs ?? 0) - this.#o.clock.now();
    if (wait > 0) {
      this.#spaced = this.#o.clock.setTimeout(() => {
        this.#spaced = undefined;
        this.trigger();
      }, wait);
      return;
    }
    if (this.#retry !== undefined) {
      this.#o.clock.clearTimeout(this.#retry);
      this.#retry = undefined;
    }
    this.#running = this.#run();
  }

  /** No more runs; waits for the current one. */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const t of [this.#retry, this.#resync, this.#spaced]) if (t !== undefined) this.#o.clock.clearTimeout(t);
    await this.#running;
  }

  async #run(): Promise<void> {
    this.#pending = false;
    this.#lastStart = this.#o.clock.now();
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
    this.#running = undefined;
    if (this.#isPending()) this.trigger();
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
