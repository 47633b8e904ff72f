// Messages between the benchmark (the server's process) and its client processes, and the clock
// both sides stamp with: CLOCK_MONOTONIC via process.hrtime, which is system-wide on Linux, so a
// client's receive time and the server's change time compare directly across processes.

/** Milliseconds on the system-wide monotonic clock. */
export function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** How a benchmark stream talks: ADS state of the world, ADS Delta, or the bare broadcast method. */
export type StreamKind = "sotw" | "delta" | "bare";

/** One stream a client process opens. */
export interface StreamSpec {
  /** Benchmark-wide stream number. */
  readonly id: number;
  readonly address: string;
  readonly kind: StreamKind;
  /** Envoy node.id and node.cluster (the node group). */
  readonly node: string;
  readonly group: string;
}

/** Parent → client process. */
export type ToClients =
  { readonly op: "open"; readonly streams: readonly StreamSpec[] } | { readonly op: "close" } | { readonly op: "exit" };

/**
 * One received response: [stream id, type code, version, receive time (nowMs), bytes, resources].
 * Type codes: see TYPE_CODES.
 */
export type Receipt = readonly [number, number, string, number, number, number];

/** Client process → parent. */
export type FromClients =
  | { readonly op: "receipts"; readonly receipts: readonly Receipt[] }
  | { readonly op: "ended"; readonly id: number; readonly code: number; readonly details: string }
  | { readonly op: "closed" };

/** Short codes for the type URLs in receipts (any other type URL is OTHER). */
export const TYPE_CODES = { cluster: 0, endpoint: 1, listener: 2, route: 3, other: 4 } as const;
