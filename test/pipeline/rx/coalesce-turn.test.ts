// coalesceTurn: keyed changes of one turn make one batch (marbles: one frame is one turn), and on
// the real TURN_SCHEDULER, the batch goes out in that same turn's check phase.
import { Subject } from "rxjs";
import { describe, expect, it } from "vitest";
import { coalesceTurn } from "../../../src/pipeline/coalesce-turn.js";
import { marbles } from "./marbles.js";

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe("coalesceTurn (marbles)", () => {
  it("the changes of one frame make one batch, in order; a later frame makes another", () => {
    const scheduler = marbles();
    scheduler.run(({ hot, expectObservable }) => {
      const changes = hot("-(ab)-c-(de)|", { a: "m/1", b: "m/2", c: "m/1", d: "vmi/1", e: "m/3" });
      expectObservable(changes.pipe(coalesceTurn(scheduler))).toBe("-x----y-z---|", {
        x: ["m/1", "m/2"],
        y: ["m/1"],
        z: ["vmi/1", "m/3"],
      });
    });
  });

  it("a batch still open when the source completes goes out before the completion", () => {
    const scheduler = marbles();
    scheduler.run(({ cold, expectObservable }) => {
      expectObservable(cold("-(ab|)").pipe(coalesceTurn(scheduler))).toBe("-(x|)", { x: ["a", "b"] });
    });
  });
});

describe("coalesceTurn (event loop)", () => {
  it("emits once for every change of one turn, not before the turn's own code finished, and again for a later turn", async () => {
    const changes = new Subject<string>();
    const batches: (readonly string[])[] = [];
    const sub = changes.pipe(coalesceTurn()).subscribe((b) => batches.push(b));
    for (let i = 0; i < 20; i++) changes.next(`m/${String(i % 3)}`);
    expect(batches).toHaveLength(0);
    await nextTurn();
    expect(batches.map((b) => b.length)).toEqual([20]);
    await nextTurn();
    expect(batches).toHaveLength(1);
    changes.next("m/9");
    await nextTurn();
    expect(batches).toEqual([expect.any(Array), ["m/9"]]);
    sub.unsubscribe();
  });

  it("a change made from a nextTick of the callback that made the first one joins its batch", async () => {
    const changes = new Subject<string>();
    const batches: (readonly string[])[] = [];
    const sub = changes.pipe(coalesceTurn()).subscribe((b) => batches.push(b));
    // Both before the scheduled emission runs (it waits for the check phase).
    await new Promise<void>((resolve) => {
      setImmediate(() => {
        changes.next("a");
        process.nextTick(() => {
          changes.next("b");
          resolve();
        });
      });
    });
    await nextTurn();
    expect(batches).toEqual([["a", "b"]]);
    sub.unsubscribe();
  });

  it("unsubscribing drops a pending emission", async () => {
    const changes = new Subject<string>();
    let emitted = 0;
    const sub = changes.pipe(coalesceTurn()).subscribe(() => emitted++);
    changes.next("a");
    sub.unsubscribe();
    await nextTurn();
    await nextTurn();
    expect(emitted).toBe(0);
  });
});
