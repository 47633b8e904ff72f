// The memory baseline, in its own process: a bare informer cache of what the operator watches —
// every watched resource listed from the fake API server page by page (same paths, label selectors
// and page size as the reflectors) and each object kept as the API sent it (JSON.parse, no
// projection), in one Map per resource, as an informer's store holds them. Reports the process's
// memory after a full collection, before the lists and with the objects held.
import { KubeRest, statusCode, type KubeObject } from "../../src/kube/rest.js";
import { collectionPath, WATCHED_RESOURCES } from "../../src/watchers/kube/resources.js";
import { kubeConfigFor } from "../../test/support/fake-apiserver/index.js";
import { memory, type Memory } from "./memory.js";

/** Driver → cache baseline. */
export interface CacheRequest {
  readonly op: "fill";
  readonly url: string;
}

/** Cache baseline → driver. */
export interface CacheReply {
  readonly type: "filled";
  readonly objects: number;
  /** Bytes of JSON the lists carried (their items' share of it). */
  readonly jsonBytes: number;
  readonly before: Memory;
  readonly held: Memory;
}

/** Lists everything into Maps, replies, and keeps the Maps until the process is killed. */
export function cacheMain(): void {
  const held: Map<string, KubeObject>[] = [];
  process.on("message", (msg: CacheRequest) => {
    void (async () => {
      const before = memory();
      const rest = new KubeRest(kubeConfigFor(msg.url));
      let objects = 0;
      let jsonBytes = 0;
      for (const r of WATCHED_RESOURCES) {
        const items = new Map<string, KubeObject>();
        let cont: string | undefined;
        do {
          let text: string;
          try {
            text = await rest.text({
              method: "GET",
              path: collectionPath(r),
              query: { labelSelector: r.labelSelector, limit: "500", continue: cont },
            });
          } catch (e) {
            // An optional resource the API does not serve: the operator holds none of it either.
            if (statusCode(e) === 404 && r.optional) break;
            throw e;
          }
          jsonBytes += text.length;
          const page = JSON.parse(text) as { metadata?: { continue?: string }; items?: KubeObject[] };
          for (const o of page.items ?? []) items.set(`${o.metadata?.namespace ?? ""}/${o.metadata?.name ?? ""}`, o);
          cont = page.metadata?.continue === "" ? undefined : page.metadata?.continue;
        } while (cont !== undefined);
        objects += items.size;
        held.push(items);
      }
      process.send?.({ type: "filled", objects, jsonBytes, before, held: memory() } satisfies CacheReply);
    })();
  });
}
