// Issue 25 rows 13 and 14 on the sink itself, with real files and symlinks: each set is a generation
// folder switched in through OUT/..data, so a write that fails (a full disk: an injected write that
// fails with ENOSPC, as a tmpfs would) names its file, leaves the previous set whole and nothing
// half-written, and serve's writer tries again with backoff until space returns. Paths users point
// at stay put; unchanged files stay the same inode; a folder of the earlier in-place layout moves
// over with a user's file in it.
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  symlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  FileSink,
  OutputWriteError,
  RetryingFileSink,
  type FileSinkResult,
  type WriteFileFn,
} from "../../src/pipeline/file-sink.js";
import { until } from "../support/cli.js";

const scratch = mkdtempSync(join(tmpdir(), "oooi-file-sink-gen-"));
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});
let n = 0;
const fresh = (): string => join(scratch, `out-${String(++n)}`);

/** A DNS child's files: a Corefile naming `zones` zone files, each tagged with the set's name. */
function dnsSet(tag: string, zones: number): Map<string, string> {
  const names = Array.from({ length: zones }, (_, i) => `db.${tag}-${String(i)}`);
  return new Map([
    ["ns/x-dns/Corefile", `${names.map((z) => `file ${z}`).join("\n")}\n`],
    ...names.map((z): [string, string] => [`ns/x-dns/${z}`, `; ${tag}\n`]),
    ["status.json", `{"set":"${tag}"}\n`],
  ]);
}

/** Whether OUT shows exactly `set` through the paths users read. */
function shows(out: string, set: ReadonlyMap<string, string>): boolean {
  return [...set].every(([rel, text]) => existsSync(join(out, rel)) && readFileSync(join(out, rel), "utf8") === text);
}

/** A write that fails with ENOSPC while `full()` says so, from the `after`-th write on. */
function fillingDisk(full: () => boolean, after: number): { write: WriteFileFn; count: () => number } {
  let count = 0;
  return {
    write: async (path, text) => {
      count += 1;
      if (full() && count > after) {
        throw Object.assign(new Error(`ENOSPC: no space left on device, open '${path}'`), { code: "ENOSPC" });
      }
      await writeFile(path, text);
    },
    count: () => count,
  };
}

/** Every path under dir (not following symlinks). */
const everything = (dir: string): string[] => readdirSync(dir, { recursive: true, encoding: "utf8" });

describe("FileSink generations", () => {
  it("names the file a full disk refused, keeps the previous set whole and leaves no partial file", async () => {
    const out = fresh();
    let full = false;
    const disk = fillingDisk(() => full, 5);
    const sink = await FileSink.open(out, { writeFile: disk.write });
    const a = dnsSet("a", 20);
    await sink.sync(a);
    full = true;
    const b = dnsSet("b", 20);
    const failed = await sink.sync(b).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(failed).toBeInstanceOf(OutputWriteError);
    const e = failed as OutputWriteError;
    expect(e.code).toBe("ENOSPC");
    expect(b.has(e.file)).toBe(true);
    expect(e.message).toContain(`cannot write ${e.file} in ${out}: no space left on device`);
    // Readers still see the whole previous set; nothing of the refused one, no empty temporary.
    expect(shows(out, a)).toBe(true);
    expect(everything(out).filter((p) => p.includes("db.b-") || p.endsWith(".oooi-tmp"))).toEqual([]);
    for (const p of everything(out)) {
      const s = lstatSync(join(out, p));
      if (s.isFile()) expect(s.size, p).toBeGreaterThan(0);
    }
  });

  it("retries a refused set with backoff until space returns, then writes the newest set whole", async () => {
    const out = fresh();
    let full = false;
    const disk = fillingDisk(() => full, 3);
    const timers: { callback: () => void; ms: number }[] = [];
    const failures: { file: string | undefined; attempt: number; retryInMs: number }[] = [];
    const synced: FileSinkResult[] = [];
    const writer = new RetryingFileSink(
      FileSink.open(out, { writeFile: disk.write }),
      {
        synced: (r) => synced.push(r),
        failed: (e, attempt, retryInMs) =>
          failures.push({ file: e instanceof OutputWriteError ? e.file : undefined, attempt, retryInMs }),
      },
      {
        timers: {
          setTimeout: (callback, ms) => timers.push({ callback, ms }),
          clearTimeout: () => undefined,
        },
        backoff: { initialMs: 100, maxMs: 1_000, jitter: 0 },
      },
    );
    const settled = (what: () => boolean): Promise<void> => until(what, "the writer settled");
    const a = dnsSet("a", 10);
    writer.submit(a);
    await settled(() => synced.length === 1);

    full = true;
    writer.submit(dnsSet("b", 10));
    await settled(() => failures.length === 1);
    timers.shift()?.callback();
    await settled(() => failures.length === 2);
    expect(failures.map((f) => [f.attempt, f.retryInMs])).toEqual([
      [1, 100],
      [2, 200],
    ]);
    expect(failures.every((f) => f.file?.startsWith("ns/x-dns/") === true)).toBe(true);
    // A newer rendering while the disk is full replaces the one waiting.
    const c = dnsSet("c", 10);
    writer.submit(c);
    expect(shows(out, a)).toBe(true);

    full = false; // space returns
    timers.shift()?.callback();
    await settled(() => synced.length === 2);
    expect(shows(out, c)).toBe(true);
    expect(existsSync(join(out, "ns/x-dns/db.b-0"))).toBe(false);
    writer.close();
  });

  it("switches generations through ..data, keeps the paths users read, and links unchanged files", async () => {
    const out = fresh();
    const sink = await FileSink.open(out);
    const a = dnsSet("a", 3);
    await sink.sync(a);
    expect(lstatSync(join(out, "..data")).isSymbolicLink()).toBe(true);
    expect(lstatSync(join(out, "ns")).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(out, "ns"))).toBe(join("..data", "ns"));
    const first = readlinkSync(join(out, "..data"));
    const unchanged = statSync(join(out, "ns/x-dns/db.a-0")).ino;
    // Nanoseconds: a rewrite of the same bytes, even within the millisecond, moves it.
    const mtime = statSync(join(out, "ns/x-dns/db.a-0"), { bigint: true }).mtimeNs;

    const next = new Map(a);
    next.set("status.json", '{"set":"a2"}\n');
    const r = await sink.sync(next);
    expect(r.written).toEqual(["status.json"]);
    expect(readlinkSync(join(out, "..data"))).not.toBe(first);
    expect(statSync(join(out, "ns/x-dns/db.a-0")).ino).toBe(unchanged);
    // Same mtime too: a reader that reloads on a changed mtime (CoreDNS's file plugin) has nothing to do.
    expect(statSync(join(out, "ns/x-dns/db.a-0"), { bigint: true }).mtimeNs).toBe(mtime);
    expect(shows(out, next)).toBe(true);
    // One generation remains; the same set again writes nothing.
    expect(readdirSync(out).filter((f) => f.startsWith("..") && f !== "..data")).toHaveLength(1);
    expect(await sink.sync(next)).toEqual({ written: [], removed: [] });
  });

  it("moves a folder of the earlier in-place layout into a generation, with a user's file in it", async () => {
    const out = fresh();
    const a = dnsSet("a", 2);
    for (const [rel, text] of a) {
      mkdirSync(join(out, rel, ".."), { recursive: true });
      writeFileSync(join(out, rel), text);
    }
    writeFileSync(join(out, ".oooi-index.json"), JSON.stringify({ generator: "oooi", files: [...a.keys()] }));
    writeFileSync(join(out, "ns/x-dns/mine.conf"), "user\n");
    writeFileSync(join(out, "README.txt"), "user\n");

    const sink = await FileSink.open(out);
    const b = dnsSet("b", 2);
    const r = await sink.sync(b);
    expect([...r.removed].sort()).toEqual(["ns/x-dns/db.a-0", "ns/x-dns/db.a-1"]);
    expect(lstatSync(join(out, "ns")).isSymbolicLink()).toBe(true);
    expect(shows(out, b)).toBe(true);
    expect(readFileSync(join(out, "ns/x-dns/mine.conf"), "utf8")).toBe("user\n");
    expect(readFileSync(join(out, "README.txt"), "utf8")).toBe("user\n");
    expect(existsSync(join(out, "ns/x-dns/db.a-0"))).toBe(false);
    // The user's file keeps moving on with later generations.
    await sink.sync(dnsSet("c", 1));
    expect(readFileSync(join(out, "ns/x-dns/mine.conf"), "utf8")).toBe("user\n");
  });

  it("carries a user's symlink inside oooi's folder into the next generation, as a symlink", async () => {
    const out = fresh();
    const sink = await FileSink.open(out);
    await sink.sync(dnsSet("a", 2));
    // Made through OUT/ns (a link into ..data): it lands inside the current generation.
    symlinkSync("Corefile", join(out, "ns/x-dns/mine.link"));
    symlinkSync("/nonexistent/elsewhere", join(out, "ns/x-dns/dangling.link"));
    for (const next of [dnsSet("b", 2), dnsSet("c", 1)]) {
      await sink.sync(next);
      expect(lstatSync(join(out, "ns/x-dns/mine.link")).isSymbolicLink()).toBe(true);
      expect(readlinkSync(join(out, "ns/x-dns/mine.link"))).toBe("Corefile");
      expect(readlinkSync(join(out, "ns/x-dns/dangling.link"))).toBe("/nonexistent/elsewhere");
      expect(shows(out, next)).toBe(true);
    }
  });
});

describe("FileSink stopped between the switch and the links", () => {
  // A first run's set switched in through ..data, then stopped before any top-level link was placed
  // (the index's among them): the next run must still know those files as its own.
  it.each([
    { when: "on its first set", links: ["ns", "status.json", ".oooi-index.json"] },
    { when: "with only the index link missing", links: [".oooi-index.json"] },
  ])("$when: the next run removes what it no longer renders and carries nothing as a user's", async ({ links }) => {
    const dir = fresh();
    await (await FileSink.open(dir)).sync(dnsSet("a", 2));
    for (const top of links) rmSync(join(dir, top));

    const next = await FileSink.open(dir);
    const r = await next.sync(new Map([["ns/y-dns/Corefile", ". {}\n"]]));
    expect([...r.removed].sort()).toEqual([...dnsSet("a", 2).keys()].sort());
    expect(existsSync(join(dir, "ns", "x-dns"))).toBe(false);
    expect(existsSync(join(dir, "status.json"))).toBe(false);
    expect(readFileSync(join(dir, "ns/y-dns/Corefile"), "utf8")).toBe(". {}\n");
  });
});
