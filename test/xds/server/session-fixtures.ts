// The session engine's in-process transport and injected clock, shared by the session suites.
import { serializeResponse, type WireResponse } from "../../../src/xds/server/codec.js";
import type { Clock, StreamCall } from "../../../src/xds/server/index.js";
import {
  decodeDeltaResponse,
  decodeSotwResponse,
  type DeltaResponse,
  type SotwResponse,
} from "../../support/envoy/wire.js";

/** A stream's transport that keeps every response written (decoded from real bytes on reading). */
export class FakeCall implements StreamCall {
  readonly raw: WireResponse[] = [];
  ended = 0;
  failed: { code: number; details: string }[] = [];
  readonly peer = "ipv4:10.0.0.9:4242";
  readonly identity?: string;
  constructor(identity?: string) {
    if (identity !== undefined) this.identity = identity;
  }
  accept = true;
  write(response: WireResponse): boolean {
    this.raw.push(response);
    return this.accept;
  }
  get sotw(): SotwResponse[] {
    return this.raw.map((r) => decodeSotwResponse(serializeResponse(r)));
  }
  get delta(): DeltaResponse[] {
    return this.raw.map((r) => decodeDeltaResponse(serializeResponse(r)));
  }
  end(): void {
    this.ended += 1;
  }
  fail(code: number, details: string): void {
    this.failed.push({ code, details });
  }
}

/** A clock whose deferred work runs at once, or when flushed (`queue`). */
export class FakeClock implements Clock {
  t = 1_000;
  rnd = 0.5;
  queue = false;
  deferred: (() => void)[] = [];
  timers: { at: number; fn: () => void; cleared: boolean }[] = [];
  now(): number {
    return this.t;
  }
  setTimeout(fn: () => void, ms: number): object {
    const timer = { at: this.t + ms, fn, cleared: false };
    this.timers.push(timer);
    return timer;
  }
  clearTimeout(handle: object): void {
    (handle as { cleared: boolean }).cleared = true;
  }
  random(): number {
    return this.rnd;
  }
  defer(fn: () => void): void {
    if (this.queue) this.deferred.push(fn);
    else fn();
  }
  flush(): void {
    for (const fn of this.deferred.splice(0)) fn();
  }
  /** Runs the timers due by now, each once; the others stay (a cleared one is dropped). */
  advance(ms: number): void {
    this.t += ms;
    for (const timer of this.timers.splice(0)) {
      if (!timer.cleared && timer.at <= this.t) timer.fn();
      else if (!timer.cleared) this.timers.push(timer);
    }
  }
}
