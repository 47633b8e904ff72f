// The real Envoy validation rules (test/peers/envoy-check, built by test/peers/install.sh) as a
// function: files in, exit status and one line per file or violation out. A file named
// bootstrap*.yaml|.yml|.json is read as an envoy.config.bootstrap.v3.Bootstrap, any other as an
// envoy.json resource set; a directory stands for every envoy.json and bootstrap.yaml|.json below it.
// The binary lives in a cache directory named for a content hash of the checker's module, the
// same hash install.sh computes: sha256 over the `sha256sum` lines of go.mod, go.sum and *.go in
// C-locale name order, first 16 hex digits.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { peerBinary, type PeerBinary } from "./peers.js";

const MODULE_DIR = join(import.meta.dirname, "..", "peers", "envoy-check");

/** The content hash naming the checker's cache directory. */
export function envoyCheckHash(): string {
  const files = readdirSync(MODULE_DIR)
    .filter((f) => f === "go.mod" || f === "go.sum" || f.endsWith(".go"))
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const lines = files.map(
    (f) =>
      `${createHash("sha256")
        .update(readFileSync(join(MODULE_DIR, f)))
        .digest("hex")}  ${f}\n`,
  );
  return createHash("sha256").update(lines.join("")).digest("hex").slice(0, 16);
}

/** The checker binary, or why a suite needing it skips. */
export function envoyCheckBinary(): PeerBinary {
  return peerBinary(`envoy-check-${envoyCheckHash()}/envoy-check`, "envoy-check");
}

/** What one run of the checker said. */
export interface EnvoyCheckRun {
  readonly status: number | null;
  /**
   * stdout lines: "<file>: ok (…)" per accepted file ("ok (bootstrap: …)" for a bootstrap),
   * "<file>: <violation>" per violation.
   */
  readonly lines: readonly string[];
  readonly stderr: string;
}

/** Runs the checker on files or directories. */
export function runEnvoyCheck(binary: string, paths: readonly string[]): EnvoyCheckRun {
  const r = spawnSync(binary, paths, { encoding: "utf8" });
  if (r.error) throw r.error;
  return { status: r.status, lines: r.stdout.split("\n").filter((l) => l !== ""), stderr: r.stderr };
}
