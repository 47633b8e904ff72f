// oooi's own version, read from package.json: what `--version` prints and what the xDS server's
// GetVersion answers.
import { readFileSync } from "node:fs";

/**
 * The version in package.json: dist/cli/ and src/cli/ both sit two levels below it, the
 * benchmarks' build (dist-bench/src/cli/) three.
 */
export function packageVersion(): string {
  for (const path of ["../../package.json", "../../../package.json"]) {
    let text: string;
    try {
      text = readFileSync(new URL(path, import.meta.url), "utf8");
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") continue;
      throw e;
    }
    return (JSON.parse(text) as { version?: string }).version ?? "unknown";
  }
  return "unknown";
}

/** When this process started, ms since the epoch. */
export function processStartMs(): number {
  return Math.round(Date.now() - process.uptime() * 1000);
}
