// Inputs (a state and the keyed changes since the one before) → one renderAll per input, each
// continuing from the rendering before → one shared stream of renderings: the render loop of both
// `oooi serve` and `oooi operator`. Their branches (xDS snapshots, writers, files, status) subscribe.
import { EMPTY, mergeMap, of, share, type Observable } from "rxjs";
import type { ObjectChange } from "../model/incremental/infras-read.js";
import type { ClusterState } from "../model/types.js";
import { renderAll, type Outputs, type RenderOptions } from "./outputs.js";

/** What one rendering needs besides the chain's own continuation (reuse, lastGood, changes). */
export type ChainOptions = Omit<RenderOptions, "reuse" | "lastGood" | "changes">;

/**
 * Renderings that each continue from the one before: an Infra the keyed changes do not feed is
 * neither built nor rendered again (renderAll's `reuse`), refused versions fall back on the last
 * good ones (`lastGood`).
 */
export class RenderChain {
  #last: Outputs | undefined;

  /** The latest rendering (undefined before the first). */
  get last(): Outputs | undefined {
    return this.#last;
  }

  /**
   * Renders `state`. `changes`: the keyed changes from the last rendering's state to this one
   * ([] = the same state); undefined = unknown, found by object identity.
   */
  render(state: ClusterState, changes: readonly ObjectChange[] | undefined, options: ChainOptions): Outputs {
    const last = this.#last;
    const outputs = renderAll(
      state,
      last === undefined
        ? options
        : { ...options, reuse: last, lastGood: last.lastGood, ...(changes === undefined ? {} : { changes }) },
    );
    this.#last = outputs;
    return outputs;
  }
}

/** One input and its rendering; `rebuilt` holds the Infras (refKeys) the batch built again. */
export interface Rendering<I> {
  readonly input: I;
  readonly outputs: Outputs;
  readonly rebuilt: ReadonlySet<string>;
}

/**
 * `render` once per input (undefined: nothing to render, e.g. unreadable manifests), shared: every
 * branch sees the same rendering, made once. A rendering that throws is reported and skipped, so
 * the branches keep the last good one.
 */
export function renderLoop<I>(
  inputs$: Observable<I>,
  render: (input: I) => Outputs | undefined,
  onError: (error: unknown, input: I) => void,
): Observable<Rendering<I>> {
  return inputs$.pipe(
    mergeMap((input) => {
      let outputs: Outputs | undefined;
      try {
        outputs = render(input);
      } catch (e) {
        onError(e, input);
        return EMPTY;
      }
      return outputs === undefined ? EMPTY : of({ input, outputs, rebuilt: outputs.built.rebuilt });
    }),
    share(),
  );
}
