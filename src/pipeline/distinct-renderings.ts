// Renderings → only those that differ from the one before: a batch that rebuilt nothing and
// re-rendered nothing (a Machine change no Infra reads, a resync) reaches no xDS cache.
import { distinctUntilChanged, type MonoTypeOperatorFunction } from "rxjs";
import type { Outputs } from "./outputs.js";

/**
 * Drops a rendering whose Infra renderings are the same objects as the previous one's. Compared by
 * identity, not by `built.rebuilt`: an Infra can be rendered again without a rebuild (new Kea or
 * xDS address options, another DNS history), and a kept rendering keeps its object (renderAll).
 */
export function distinctRenderings<T extends Pick<Outputs, "infras">>(): MonoTypeOperatorFunction<T> {
  return distinctUntilChanged(
    (a, b) => a.infras.length === b.infras.length && a.infras.every((r, i) => r === b.infras[i]),
  );
}
