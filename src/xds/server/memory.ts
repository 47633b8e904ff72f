// What each node last acknowledged, per type, kept across its reconnects: a reconnecting client
// says which version it holds (SotW version_info, Delta initial_resource_versions), and knowing
// that content lets make-before-break keep the clusters its listeners still use. Bounded: the
// least recently updated nodes are forgotten first. A node here is a client key (client-status.ts
// clientKey: verified identity, group, node id): a version replayed by another identity, or by the
// same id in another group, recalls nothing and the client is served as a fresh one.
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

/** One type's remembered states of a node (a fixed shape: one hidden class for every node). */
interface Slots {
  readonly typeUrl: string;
  acked: Remembered | undefined;
  sent: Remembered | undefined;
  kept: Remembered | undefined;
}

/**
 * Last acknowledged and last sent state per node and type URL, for at most `maxNodes` nodes. The
 * sent state matters when a stream broke after the client applied a response but before its ACK
 * reached us. Per node a short array (a stream uses a handful of types), and one Remembered shared
 * by the slots that hold the same state (an ACK remembers what was sent), not a Map and up to
 * three {version, held} objects per type and node.
 */
export class NodeMemory {
  readonly #nodes = new Map<string, readonly Slots[]>();

  constructor(private readonly maxNodes = 4096) {}

  /** Records one state (`slot`) of `typeUrl` for `client`. */
  remember(client: string, typeUrl: string, version: string, held: ReadonlyMap<string, Held>, slot: Slot): void {
    let types = this.#nodes.get(client) ?? [];
    this.#nodes.delete(client);
    let slots = types.find((t) => t.typeUrl === typeUrl);
    if (!slots) {
      slots = { typeUrl, acked: undefined, sent: undefined, kept: undefined };
      types = types.concat([slots]); // exactly as long as needed (a push or a spread reserves room for more)
    }
    slots[slot] = sameAs(slots.sent, version, held) ?? sameAs(slots.acked, version, held) ?? { version, held };
    this.#nodes.set(client, types);
    if (this.#nodes.size > this.maxNodes) {
      const oldest = this.#nodes.keys().next().value;
      if (oldest !== undefined) this.#nodes.delete(oldest);
    }
  }

  #slots(client: string, typeUrl: string): Slots | undefined {
    return this.#nodes.get(client)?.find((t) => t.typeUrl === typeUrl);
  }

  /** What `client` holds of `typeUrl` if it holds `version` (its last ACKed or last sent one). */
  recall(client: string, typeUrl: string, version: string): Remembered | undefined {
    const slots = this.#slots(client, typeUrl);
    if (slots?.acked?.version === version) return slots.acked;
    if (slots?.sent?.version === version) return slots.sent;
    return undefined;
  }

  /** Every state of `typeUrl` that `client` may hold (its last ACKed and last sent). */
  candidates(client: string, typeUrl: string): Remembered[] {
    const slots = this.#slots(client, typeUrl);
    // Slots holding the same state share one Remembered: list it once.
    return [slots?.acked, slots?.sent, slots?.kept].filter(
      (r, i, all): r is Remembered => r !== undefined && all.indexOf(r) === i,
    );
  }

  /** The version of resource `name` of `typeUrl` that `client` was last sent or acknowledged. */
  resource(client: string, typeUrl: string, name: string, version: string): Held | undefined {
    const slots = this.#slots(client, typeUrl);
    for (const slot of [slots?.acked, slots?.sent]) {
      const h = slot?.held.get(name);
      if (h?.version === version && h.res) return h;
    }
    return undefined;
  }
}

function sameAs(r: Remembered | undefined, version: string, held: ReadonlyMap<string, Held>): Remembered | undefined {
  return r !== undefined && r.version === version && r.held === held ? r : undefined;
}
