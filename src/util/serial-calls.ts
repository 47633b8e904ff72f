// Calls made one after another: each starts once the previous one has settled, resolved or
// rejected, so a failure never blocks the next. The chain settles to nothing after each call,
// so it never holds a result (a manifest read's keyed changes, a parse's objects) until the next.
const settled = (): undefined => undefined;

export class SerialCalls {
  #tail: Promise<unknown> = Promise.resolve();

  /** `call`'s result, once every call made before it has settled. */
  run<T>(call: () => Promise<T>): Promise<T> {
    const next = this.#tail.then(call, call);
    this.#tail = next.then(settled, settled);
    return next;
  }
}
