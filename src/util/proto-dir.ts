// Where oooi's own protos (proto/oooi/...) are at run time: the nearest `proto/oooi` folder above
// the running module — the repository root from src/ (vitest), dist/ (npm run build), dist-bench/
// (benchmarks) and the container image alike. OOOI_PROTO_DIR overrides.
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

let found: string | undefined;

/** The proto/ directory holding oooi/dhcp/v1 and oooi/debug/v1. */
export function oooiProtoDir(): string {
  const override = process.env["OOOI_PROTO_DIR"];
  if (override !== undefined && override !== "") return override;
  if (found !== undefined) return found;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, "proto", "oooi"))) return (found = join(dir, "proto"));
    const up = dirname(dir);
    if (up === dir) throw new Error("cannot find oooi's proto/ folder above the running code; set OOOI_PROTO_DIR");
    dir = up;
  }
}
