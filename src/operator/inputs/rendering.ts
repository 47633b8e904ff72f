// A cluster snapshot → its rendering, continuing the render chain: the operator's input to the
// render loop (src/pipeline/render-loop.ts). The reconcile pass asks again for the snapshot it
// writes, with the DNS files the cluster holds by then; the same snapshot and DNS history reuse
// the rendering already made.
import { RenderChain } from "../../pipeline/render-loop.js";
import type { Outputs } from "../../pipeline/outputs.js";
import type { Observed } from "../../watchers/kube/observed.js";
import type { KeaRenderOptions } from "../../dhcp/render/index.js";
import type { EnvoyRenderOptions } from "../../envoy/render/index.js";
import type { Clock } from "../../util/clock.js";
import { PersistedAllocations } from "./allocations.js";
import { ClusterHolds, dnsPrevious, type ClusterDnsFiles } from "./dns-previous.js";

export interface OperatorRenderingOptions {
  readonly kea: KeaRenderOptions;
  readonly envoy?: EnvoyRenderOptions;
  /** The DNS ConfigMaps' data as the cluster holds it in a snapshot (Reconciler.dnsFiles). */
  readonly dnsFiles: (observed: Observed) => ClusterDnsFiles;
  readonly clock: Clock;
}

/** Renders snapshots in order; each rendering continues from the one before. */
export class OperatorRendering {
  readonly #o: OperatorRenderingOptions;
  readonly #chain = new RenderChain();
  readonly #holds = new ClusterHolds();
  readonly #allocations = new PersistedAllocations();
  /** The snapshot and DNS history of the chain's last rendering. */
  #last: { readonly seq: number; readonly previous: ReadonlyMap<string, string> | undefined } | undefined;

  constructor(o: OperatorRenderingOptions) {
    this.#o = o;
  }

  render(obs: Observed): Outputs {
    const last = this.#chain.last;
    // `previous` is undefined while the cluster's DNS ConfigMaps hold what the last rendering rendered.
    const previous = dnsPrevious(this.#o.dnsFiles(obs), last, this.#holds);
    const seq = this.#last?.seq;
    if (last !== undefined && seq === obs.seq && samePrevious(this.#last?.previous, previous)) return last;
    // The snapshot right after the last one carries the keyed changes since, and a later one
    // remembers them (src/watchers/kube/observed.ts); without them every list is compared.
    const changes =
      seq === undefined
        ? undefined
        : seq === obs.seq
          ? []
          : seq === obs.seq - 1
            ? obs.changes
            : obs.changesSince?.(seq);
    const outputs = this.#chain.render(obs.state, changes, {
      kea: this.#o.kea,
      ...(this.#o.envoy === undefined ? {} : { envoy: this.#o.envoy }),
      ...(previous === undefined ? {} : { previous }),
      // Durable DHCP state: what the leader last wrote to each DHCPServer's status.
      dhcpAllocations: this.#allocations.of(obs.raw.dhcpservers),
      now: this.#o.clock.now(),
    });
    this.#last = { seq: obs.seq, previous };
    return outputs;
  }
}

function samePrevious(a: ReadonlyMap<string, string> | undefined, b: ReadonlyMap<string, string> | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a.size !== b.size) return false;
  for (const [k, v] of a) if (b.get(k) !== v) return false;
  return true;
}
