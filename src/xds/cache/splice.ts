// A Listener encoded chain by chain: proto3 JSON + the previous version's encoded chains → the
// Listener's protobuf bytes, identical to encoding it whole, re-encoding only chains that changed.
// A repeated message field is the concatenation of its encoded elements, each a tag, a length and
// the element's bytes, and protobufjs writes fields in field-number order
// (https://protobuf.dev/programming-guides/encoding/#optional): so the bytes are the Listener's
// other fields below filter_chains (3), then one entry per chain, then the fields above it.
import protobuf from "protobufjs";
import { encodeMessage, encodeResource, messageType } from "../resource/protos.js";
import { LISTENER_TYPE_URL } from "../resource/type-urls.js";
import type { EncodedParts, PartedEncoding } from "../resource/specs.js";
import { jsonDigest } from "./snapshot.js";

const FILTER_CHAINS = "filter_chains";
const LENGTH_DELIMITED = 2;

/**
 * The Listener's bytes, its chains taken from `previous` when a chain's JSON is unchanged. Throws
 * what encodeResource throws on an invalid listener (the whole listener is encoded again to say
 * where), so errors name the same field either way.
 */
export function encodeListener(listener: object, previous: EncodedParts | undefined): PartedEncoding {
  const record = listener as Record<string, unknown>;
  const chains = record[FILTER_CHAINS];
  if (chains !== undefined && chains !== null && !Array.isArray(chains)) return whole(listener);
  const type = messageType(LISTENER_TYPE_URL);
  const chainField = type.fields[FILTER_CHAINS];
  const chainType = chainField?.resolvedType;
  if (chainField === undefined || !(chainType instanceof protobuf.Type)) return whole(listener);
  const rest = Object.fromEntries(Object.entries(record).filter(([k]) => k !== FILTER_CHAINS));
  let others: Uint8Array;
  const entries: { digest: string; bytes: Uint8Array }[] = [];
  try {
    others = encodeResource(LISTENER_TYPE_URL, rest);
    for (const chain of (chains ?? []) as unknown[]) {
      const digest = digestOf(chain);
      const reused = previous?.get(digest);
      entries.push({ digest, bytes: reused ?? chainEntry(chainField.id, chainType, chain) });
    }
  } catch {
    return whole(listener);
  }
  return assemble(others, splitAt(others, chainField.id), entries);
}

// Chains are digested by object (jsonDigest): on a listener of 3,500 chains, the renderer hands
// back an unchanged backend's chain object itself, so only the changed ones pay for a JSON text.
function digestOf(chain: unknown): string {
  // Not an object: chainEntry refuses it, and the listener is encoded whole to say where.
  return typeof chain === "object" && chain !== null ? jsonDigest(chain) : "";
}

function whole(listener: object): PartedEncoding {
  return { bytes: encodeResource(LISTENER_TYPE_URL, listener), parts: new Map() };
}

/** One `filter_chains` entry: tag, length, the FilterChain's bytes. */
function chainEntry(field: number, type: protobuf.Type, chain: unknown): Uint8Array {
  if (typeof chain !== "object" || chain === null) throw new Error("a filter chain is not an object");
  const bytes = encodeMessage(type, chain);
  return protobuf.Writer.create()
    .uint32((field << 3) | LENGTH_DELIMITED)
    .bytes(bytes)
    .finish();
}

function assemble(
  others: Uint8Array,
  cut: number,
  entries: readonly { digest: string; bytes: Uint8Array }[],
): PartedEncoding {
  const size = entries.reduce((n, e) => n + e.bytes.length, others.length);
  const bytes = new Uint8Array(size);
  bytes.set(others.subarray(0, cut), 0);
  let at = cut;
  const parts = new Map<string, readonly [number, number]>();
  for (const { digest, bytes: entry } of entries) {
    bytes.set(entry, at);
    parts.set(digest, [at, at + entry.length]);
    at += entry.length;
  }
  bytes.set(others.subarray(cut), at);
  return { bytes, parts };
}

/** Offset of the first top-level field numbered above `field` in encoded message bytes. */
export function splitAt(bytes: Uint8Array, field: number): number {
  const reader = protobuf.Reader.create(bytes);
  while (reader.pos < reader.len) {
    const start = reader.pos;
    const tag = reader.uint32();
    if (tag >>> 3 > field) return start;
    reader.skipType(tag & 7);
  }
  return bytes.length;
}
