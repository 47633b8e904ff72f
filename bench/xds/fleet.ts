// The benchmark's side of its client processes: forks them, spreads streams over them, and keeps
// every stream's latest response per type (with its receive time) as the clients report them.
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { FromClients, Receipt, StreamSpec, ToClients } from "./protocol.js";

/** The latest response of one type on one stream. */
export interface Latest {
  readonly version: string;
  /** Receive time (nowMs, system-wide monotonic). */
  readonly at: number;
  readonly bytes: number;
  readonly count: number;
}

type Waiter = { readonly ready: () => boolean; readonly resolve: () => void };

/** Client processes and what their streams received. */
export class Fleet {
  readonly #children: ChildProcess[];
  readonly #latest = new Map<number, Map<number, Latest>>();
  readonly #listeners = new Set<(r: Receipt) => void>();
  #waiters: Waiter[] = [];
  #closed = 0;
  /** Streams that ended, with their status (a healthy run has none until close). */
  readonly ended: { id: number; code: number; details: string }[] = [];

  private constructor(processes: number) {
    const script = fileURLToPath(new URL("./clients.js", import.meta.url));
    this.#children = Array.from({ length: processes }, () => {
      const child = fork(script, [], { execArgv: [], stdio: ["ignore", "inherit", "inherit", "ipc"] });
      child.on("message", (m: FromClients) => {
        this.#onMessage(m);
      });
      return child;
    });
  }

  /** Forks `processes` client processes. */
  static start(processes: number): Fleet {
    return new Fleet(processes);
  }

  /** Opens streams, spread round-robin over the processes by stream id. */
  open(specs: readonly StreamSpec[]): void {
    const n = this.#children.length;
    this.#children.forEach((child, k) => {
      const mine = specs.filter((s) => s.id % n === k);
      if (mine.length > 0) this.#send(child, { op: "open", streams: mine });
    });
  }

  /** The latest response of type `code` on stream `id`. */
  latest(id: number, code: number): Latest | undefined {
    return this.#latest.get(id)?.get(code);
  }

  /** Calls `fn` for every receipt from now on; returns the unsubscribe function. */
  onReceipt(fn: (r: Receipt) => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  /** Resolves once `ready()` holds (checked after every report); rejects after `timeoutMs`. */
  async until(ready: () => boolean, timeoutMs: number, what: string): Promise<void> {
    if (ready()) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
        reject(
          new Error(
            `timed out after ${String(timeoutMs)} ms waiting for ${what}${this.ended.length > 0 ? ` (${String(this.ended.length)} streams ended, first: ${JSON.stringify(this.ended[0])})` : ""}`,
          ),
        );
      }, timeoutMs);
      const waiter: Waiter = {
        ready,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      this.#waiters.push(waiter);
    });
  }

  /** Cancels every stream and waits until each process has closed its channels. */
  async closeStreams(): Promise<void> {
    const target = this.#closed + this.#children.length;
    for (const c of this.#children) this.#send(c, { op: "close" });
    await this.until(() => this.#closed >= target, 30_000, "client processes to close their streams");
    this.#latest.clear();
  }

  /** Ends the client processes. */
  async stop(): Promise<void> {
    await Promise.all(
      this.#children.map(
        (c) =>
          new Promise<void>((resolve) => {
            if (c.exitCode !== null) {
              resolve();
              return;
            }
            c.once("exit", () => {
              resolve();
            });
            this.#send(c, { op: "exit" });
          }),
      ),
    );
  }

  #send(child: ChildProcess, msg: ToClients): void {
    child.send(msg);
  }

  #onMessage(m: FromClients): void {
    if (m.op === "receipts") {
      for (const r of m.receipts) {
        const [id, code, version, at, bytes, count] = r;
        let types = this.#latest.get(id);
        if (!types) this.#latest.set(id, (types = new Map<number, Latest>()));
        types.set(code, { version, at, bytes, count });
        for (const l of this.#listeners) l(r);
      }
    } else if (m.op === "ended") {
      this.ended.push({ id: m.id, code: m.code, details: m.details });
    } else {
      this.#closed += 1;
    }
    const ready = this.#waiters.filter((w) => w.ready());
    if (ready.length === 0) return;
    this.#waiters = this.#waiters.filter((w) => !ready.includes(w));
    for (const w of ready) w.resolve();
  }
}

/** Streams that ended during a run, counted by "code details" (a healthy run has none). */
export function endedSummary(fleet: Fleet): { streams_ended_by_status?: Record<string, number> } {
  if (fleet.ended.length === 0) return {};
  const by: Record<string, number> = {};
  for (const e of fleet.ended) {
    const key = `${String(e.code)} ${e.details}`;
    by[key] = (by[key] ?? 0) + 1;
  }
  return { streams_ended_by_status: by };
}
