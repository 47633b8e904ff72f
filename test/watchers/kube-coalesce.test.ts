// ClusterWatcher's default coalescing (no window): changes of one event-loop turn make one
// snapshot, emitted in that same turn's check phase; a change in a later turn makes another.
import { Subject } from "rxjs";
import { describe, expect, it } from "vitest";
import { coalesceTurn } from "../../src/watchers/kube/cluster.js";

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe("coalesceTurn", () => {
  it("emits once for every change of one turn, not before the turn's own code finished, and again for a later turn", async () => {
    const changes = new Subject<void>();
    let emitted = 0;
    const sub = changes.pipe(coalesceTurn()).subscribe(() => emitted++);
    for (let i = 0; i < 20; i++) changes.next();
    expect(emitted).toBe(0);
    await nextTurn();
    expect(emitted).toBe(1);
    await nextTurn();
    expect(emitted).toBe(1);
    changes.next();
    await nextTurn();
    expect(emitted).toBe(2);
    sub.unsubscribe();
  });

  it("a change made from a nextTick of the callback that made the first one joins its snapshot", async () => {
    const changes = new Subject<void>();
    let emitted = 0;
    const sub = changes.pipe(coalesceTurn()).subscribe(() => emitted++);
    // Both before the scheduled emission runs (it waits for the check phase).
    await new Promise<void>((resolve) => {
      setImmediate(() => {
        changes.next();
        process.nextTick(() => {
          changes.next();
          resolve();
        });
      });
    });
    await nextTurn();
    expect(emitted).toBe(1);
    sub.unsubscribe();
  });

  it("unsubscribing drops a pending emission", async () => {
    const changes = new Subject<void>();
    let emitted = 0;
    const sub = changes.pipe(coalesceTurn()).subscribe(() => emitted++);
    changes.next();
    sub.unsubscribe();
    await nextTurn();
    await nextTurn();
    expect(emitted).toBe(0);
  });
});
