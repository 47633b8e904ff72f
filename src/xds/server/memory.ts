// What each node last acknowledged, per type, kept across its reconnects: a reconnecting client
// says which version it holds (SotW version_info, Delta initial_resource_versions), and knowing
// that content lets make-before-break keep the clusters its listeners still use. Bounded: the
// least recently updated nodes are forgotten first.
import type { CachedResource } from "../cache/snapshot.js";

/** A resource a client holds: its version and, when known, the cached resource. */
export interface Held {
  readonly version: string;
  readonly res: CachedResource | undefined;
}

/** One type's acknowledged state of a node. */
export interface Remembered {
  readonly version: string;
  readonly held: ReadonlyMap<string, Held>;
}

/** Which state of a node is remembered: last ACKed, last sent, or (SotW EDS/RDS) all it may keep. */
export type Slot = "acked" | "sent" | "kept";

type Slots = Partial<Record<Slot, Remembered>>;

/**
 * Last acknowledged and last sent state per node and type URL, for at most `maxNodes` nodes. The
 * sent state matters when a stream broke after the client applied a response but before its ACK
 * reached us.
 */
export class NodeMemory {
  readonly #nodes = new Map<string, Map<string, Slots>>();

  constructor(private readonly maxNodes = 4096) {}

  /** Records one state (`slot`) of `typeUrl` for `nodeId`. */
  remember(nodeId: string, typeUrl: string, version: string, held: ReadonlyMap<string, Held>, slot: Slot): void {
    let types = this.#nodes.get(nodeId);
    if (types) this.#nodes.delete(nodeId);
    else types = new Map();
    const slots: Slots = types.get(typeUrl) ?? {};
    slots[slot] = { version, held };
    types.set(typeUrl, slots);
    this.#nodes.set(nodeId, types);
    if (this.#nodes.size > this.maxNodes) {
      const oldest = this.#nodes.keys().next().value;
      if (oldest !== undefined) this.#nodes.delete(oldest);
    }
  }

  /** What `nodeId` holds of `typeUrl` if it holds `version` (its last ACKed or last sent one). */
  recall(nodeId: string, typeUrl: string, version: string): Remembered | undefined {
    const slots = this.#nodes.get(nodeId)?.get(typeUrl);
    if (slots?.acked?.version === version) return slots.acked;
    if (slots?.sent?.version === version) return slots.sent;
    return undefined;
  }

  /** Every state of `typeUrl` that `nodeId` may hold (its last ACKed and last sent). */
  candidates(nodeId: string, typeUrl: string): Remembered[] {
    const slots = this.#nodes.get(nodeId)?.get(typeUrl);
    return [slots?.acked, slots?.sent, slots?.kept].filter((r): r is Remembered => r !== undefined);
  }

  /** The version of resource `name` of `typeUrl` that `nodeId` was last sent or acknowledged. */
  resource(nodeId: string, typeUrl: string, name: string, version: string): Held | undefined {
    const slots = this.#nodes.get(nodeId)?.get(typeUrl);
    for (const slot of [slots?.acked, slots?.sent]) {
      const h = slot?.held.get(name);
      if (h?.version === version && h.res) return h;
    }
    return undefined;
  }
}
