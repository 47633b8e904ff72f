// distinctRenderings: a rendering whose Infra renderings are the same objects as the previous
// one's is dropped; one new object in it, or one fewer, goes through.
import { describe, it } from "vitest";
import { distinctRenderings } from "../../../src/pipeline/distinct-renderings.js";
import type { RenderedInfra } from "../../../src/pipeline/outputs.js";
import { marbles } from "./marbles.js";

const alpha = { name: "alpha" } as unknown as RenderedInfra;
const beta = { name: "beta" } as unknown as RenderedInfra;
const betaAgain = { name: "beta" } as unknown as RenderedInfra;

describe("distinctRenderings", () => {
  it("drops renderings that kept every Infra rendering, passes those that changed one", () => {
    const scheduler = marbles();
    scheduler.run(({ hot, expectObservable }) => {
      const values = {
        a: { infras: [alpha, beta] },
        b: { infras: [alpha, beta] },
        c: { infras: [alpha, betaAgain] },
        d: { infras: [alpha] },
        e: { infras: [alpha] },
      };
      expectObservable(hot("abcde", values).pipe(distinctRenderings())).toBe("a-cd-", values);
    });
  });
});
