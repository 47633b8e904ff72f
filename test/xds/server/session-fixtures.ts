// The session engine's in-process transport, injected clock and recording logger, shared by the
// session suites, and an engine over GROUP's alpha-and-beta snapshot built from them.
import { checkEnvoySnapshot } from "../../../src/envoy/snapshot.js";
import { SnapshotCache } from "../../../src/xds/cache/index.js";
import {
  decodeDeltaRequest,
  decodeSotwRequest,
  serializeResponse,
  type WireResponse,
} from "../../../src/xds/server/codec.js";
import { XdsEngine, type Clock, type StreamCall } from "../../../src/xds/server/index.js";
import type { Logger } from "../../../src/util/logger.js";
import {
  decodeDeltaResponse,
  decodeSotwResponse,
  encodeDeltaRequest,
  encodeSotwRequest,
  type DeltaRequestInit,
  type DeltaResponse,
  type SotwRequestInit,
  type SotwResponse,
} from "../../support/envoy/wire.js";
import { ALPHA, BETA, GROUP, publish, rendered } from "./fixtures.js";

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

/** One line the engine logged. */
export interface Line {
  readonly level: string;
  readonly obj: Record<string, unknown>;
  readonly msg: string;
}

/** A Logger that appends each line to `lines`. */
export function recordingLogger(lines: Line[]): Logger {
  const at =
    (level: string) =>
    (obj: object, msg: string): void => {
      lines.push({ level, obj: obj as Record<string, unknown>, msg });
    };
  return { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}

/** Requests as the engine receives them: encoded to real bytes and decoded. */
export const sotw = (init: SotwRequestInit) => decodeSotwRequest(encodeSotwRequest(init));
export const delta = (init: DeltaRequestInit) => decodeDeltaRequest(encodeDeltaRequest(init));

export const NODE = { id: "envoy-0", cluster: GROUP };
export const ALPHA_API = "clusters-alpha/kube-apiserver:6443";
export const BETA_API = "clusters-beta/kube-apiserver:6443";

/** An engine on a cache holding GROUP's alpha-and-beta snapshot (none when `empty`), logging into `lines`. */
export function sessionRig(
  options: { empty?: boolean; maxStreamAgeMs?: number; maxNamesPerStream?: number; jitter?: number } = {},
) {
  const cache = new SnapshotCache({ check: checkEnvoySnapshot });
  if (options.empty !== true) publish(cache, GROUP, rendered([ALPHA, BETA]));
  const clock = new FakeClock();
  const lines: Line[] = [];
  const engine = new XdsEngine({
    cache,
    clock,
    logger: recordingLogger(lines),
    maxStreamAgeMs: options.maxStreamAgeMs ?? 0,
    maxStreamAgeJitter: options.jitter ?? 0.1,
    ...(options.maxNamesPerStream === undefined ? {} : { maxNamesPerStream: options.maxNamesPerStream }),
  });
  const find = (msg: string) => lines.filter((l) => l.msg === msg);
  return { cache, clock, lines, engine, find };
}
