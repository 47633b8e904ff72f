// `oooi version`: this client's version, and the server's read over oooi.debug.v1 GetVersion.
import { DebugClient, type GetVersionResponse } from "../xds/introspect/debug-client.js";
import { packageVersion } from "./package-version.js";
import { structured } from "./structured-output.js";
import { xdsCredentials } from "./xds-tls-credentials.js";
import type { XdsTlsOptions } from "./xds-tls-flags.js";

export interface VersionOptions extends XdsTlsOptions {
  readonly xds: string;
  readonly client?: boolean;
  readonly timeout: number;
  readonly output: string;
}

/** Where the command writes; injectable so tests read what a user reads. */
export interface VersionIo {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  readonly now: () => number;
}

/** What `oooi version` reports. */
export interface VersionReport {
  readonly client: { readonly version: string; readonly runtime: string };
  readonly server?: {
    readonly address: string;
    readonly version: string;
    readonly command: string;
    readonly startTime?: string;
    readonly runtime: string;
  };
}

/** Prints the versions; returns the exit status (1 when the server did not answer). */
export async function versionCommand(opts: VersionOptions, io: VersionIo): Promise<number> {
  const client = { version: packageVersion(), runtime: `node ${process.version}` };
  if (opts.client === true) {
    io.out(formatVersion({ client }, opts.output, io.now()));
    return 0;
  }
  let answer: GetVersionResponse;
  let debug: DebugClient | undefined;
  try {
    const credentials = xdsCredentials(opts);
    debug = new DebugClient({ address: opts.xds, timeoutMs: opts.timeout, ...(credentials ? { credentials } : {}) });
    answer = await debug.version();
  } catch (e) {
    io.out(formatVersion({ client }, opts.output, io.now()));
    io.err(`oooi version: server at ${opts.xds}: ${(e as Error).message}\n`);
    return 1;
  } finally {
    debug?.close();
  }
  const start = answer.start_time === null ? undefined : answer.start_time.seconds * 1000;
  const server = {
    address: opts.xds,
    version: answer.version,
    command: answer.command,
    ...(start === undefined ? {} : { startTime: new Date(start).toISOString() }),
    runtime: answer.runtime,
  };
  io.out(formatVersion({ client, server }, opts.output, io.now()));
  return 0;
}

/** The report as text (one line per side), JSON or YAML. */
export function formatVersion(report: VersionReport, output: string, now: number): string {
  const doc = structured(report, output);
  if (doc !== undefined) return doc;
  const lines = [`client  oooi ${report.client.version} (${report.client.runtime})`];
  const s = report.server;
  if (s !== undefined) {
    const up = s.startTime === undefined ? "" : `, up ${since(now - Date.parse(s.startTime))}`;
    lines.push(`server  oooi ${s.version || "(unknown)"} (${s.command || "?"}, ${s.runtime}${up}) at ${s.address}`);
  }
  return lines.join("\n") + "\n";
}

function since(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${String(s)}s`;
  if (s < 3600) return `${String(Math.floor(s / 60))}m`;
  if (s < 86400) return `${String(Math.floor(s / 3600))}h${String(Math.floor((s % 3600) / 60))}m`;
  return `${String(Math.floor(s / 86400))}d${String(Math.floor((s % 86400) / 3600))}h`;
}
