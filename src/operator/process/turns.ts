// A reconcile pass's long synchronous stretches give the event loop a turn now and then, so a
// watch event read meanwhile is rendered and published (src/operator/process/run.ts) without waiting for
// the rest of the pass: the pass is not in a hurry, a change's way to Envoy is.

/** One turn of the event loop: setImmediate runs after the I/O callbacks pending now (watch chunks). */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Counts steps of a loop; due() once every `every` steps. */
export class Turns {
  readonly #every: number;
  #steps = 0;

  constructor(every: number) {
    this.#every = every;
  }

  /** True every `every`-th call: the caller awaits nextTurn() then. */
  due(): boolean {
    if (++this.#steps < this.#every) return false;
    this.#steps = 0;
    return true;
  }
}
