// Responses shared by the streams that send the same thing. A snapshot change wakes every stream
// of its node group in one round of deferred pumps; streams that plan the same response — the same
// type snapshot under the same (interned) subscription with nothing retained, and for Delta from
// the same held state (the shared map of the previous snapshot) — write one response, its nonce
// included, assembled and serialized once. A large changed listener is not concatenated once per
// stream. Kept only until the round is over: the bytes are not held beside the
// snapshot's own.
//
// A nonce must be unique on its stream (docs/xds-protocol.md#rule-1). Nonces are numbered in the
// order they are made; a stream takes a shared response only when its nonce is newer than every
// nonce the stream has sent, so the nonces of one stream strictly increase.
import type { TypeSnapshot } from "../cache/snapshot.js";
import type { WireResponse } from "./codec.js";
import type { Held } from "./memory.js";
import type { Subscription } from "./subscription.js";

/** A nonce and its place in the order nonces were made. */
export interface Nonce {
  readonly seq: number;
  readonly text: string;
}

/** What makes two streams' responses the same: every input of planSotw / planDelta that varies. */
export interface ShareKey {
  readonly typeSnap: TypeSnapshot;
  readonly protocol: "sotw" | "delta";
  readonly subscription: Subscription;
  /** Delta: what the client held before (a response carries only the difference); SotW: undefined. */
  readonly held: ReadonlyMap<string, Held> | undefined;
}

/** A response made for a key, with its nonce. */
export interface SharedResponse {
  readonly nonce: Nonce;
  readonly response: WireResponse;
}

interface Entry extends SharedResponse {
  readonly key: ShareKey;
}

function same(a: ShareKey, b: ShareKey): boolean {
  return (
    a.typeSnap === b.typeSnap && a.protocol === b.protocol && a.subscription === b.subscription && a.held === b.held
  );
}

/** The responses of the current round of pumps. */
export class SharedResponses {
  #entries: Entry[] = [];
  #clearing = false;

  /** `defer` runs its function after the current round (the pumps it was scheduled with). */
  constructor(private readonly defer: (fn: () => void) => void) {}

  /** The round's response for `key`, if one was made whose nonce is newer than `after`. */
  find(key: ShareKey, after: number): SharedResponse | undefined {
    return this.#entries.find((e) => e.nonce.seq > after && same(e.key, key));
  }

  /** Offers a response just made for `key` to the other streams of the round. */
  add(key: ShareKey, made: SharedResponse): void {
    this.#entries.push({ key, ...made });
    if (this.#clearing) return;
    this.#clearing = true;
    this.defer(() => {
      this.#clearing = false;
      this.#entries = [];
    });
  }
}
