// Tests never serve or verify examples/ in place: the README invites users to edit them, and
// `npm start` serves examples/standalone beside `npm test`. A test takes a private copy at one
// moment and reads only that; the copies go when the test process exits.
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./cli.js";

const copies: string[] = [];
process.once("exit", () => {
  for (const dir of copies) rmSync(dir, { recursive: true, force: true });
});

/** A fresh copy of examples/<name> in a temporary folder. */
export function exampleCopy(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `oooi-example-${name}-`));
  cpSync(join(ROOT, "examples", name), dir, { recursive: true });
  copies.push(dir);
  return dir;
}
