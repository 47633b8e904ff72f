// oooi's own version, read from package.json: what `--version` prints and what the xDS server's
// GetVersion answers.
import { readFileSync } from "node:fs";

/** The version in package.json (dist/cli/ and src/cli/ both sit two levels below it). */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version?: string };
  return pkg.version ?? "unknown";
}

/** When this process started, ms since the epoch. */
export function processStartMs(): number {
  return Math.round(Date.now() - process.uptime() * 1000);
}
