// Request/reply over a child process's IPC channel: replies are matched by type (in order) or, for
// those carrying one, by id.
import type { ChildProcess } from "node:child_process";

type Reply = { readonly type: string; readonly id?: number };

/** The driver's side of one child process. */
export class Peer<Req, Rep extends Reply> {
  readonly #child: ChildProcess;
  readonly #byType = new Map<string, ((r: Rep) => void)[]>();
  readonly #byId = new Map<string, (r: Rep) => void>();

  constructor(child: ChildProcess) {
    this.#child = child;
    child.on("message", (m: Rep) => {
      if (m.id !== undefined) {
        const key = `${m.type}:${String(m.id)}`;
        const waiter = this.#byId.get(key);
        this.#byId.delete(key);
        waiter?.(m);
        return;
      }
      this.#byType.get(m.type)?.shift()?.(m);
    });
  }

  /** Sends without waiting. */
  send(req: Req): void {
    this.#child.send(req as object);
  }

  /** The next reply of `type`. */
  next<T extends Rep["type"]>(type: T): Promise<Extract<Rep, { type: T }>> {
    return new Promise((resolve) => {
      this.#byType.set(type, [...(this.#byType.get(type) ?? []), resolve as (r: Rep) => void]);
    });
  }

  /** Sends and waits for the next reply of `type`. */
  ask<T extends Rep["type"]>(req: Req, type: T): Promise<Extract<Rep, { type: T }>> {
    const reply = this.next(type);
    this.send(req);
    return reply;
  }

  /** The reply of `type` carrying `id` (undefined after `timeoutMs`). */
  reply<T extends Rep["type"]>(type: T, id: number, timeoutMs: number): Promise<Extract<Rep, { type: T }> | undefined> {
    return new Promise((resolve) => {
      const key = `${type}:${String(id)}`;
      const timer = setTimeout(() => {
        this.#byId.delete(key);
        resolve(undefined);
      }, timeoutMs);
      this.#byId.set(key, (r) => {
        clearTimeout(timer);
        resolve(r as Extract<Rep, { type: T }>);
      });
    });
  }

  /** Ends the child (SIGTERM). */
  kill(): void {
    this.#child.kill();
  }

  /** Resolves when the child exits. */
  exited(): Promise<number | null> {
    return new Promise((resolve) => {
      if (this.#child.exitCode !== null) resolve(this.#child.exitCode);
      else
        this.#child.once("exit", (code) => {
          resolve(code);
        });
    });
  }
}
