// Where the real test peers built by test/peers/install.sh live, and why a suite skips without one.
// The cache rule is the script's: $OOOI_PEERS_CACHE, else $XDG_CACHE_HOME/oooi-peers, else ~/.cache/oooi-peers.
import { accessSync, constants } from "node:fs";
import { homedir } from "node:os";
import { delimiter, join } from "node:path";

export const PEERS_CACHE =
  process.env["OOOI_PEERS_CACHE"] ?? join(process.env["XDG_CACHE_HOME"] ?? join(homedir(), ".cache"), "oooi-peers");

/** CI sets OOOI_REQUIRE_PEERS=1: there a missing peer fails the run instead of skipping. */
export const PEERS_REQUIRED = process.env["OOOI_REQUIRE_PEERS"] === "1";

export interface PeerBinary {
  /** Absolute path, or undefined when not built. */
  readonly path: string | undefined;
  /** Why a suite that needs it skips; undefined when present. */
  readonly skipReason: string | undefined;
}

/** `relative` is the binary's path under the cache, e.g. "coredns-v1.14.7/coredns". */
export function peerBinary(relative: string, installArg: string): PeerBinary {
  const path = join(PEERS_CACHE, relative);
  try {
    accessSync(path, constants.X_OK);
    return { path, skipReason: undefined };
  } catch {
    const reason = `${relative} not built; run test/peers/install.sh ${installArg}`;
    if (PEERS_REQUIRED) throw new Error(`OOOI_REQUIRE_PEERS=1 but ${reason}`);
    return { path: undefined, skipReason: reason };
  }
}

/**
 * Debian's `chromium` on PATH (apt-get install -y chromium; .ci/run installs it) for the status
 * page's browser test, driven by playwright-core through its executablePath.
 */
export function chromiumBinary(): PeerBinary {
  const path = onPath("chromium");
  if (path !== undefined) return { path, skipReason: undefined };
  const reason = "chromium is not on PATH; apt-get install -y chromium";
  if (PEERS_REQUIRED) throw new Error(`OOOI_REQUIRE_PEERS=1 but ${reason}`);
  return { path: undefined, skipReason: reason };
}

/**
 * A suite's skip for a missing tool (dig, kubectl, Kea, …): the reason is printed so a skip is never
 * silent, and under OOOI_REQUIRE_PEERS=1 (CI) a missing tool fails the run instead.
 */
export function skipUnless(reason: string | undefined): string | undefined {
  if (reason === undefined) return undefined;
  if (PEERS_REQUIRED) throw new Error(`OOOI_REQUIRE_PEERS=1 but ${reason}`);
  console.warn(`skipped: ${reason}`);
  return reason;
}

/** Why `tool` cannot run: undefined when it is an executable on PATH. */
export function toolMissing(tool: string, install: string): string | undefined {
  return onPath(tool) === undefined ? `${tool} is not on PATH (${install})` : undefined;
}

/** The first executable `tool` on PATH. */
export function onPath(tool: string): string | undefined {
  for (const dir of (process.env["PATH"] ?? "").split(delimiter).filter((d) => d !== "")) {
    try {
      accessSync(join(dir, tool), constants.X_OK);
      return join(dir, tool);
    } catch {
      // not in this folder
    }
  }
  return undefined;
}
