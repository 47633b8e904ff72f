// The render loop (serve's and the operator's): one rendering per input, shared by every branch;
// each continues from the one before (only the Infras the keyed changes feed are built again, and
// `rebuilt` names them); a rendering that throws is reported and skipped, the loop goes on.
import { Subject } from "rxjs";
import { describe, expect, it } from "vitest";
import type { ObjectChange } from "../../src/model/incremental/infras-read.js";
import type { ClusterState } from "../../src/model/types.js";
import { RenderChain, renderLoop, type Rendering } from "../../src/pipeline/render-loop.js";
import { attachment, combine, hostedCluster, infra, machine, NS, VLAN200 } from "../support/fixtures.js";

const base: ClusterState = combine(
  { infras: [infra("a"), infra("b", VLAN200)] },
  { attachments: [attachment("h1", { infra: "a" }), attachment("h2", { infra: "b" })] },
  hostedCluster("h1", 1, ["192.0.2.10"]),
  hostedCluster("h2", 2, ["198.51.100.10"]),
);
const NOW = Date.parse("2026-01-01T00:00:00Z");

/** h2's worker at another address, and the keyed change that says so. */
function moved(s: ClusterState): { state: ClusterState; changes: ObjectChange[] } {
  const before = [...s.machines].find((m) => m.metadata.name === "h2-worker-0");
  const after = machine(`${NS}-h2`, "h2-worker-0", "h2-workers", ["198.51.100.77"]);
  return {
    state: { ...s, machines: [...s.machines].map((m) => (m === before ? after : m)) },
    changes: [{ kind: "Machine", before, after }],
  };
}

interface Input {
  readonly state: ClusterState | "boom";
  readonly changes: readonly ObjectChange[] | undefined;
}

describe("renderLoop", () => {
  it("renders each input once for every branch, continues from the last rendering, skips one that throws", () => {
    const inputs = new Subject<Input>();
    const chain = new RenderChain();
    let renders = 0;
    const errors: string[] = [];
    const loop = renderLoop(
      inputs,
      (input: Input) => {
        renders++;
        if (input.state === "boom") throw new Error("boom");
        return chain.render(input.state, input.changes, { now: NOW });
      },
      (e) => errors.push((e as Error).message),
    );
    const first: Rendering<Input>[] = [];
    const second: Rendering<Input>[] = [];
    loop.subscribe((r) => first.push(r));
    loop.subscribe((r) => second.push(r));

    inputs.next({ state: base, changes: undefined });
    const next = moved(base);
    inputs.next({ state: "boom", changes: undefined });
    inputs.next(next);

    expect(renders).toBe(3);
    expect(errors).toEqual(["boom"]);
    expect(second).toEqual(first);
    expect(first.map((r) => [...r.rebuilt].sort())).toEqual([[`${NS}/a`, `${NS}/b`], [`${NS}/b`]]);
    const [a0, b0] = first[0]?.outputs.infras ?? [];
    const [a1, b1] = first[1]?.outputs.infras ?? [];
    expect(a1).toBe(a0);
    expect(b1).not.toBe(b0);
  });
});
