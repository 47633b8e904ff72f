// Many queries through one real `dig` process (batch mode, `dig -f`), each reply parsed into the
// parts two DNS servers must agree on. One process per (server, source, transport) keeps the
// suites fast on a loaded machine without leaving real dig.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const exec = promisify(execFile);

export interface Query {
  readonly name: string;
  readonly type: string;
}

/** The comparable parts of one reply; record lines are "owner ttl class type rdata", spaces collapsed. */
export interface Reply {
  readonly query: Query;
  readonly status: string;
  readonly aa: boolean;
  readonly answer: readonly string[];
  readonly authority: readonly string[];
}

export interface BatchOptions {
  readonly source: string;
  readonly tcp?: boolean;
}

/** Asks `server` every query from `source`; replies in query order. Throws when one got no reply. */
export async function digBatch(
  server: { host: string; port: number },
  queries: readonly Query[],
  options: BatchOptions,
): Promise<Reply[]> {
  const dir = mkdtempSync(join(tmpdir(), "oooi-dig-"));
  try {
    const file = join(dir, "queries");
    writeFileSync(file, queries.map((q) => `${q.name} ${q.type}\n`).join(""));
    const args = [
      `@${server.host}`,
      "-p",
      String(server.port),
      "-b",
      options.source,
      "+tries=2",
      "+time=5",
      "+nocookie",
      "+noall",
      "+comments",
      "+question",
      "+answer",
      "+authority",
      ...(options.tcp === true ? ["+tcp"] : []),
      "-f",
      file,
    ];
    const { stdout } = await exec("dig", args, { maxBuffer: 64 * 1024 * 1024 });
    const chunks = stdout.split(";; Got answer:").slice(1);
    if (chunks.length !== queries.length) {
      throw new Error(`dig answered ${chunks.length} of ${queries.length} queries:\n${stdout.slice(0, 4000)}`);
    }
    return chunks.map((chunk, i) => parseReply(chunk, queries[i] ?? { name: "", type: "" }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function parseReply(chunk: string, query: Query): Reply {
  const status = /status: (\w+)/.exec(chunk)?.[1] ?? "";
  const flags = (/;; flags: ([^;]*);/.exec(chunk)?.[1] ?? "").trim().split(/\s+/);
  const section = (title: string): string[] => {
    const m = new RegExp(`;; ${title} SECTION:\\n([\\s\\S]*?)(?:\\n\\n|$)`).exec(chunk);
    return (m?.[1] ?? "")
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => l.trim().split(/\s+/).join(" ").toLowerCase())
      .sort();
  };
  return { query, status, aa: flags.includes("aa"), answer: section("ANSWER"), authority: section("AUTHORITY") };
}

/** The A addresses of a reply's answer section, sorted. */
export function addressesOf(reply: Reply): string[] {
  return reply.answer
    .filter((l) => l.split(" ")[3] === "a")
    .map((l) => l.split(" ")[4] ?? "")
    .sort();
}
