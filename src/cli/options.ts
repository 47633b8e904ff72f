// Option parsers shared by the commands. Loaded for every `oooi` invocation, --help included, so
// it imports nothing heavier than commander.
import { InvalidArgumentError, Option } from "commander";
import { DEFAULT_MAX_MANIFEST_BYTES } from "../watchers/manifest-file-read.js";
import { splitHostPort } from "../envoy/xds-address.js";

export const LOG_FORMATS = ["json", "pretty"] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** `--log-format`; without it the format follows whether stderr is a terminal. */
export function logFormatOption(): Option {
  return new Option("--log-format <format>", "json or pretty (default: pretty on a terminal, json otherwise)").choices(
    LOG_FORMATS,
  );
}

/** "127.0.0.1:5353", "[::1]:53" or ":5353" (all IPv4 interfaces). */
export function hostPort(value: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(value);
  const port = Number(m?.[3]);
  if (m === null || !Number.isInteger(port) || port > 65535)
    throw new InvalidArgumentError("expected host:port, e.g. 127.0.0.1:5353");
  return { host: m[1] ?? (m[2] === "" || m[2] === undefined ? "0.0.0.0" : m[2]), port };
}

/**
 * host:port of a port meant for people and scrapers on this host (serve's --http-listen): ":9100"
 * binds loopback, so the status page (node ids, versions) is never on the network unless the user
 * names the address, e.g. 0.0.0.0:9100.
 */
export function loopbackHostPort(value: string): { host: string; port: number } {
  const parsed = hostPort(value);
  return /^:\d+$/.test(value) ? { host: "127.0.0.1", port: parsed.port } : parsed;
}

/** A repeatable option's accumulator: each occurrence adds one value. */
export function collect(value: string, previous: readonly string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** `-o, --output` of a read command: its human format first (the default), then json and yaml. */
export function outputOption(human: "table" | "text" | "yaml"): Option {
  const formats = human === "yaml" ? ["yaml", "json"] : [human, "json", "yaml"];
  return new Option("-o, --output <format>", formats.join(", ")).choices(formats).default(human);
}

/** A positive integer (milliseconds, counts). */
export function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError("expected a positive integer");
  return n;
}

/** A non-negative integer (0 allowed: a debounce window, a count that may be zero). */
export function nonNegativeInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError("not a non-negative integer");
  return n;
}

/** A TCP or UDP port, 1-65535. */
export function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0 || n > 65535) throw new InvalidArgumentError("expected a port, 1-65535");
  return n;
}

/** host:port a client can dial (port 1-65535). */
export function dialHostPort(value: string): { host: string; port: number } {
  const parsed = splitHostPort(value);
  if (parsed === undefined)
    throw new InvalidArgumentError("expected host:port with a port 1-65535, e.g. 127.0.0.1:18000");
  return parsed;
}

/** --xds-max-connections of every command serving ADS (docs/security.md). */
export function xdsMaxConnectionsOption(fallback: number): Option {
  return new Option(
    "--xds-max-connections <n>",
    "connections the xDS port accepts at once; more are closed at once (lowered to leave the process room under its open-files limit)",
  )
    .argParser(positiveInt)
    .default(fallback);
}

/** --xds-max-names-per-stream of every command serving ADS (docs/security.md). */
export function xdsMaxNamesOption(fallback: number): Option {
  return new Option(
    "--xds-max-names-per-stream <n>",
    "resource names one xDS stream may subscribe to; past it the stream ends with RESOURCE_EXHAUSTED",
  )
    .argParser(positiveInt)
    .default(fallback);
}

/** A `--*-listen`-style host:port option whose default help shows "host:port", not JSON. */
export function hostPortOption(flags: string, description: string, fallback?: string): Option {
  const option = new Option(flags, description).argParser(hostPort);
  return fallback === undefined ? option : option.default(hostPort(fallback), fallback);
}

/**
 * `--filter-chain-matcher` (serve, operator, render): TLS listeners pick their chains by
 * filter_chain_matcher, so a worker joining drains no connection (docs/reference.md#filter-chain-matcher).
 */
export function filterChainMatcherOption(): Option {
  return new Option(
    "--filter-chain-matcher",
    "render TLS listeners with filter_chain_matcher (named chains, workers' addresses in the matcher): a worker joining drains no connection; off until proven against a real Envoy",
  ).default(false);
}

/** `--max-manifest-bytes`: the size limit of one manifest file (render and serve). */
export function maxManifestBytesOption(): Option {
  return new Option(
    "--max-manifest-bytes <n>",
    "largest manifest file read, in bytes; a larger one is a problem naming it (serve keeps what it defined before)",
  )
    .argParser(positiveInt)
    .default(DEFAULT_MAX_MANIFEST_BYTES, `${String(DEFAULT_MAX_MANIFEST_BYTES)} (8 MiB)`);
}
