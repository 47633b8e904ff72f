// docs/troubleshooting.md's rows against the code table `oooi verify` prints from: every failure
// kind has its row, with the same cause and fix, and the doc lists no kind the code does not know.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TROUBLESHOOTING } from "../../src/verify/troubleshooting.js";

const doc = readFileSync(join(process.cwd(), "docs", "troubleshooting.md"), "utf8");

/** The rows of the table under "## Troubleshooting rows": failure kind → [cause, fix]. */
function docRows(section: string): Map<string, [string, string]> {
  const lines = section.slice(section.indexOf("## Troubleshooting rows")).split("\n");
  const rows = new Map<string, [string, string]>();
  for (const line of lines.slice(lines.findIndex((l) => l.startsWith("| failure |")) + 2)) {
    const cells = /^\| `([a-z-]+)` \| (.*) \| (.*) \|$/.exec(line);
    if (cells === null) break;
    rows.set(cells[1] ?? "", [cells[2] ?? "", cells[3] ?? ""]);
  }
  return rows;
}

describe("docs/troubleshooting.md", () => {
  it("has one row per failure kind of oooi verify, with its cause and fix", () => {
    const expected = new Map(Object.entries(TROUBLESHOOTING).map(([kind, row]) => [kind, [row.cause, row.fix]]));
    expect(docRows(doc)).toEqual(expected);
  });

  it("notices a row that drifted from the code", () => {
    const drifted = doc.replace("the xDS server does not answer |", "the server is down |");
    expect(drifted).not.toBe(doc);
    expect(docRows(drifted).get("xds-unreachable")?.[0]).not.toBe(TROUBLESHOOTING["xds-unreachable"].cause);
  });
});
