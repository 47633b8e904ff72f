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

/** A server to ask; `output` (a CoreDNS rig's log) goes into the error when replies never come. */
export interface DigServer {
  readonly host: string;
  readonly port: number;
  readonly output?: () => string;
}

// Batches per call: a loaded machine has stalled a server past dig's two 5 s tries for a handful of
// queries in a row (stop 36's CI: 1 of 57; stop 42's: several in a row, twice), so what is still
// unanswered is asked again, up to this many batches in all.
const BATCHES = 3;

/**
 * Asks `server` every query from `source`; replies in query order. A query left unanswered after
 * dig's own retries is asked again in a later batch; one unanswered by every batch throws, naming
 * the server and carrying what each batch printed (and the server's log, when it has one).
 */
export async function digBatch(server: DigServer, queries: readonly Query[], options: BatchOptions): Promise<Reply[]> {
  const replies: (Reply | undefined)[] = queries.map(() => undefined);
  const printed: string[] = [];
  for (let batch = 0; batch < BATCHES; batch++) {
    const open = queries.flatMap((query, i) => (replies[i] === undefined ? [{ query, i }] : []));
    if (open.length === 0) break;
    const got = await askOnce(
      server,
      open.map((o) => o.query),
      options,
    );
    printed.push(got.stdout.slice(0, 2000));
    open.forEach((o, k) => {
      replies[o.i] = got.replies[k];
    });
  }
  return queries.map((query, i) => {
    const reply = replies[i];
    if (reply === undefined) {
      const log =
        server.output === undefined ? "" : `\n--- the server's log, last lines:\n${server.output().slice(-3000)}`;
      throw new Error(
        `dig got no reply from ${server.host}:${server.port} to ${query.name} ${query.type} in ${BATCHES} batches:\n${printed.join("\n---\n")}${log}`,
      );
    }
    return reply;
  });
}

/** One dig batch; each query's reply matched by its question section (undefined: none came). */
async function askOnce(
  server: DigServer,
  queries: readonly Query[],
  options: BatchOptions,
): Promise<{ replies: (Reply | undefined)[]; stdout: string }> {
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
    // dig exits 9 when its last query got no reply; the replies before it still count.
    const stdout = await exec("dig", args, { maxBuffer: 64 * 1024 * 1024 }).then(
      (r) => r.stdout,
      (err: unknown) => {
        const e = err as { code?: unknown; stdout?: unknown };
        if (e.code === 9 && typeof e.stdout === "string") return e.stdout;
        throw err;
      },
    );
    const byQuestion = new Map<string, string[]>();
    for (const chunk of stdout.split(";; Got answer:").slice(1)) {
      const m = /;; QUESTION SECTION:\n;(\S+)\s+IN\s+(\S+)/.exec(chunk);
      if (m === null) continue;
      const key = questionKey(m[1] ?? "", m[2] ?? "");
      byQuestion.set(key, [...(byQuestion.get(key) ?? []), chunk]);
    }
    const replies = queries.map((q) => {
      const chunk = byQuestion.get(questionKey(q.name, q.type))?.shift();
      return chunk === undefined ? undefined : parseReply(chunk, q);
    });
    return { replies, stdout };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function questionKey(name: string, type: string): string {
  return `${name.toLowerCase().replace(/\.$/, "")} ${type.toUpperCase()}`;
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
