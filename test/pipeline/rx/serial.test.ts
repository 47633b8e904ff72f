// serial: one pass at a time; inputs during a pass make one trailing pass with the latest of them;
// the running pass hears that it was superseded.
import { map, of, type Observable } from "rxjs";
import { describe, expect, it } from "vitest";
import { serial } from "../../../src/pipeline/serial.js";
import { marbles } from "./marbles.js";

describe("serial", () => {
  it("inputs during a pass wait; only the latest of them runs, when the pass ends", () => {
    const scheduler = marbles();
    scheduler.run(({ hot, cold, expectObservable }) => {
      const inputs = hot("a-bcd------e---|");
      // Each pass takes 5 frames and then reports its input.
      const pass = (v: string): Observable<string> => cold("-----x|").pipe(map(() => v));
      expectObservable(inputs.pipe(serial(pass))).toBe("-----a-----d-----e|");
    });
  });

  it("a pass learns it was superseded once a newer input waits (and a later subscriber hears it too)", () => {
    const scheduler = marbles();
    scheduler.run(({ hot, cold, expectObservable }) => {
      const inputs = hot("a--b");
      const heard: string[] = [];
      const pass = (v: string, superseded: Observable<void>): Observable<string> => {
        superseded.subscribe(() => heard.push(v));
        return cold("------x|").pipe(map(() => v));
      };
      expectObservable(inputs.pipe(serial(pass))).toBe("------a------b");
      scheduler.flush();
      expect(heard).toEqual(["a"]);
    });
  });

  it("a pass that ends at once leaves room for the next input at once", () => {
    const scheduler = marbles();
    scheduler.run(({ hot, expectObservable }) => {
      expectObservable(hot("ab-c|").pipe(serial((v: string) => of(v)))).toBe("ab-c|");
    });
  });
});
