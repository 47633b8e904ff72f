// Responses shared by the streams of one round of pumps (src/xds/server/shared.ts): the streams
// woken by one snapshot change that send the same thing write one response object, serialized
// once, each with what it would have received alone; a stream's nonces stay unique
// (docs/xds-protocol.md#rule-1). An in-process transport and a clock whose deferral points are
// run by the test, as Node runs setImmediate callbacks: those queued during a round run after it.
import { describe, expect, test } from "vitest";
import { SnapshotCache } from "../../../src/xds/cache/index.js";
import type { TypeSnapshot } from "../../../src/xds/cache/snapshot.js";
import {
  decodeDeltaRequest,
  decodeSotwRequest,
  serializeResponse,
  WireResponse,
} from "../../../src/xds/server/codec.js";
import { XdsEngine, type Clock, type StreamCall } from "../../../src/xds/server/index.js";
import { SharedResponses, type ShareKey } from "../../../src/xds/server/shared.js";
import { Subscription } from "../../../src/xds/server/subscription.js";
import { CLUSTER_TYPE_URL, LISTENER_TYPE_URL } from "../../../src/xds/resource/protos.js";
import {
  decodeDeltaResponse,
  decodeSotwResponse,
  encodeDeltaRequest,
  encodeSotwRequest,
} from "../../support/envoy/wire.js";
import { ALPHA, BETA, GROUP, publish, rendered } from "./fixtures.js";
import { checkEnvoySnapshot } from "../../../src/envoy/snapshot.js";

class RoundClock implements Clock {
  #queue: (() => void)[] = [];
  now(): number {
    return 1_000;
  }
  setTimeout(): object {
    return {};
  }
  clearTimeout(): void {
    /* no timers in these tests */
  }
  random(): number {
    return 0.5;
  }
  defer(fn: () => void): void {
    this.#queue.push(fn);
  }
  /** Runs what was deferred before this call; what those defer runs in the next round. */
  round(): void {
    const queued = this.#queue;
    this.#queue = [];
    for (const fn of queued) fn();
  }
  /** Rounds until nothing is deferred. */
  settle(): void {
    while (this.#queue.length > 0) this.round();
  }
}

class RecordingCall implements StreamCall {
  readonly written: WireResponse[] = [];
  readonly peer = "in-process";
  write(response: WireResponse): boolean {
    this.written.push(response);
    return true;
  }
  end(): void {
    /* not ended in these tests */
  }
  fail(): void {
    /* not failed in these tests */
  }
}

const listenerA = rendered([ALPHA, BETA]);
const listenerB = rendered([ALPHA, { ...BETA, workers: ["192.168.20.77/32"] }]);

function rig() {
  const cache = new SnapshotCache({ check: checkEnvoySnapshot });
  publish(cache, GROUP, listenerA);
  const clock = new RoundClock();
  const engine = new XdsEngine({ cache, clock, maxStreamAgeMs: 0 });
  const open = (protocol: "sotw" | "delta", id: string) => {
    const call = new RecordingCall();
    const session = engine.openSession(call, protocol);
    if (protocol === "sotw")
      session.handleSotw(
        decodeSotwRequest(encodeSotwRequest({ node: { id, cluster: GROUP }, type_url: LISTENER_TYPE_URL })),
      );
    else
      session.handleDelta(
        decodeDeltaRequest(encodeDeltaRequest({ node: { id, cluster: GROUP }, type_url: LISTENER_TYPE_URL })),
      );
    return { call, session };
  };
  return { cache, clock, engine, open };
}

const sotwOf = (w: WireResponse | undefined) => decodeSotwResponse(serializeResponse(w ?? new WireResponse([], 0)));
const deltaOf = (w: WireResponse | undefined) => decodeDeltaResponse(serializeResponse(w ?? new WireResponse([], 0)));

describe("streams of one group woken by one change share the response", () => {
  test("SotW and Delta streams each write one response object per protocol, carrying the new listener", () => {
    const { cache, clock, engine, open } = rig();
    const streams = [open("sotw", "s0"), open("sotw", "s1"), open("delta", "d0"), open("delta", "d1")];
    clock.settle();
    const ack = () => {
      for (const { call, session } of streams.slice(0, 2)) {
        const r = sotwOf(call.written.at(-1));
        session.handleSotw(
          decodeSotwRequest(
            encodeSotwRequest({ type_url: LISTENER_TYPE_URL, version_info: r.versionInfo, response_nonce: r.nonce }),
          ),
        );
      }
      for (const { call, session } of streams.slice(2)) {
        const r = deltaOf(call.written.at(-1));
        session.handleDelta(
          decodeDeltaRequest(encodeDeltaRequest({ type_url: LISTENER_TYPE_URL, response_nonce: r.nonce })),
        );
      }
      clock.settle();
    };
    ack();
    publish(cache, GROUP, listenerB);
    clock.settle();
    const [s0, s1, d0, d1] = streams.map((s) => s.call.written);
    expect([s0?.length, s1?.length, d0?.length, d1?.length]).toEqual([2, 2, 2, 2]);
    expect(s1?.[1]).toBe(s0?.[1]);
    expect(d1?.[1]).toBe(d0?.[1]);
    expect(d0?.[1]).not.toBe(s0?.[1]);
    // The bytes are made once and are what a stream alone is sent.
    expect(serializeResponse(s0?.[1] as WireResponse)).toBe(serializeResponse(s1?.[1] as WireResponse));
    const version = cache.getSnapshot(GROUP)?.types.get(LISTENER_TYPE_URL)?.version;
    const sotw = sotwOf(s0?.[1]);
    expect(sotw.versionInfo).toBe(version);
    expect(sotw.resources.map((r) => r.name)).toEqual(listenerB.listeners.map((l) => (l as { name: string }).name));
    const alone = open("sotw", "late");
    clock.settle();
    expect(alone.call.written).toHaveLength(1);
    const single = sotwOf(alone.call.written[0]);
    expect(single.resources.map((r) => r.value)).toEqual(sotw.resources.map((r) => r.value));
    expect(single.nonce).not.toBe(sotw.nonce); // another round: not shared
    const delta = deltaOf(d0?.[1]);
    const changed = listenerB.listeners.filter((l, i) => JSON.stringify(l) !== JSON.stringify(listenerA.listeners[i]));
    expect(delta.resources.map((r) => r.name)).toEqual(changed.map((l) => (l as { name: string }).name));
    // Every stream acknowledges the shared nonce as its own.
    ack();
    const acked = engine.status
      .streams()
      .filter((s) => s.node.id !== "late")
      .map((s) => s.types.every((t) => t.lastSent !== undefined && t.lastAcked?.nonce === t.lastSent.nonce));
    expect(acked).toEqual([true, true, true, true]);
    engine.close();
  });
});

describe("SharedResponses: a shared nonce is never one a stream already sent", () => {
  const cache = new SnapshotCache({ check: checkEnvoySnapshot });
  publish(cache, GROUP, listenerA);
  const typeSnap = cache.getSnapshot(GROUP)?.types.get(LISTENER_TYPE_URL) as TypeSnapshot;
  const other = cache.getSnapshot(GROUP)?.types.get(CLUSTER_TYPE_URL) as TypeSnapshot;
  const wildcard = Subscription.NONE.sotw([], true, true).subscription;
  const key: ShareKey = { typeSnap, protocol: "sotw", subscription: wildcard, held: undefined };
  const made = { nonce: { seq: 7, text: "n-7" }, response: new WireResponse([], 0) };

  test("found for the same inputs while the round lasts, by a stream whose nonces are all older", () => {
    const deferred: (() => void)[] = [];
    const shared = new SharedResponses((fn) => deferred.push(fn));
    shared.add(key, made);
    expect(shared.find({ ...key }, 6)).toMatchObject(made);
    expect(shared.find(key, 7)).toBeUndefined(); // the stream sent nonce 7 (or newer) already
    expect(shared.find(key, 9)).toBeUndefined();
    expect(deferred).toHaveLength(1);
    deferred[0]?.();
    expect(shared.find(key, 0)).toBeUndefined();
  });

  test("any other input is another response", () => {
    const shared = new SharedResponses(() => undefined);
    shared.add(key, made);
    const narrower = Subscription.NONE.sotw(["only-this"], true, true).subscription;
    expect(shared.find({ ...key, typeSnap: other }, 0)).toBeUndefined();
    expect(shared.find({ ...key, protocol: "delta" }, 0)).toBeUndefined();
    expect(shared.find({ ...key, subscription: narrower }, 0)).toBeUndefined();
    expect(shared.find({ ...key, held: new Map() }, 0)).toBeUndefined();
  });
});
