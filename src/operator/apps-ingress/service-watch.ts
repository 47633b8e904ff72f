// A list+watch of one Service in the hosted cluster (fieldSelector on its name): the VIP MetalLB
// writes into status.loadBalancer arrives as an event, not at the next poll (the original polled
// every 15 s). Re-lists after every ended or failed watch, with backoff.
import { backoffDelay, type BackoffOptions } from "../../util/backoff.js";
import type { Clock, TimerHandle } from "../../util/clock.js";
import { watchError, type KubeObject, type KubeRest } from "../../kube/rest.js";

export class ServiceWatch {
  readonly #rest: KubeRest;
  readonly #path: string;
  readonly #selector: string;
  readonly #clock: Clock;
  readonly #backoff: BackoffOptions;
  readonly #onChange: () => void;
  readonly #abort = new AbortController();
  readonly #done: Promise<void>;
  #wake: { handle: TimerHandle; resolve: () => void } | undefined;
  /** The Service as last listed or watched (undefined: absent, or not listed yet). */
  object: KubeObject | undefined;
  /** True once a list succeeded. */
  synced = false;
  /** The last failure, cleared by the next successful list. */
  error: Error | undefined;

  constructor(
    rest: KubeRest,
    target: { namespace: string; name: string },
    opts: { clock: Clock; backoff: BackoffOptions; onChange: () => void },
  ) {
    this.#rest = rest;
    this.#path = `/api/v1/namespaces/${encodeURIComponent(target.namespace)}/services`;
    this.#selector = `metadata.name=${target.name}`;
    this.#clock = opts.clock;
    this.#backoff = opts.backoff;
    this.#onChange = opts.onChange;
    this.#done = this.#loop();
  }

  async #loop(): Promise<void> {
    let attempt = 0;
    while (!this.#closed()) {
      try {
        const list = await this.#rest.request<{ items?: KubeObject[]; metadata?: { resourceVersion?: string } }>({
          method: "GET",
          path: this.#path,
          query: { fieldSelector: this.#selector },
          signal: this.#abort.signal,
        });
        this.#set(list.items?.[0]);
        this.synced = true;
        this.error = undefined;
        attempt = 0;
        await this.#rest.watch(
          this.#path,
          {
            fieldSelector: this.#selector,
            resourceVersion: list.metadata?.resourceVersion,
            allowWatchBookmarks: "true",
            timeoutSeconds: "300",
          },
          (e) => {
            if (e.type === "ADDED" || e.type === "MODIFIED") this.#set(e.object);
            else if (e.type === "DELETED") this.#set(undefined);
            else if (e.type === "ERROR") throw watchError(e.object);
          },
          this.#abort.signal,
        );
      } catch (e) {
        if (this.#closed()) return;
        this.error = e instanceof Error ? e : new Error(String(e));
        attempt++;
        this.#onChange();
        await this.#sleep(backoffDelay(attempt, this.#backoff));
      }
    }
  }

  // A method, not the property: the compiler would take `aborted` as fixed within the loop.
  #closed(): boolean {
    return this.#abort.signal.aborted;
  }

  #set(o: KubeObject | undefined): void {
    this.object = o;
    this.#onChange();
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const handle = this.#clock.setTimeout(() => {
        this.#wake = undefined;
        resolve();
      }, ms);
      this.#wake = { handle, resolve };
    });
  }

  async close(): Promise<void> {
    this.#abort.abort();
    if (this.#wake !== undefined) {
      this.#clock.clearTimeout(this.#wake.handle);
      this.#wake.resolve();
    }
    await this.#done;
  }
}
