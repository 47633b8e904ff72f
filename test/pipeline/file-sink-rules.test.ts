// FileSink and RetryingFileSink rule by rule, on real folders, from the module's header and
// docs/cli.md#oooi-render, docs/security.md (`--out` writes): only paths inside the folder are
// written; the index lists what oooi wrote and the next run removes only those files; generations
// are named `..YYYY_MM_DD_HH_MM_SS.<hex>` (UTC) and switched through OUT/..data; what a stopped run
// left (half-written generations, ..data_tmp, a link or folder set aside) goes at the next open; a
// failed write names its file and errno code; serve's writer retries with backoff 0.5–30 s.
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
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

const scratch = mkdtempSync(join(tmpdir(), "oooi-file-sink-rules-"));
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});
let n = 0;
const fresh = (): string => join(scratch, `out-${String(++n)}`);
const read = (out: string, rel: string): string => readFileSync(join(out, rel), "utf8");
const index = (files: readonly string[]): string => JSON.stringify({ generator: "oooi", files });
const sorted = (xs: readonly string[]): string[] => [...xs].sort();

/** The earlier in-place layout: the files themselves under OUT, and OUT/.oooi-index.json listing them. */
function inPlace(out: string, files: ReadonlyMap<string, string>): void {
  for (const [rel, text] of files) {
    mkdirSync(join(out, rel, ".."), { recursive: true });
    writeFileSync(join(out, rel), text);
  }
  writeFileSync(join(out, ".oooi-index.json"), index([...files.keys()]));
}

/** The error a promise rejects with (undefined when it resolves). */
const rejection = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );

/** A write that throws `error` for the path ending in `file`, and writes every other one. */
function failingOn(file: string, error: Error): WriteFileFn {
  return async (path, text) => {
    if (path.endsWith(`/${file}`)) throw error;
    await writeFile(path, text);
  };
}

describe("FileSink: which paths it writes", () => {
  it.each([
    "",
    "/etc/passwd",
    "..",
    "../x",
    "a/../../x",
    "..data/x",
    "..2025_01_02_03_04_05.ab/x",
    "..x",
    ".oooi-index.json",
  ])("refuses %j and writes nothing", async (rel) => {
    const out = fresh();
    const sink = await FileSink.open(out);
    const e = await rejection(
      sink.sync(
        new Map([
          ["status.json", "{}\n"],
          [rel, "x\n"],
        ]),
      ),
    );
    expect((e as Error).message).toBe(`refusing to write ${rel}: not a path inside the output folder`);
    expect(existsSync(out)).toBe(false);
  });

  it("takes a name that only contains two dots, and a path that stays inside after ..", async () => {
    const out = fresh();
    await (
      await FileSink.open(out)
    ).sync(
      new Map([
        ["ns/a..b", "1\n"],
        ["ns/x/../y", "2\n"],
      ]),
    );
    expect(read(out, "ns/a..b")).toBe("1\n");
    expect(read(out, "ns/y")).toBe("2\n");
  });

  it("treats as its own only the index's entries inside the folder, and removes only those", async () => {
    const parent = fresh();
    const out = join(parent, "out");
    mkdirSync(join(out, "ns"), { recursive: true });
    writeFileSync(join(parent, "notes.txt"), "mine\n");
    writeFileSync(join(out, "ns", "a"), "oooi\n");
    writeFileSync(join(out, "..x"), "mine\n");
    writeFileSync(
      join(out, ".oooi-index.json"),
      JSON.stringify({
        generator: "oooi",
        files: ["../notes.txt", join(parent, "notes.txt"), "..x", ".oooi-index.json", 7, "", "ns/a"],
      }),
    );
    const r = await (await FileSink.open(out)).sync(new Map([["status.json", "{}\n"]]));
    expect(r.removed).toEqual(["ns/a"]);
    expect(existsSync(join(out, "ns", "a"))).toBe(false);
    expect(read(parent, "notes.txt")).toBe("mine\n");
    expect(read(out, "..x")).toBe("mine\n");
  });

  it.each([
    { what: "another program's index", text: JSON.stringify({ generator: "other", files: ["ns/a"] }) },
    { what: "an index without a file list", text: JSON.stringify({ generator: "oooi", files: "ns/a" }) },
    { what: "an index that is not JSON", text: '{"generator": "oooi", "files": ["ns/a"' },
  ])("knows no file of its own from $what and leaves the folder's files", async ({ text }) => {
    const out = fresh();
    mkdirSync(join(out, "ns"), { recursive: true });
    writeFileSync(join(out, "ns", "a"), "someone's\n");
    writeFileSync(join(out, ".oooi-index.json"), text);
    const r = await (await FileSink.open(out)).sync(new Map([["status.json", "{}\n"]]));
    expect(r).toEqual({ written: ["status.json"], removed: [] });
    expect(read(out, "ns/a")).toBe("someone's\n");
    expect(JSON.parse(read(out, ".oooi-index.json"))).toEqual({ generator: "oooi", files: ["status.json"] });
  });
});

describe("FileSink: generations", () => {
  it.each([
    { at: Date.UTC(2025, 0, 2, 3, 4, 5), stamp: "2025_01_02_03_04_05" },
    { at: Date.UTC(2024, 11, 31, 23, 59, 58, 999), stamp: "2024_12_31_23_59_58" },
  ])("names a generation by the UTC second it was made: $stamp", async ({ at, stamp }) => {
    const out = fresh();
    await (await FileSink.open(out, { now: () => at })).sync(new Map([["status.json", "{}\n"]]));
    const generation = readlinkSync(join(out, "..data"));
    expect(generation).toMatch(new RegExp(`^\\.\\.${stamp}\\.[0-9a-f]{8}$`));
    expect(sorted(readdirSync(out))).toEqual(sorted([generation, "..data", ".oooi-index.json", "status.json"]));
  });

  it("makes no new generation for the same set, and none when only a removal changes it", async () => {
    const out = fresh();
    const sink = await FileSink.open(out);
    await sink.sync(
      new Map([
        ["a/x.json", "1\n"],
        ["status.json", "{}\n"],
      ]),
    );
    const first = readlinkSync(join(out, "..data"));
    expect(
      await sink.sync(
        new Map([
          ["a/x.json", "1\n"],
          ["status.json", "{}\n"],
        ]),
      ),
    ).toEqual({
      written: [],
      removed: [],
    });
    expect(readlinkSync(join(out, "..data"))).toBe(first);

    const r = await sink.sync(new Map([["status.json", "{}\n"]]));
    expect(r).toEqual({ written: [], removed: ["a/x.json"] });
    expect(readlinkSync(join(out, "..data"))).not.toBe(first);
    expect(existsSync(join(out, "a"))).toBe(false);
    expect(JSON.parse(read(out, ".oooi-index.json"))).toEqual({ generator: "oooi", files: ["status.json"] });
  });

  it("puts back a top-level link that went missing or points elsewhere, even when nothing changed", async () => {
    const out = fresh();
    const sink = await FileSink.open(out);
    const set = new Map([
      ["ns/a", "1\n"],
      ["status.json", "{}\n"],
    ]);
    await sink.sync(set);
    rmSync(join(out, "status.json"));
    rmSync(join(out, "ns"));
    symlinkSync("..data/status.json", join(out, "ns"));
    expect(await sink.sync(set)).toEqual({ written: [], removed: [] });
    expect(readlinkSync(join(out, "ns"))).toBe(join("..data", "ns"));
    expect(read(out, "status.json")).toBe("{}\n");
    expect(read(out, "ns/a")).toBe("1\n");
  });

  it("writes again an unchanged file that went missing from the generation", async () => {
    const out = fresh();
    const sink = await FileSink.open(out);
    await sink.sync(
      new Map([
        ["ns/a", "1\n"],
        ["status.json", "{}\n"],
      ]),
    );
    rmSync(join(out, "ns", "a")); // through the link: from the generation itself
    const r = await sink.sync(
      new Map([
        ["ns/a", "1\n"],
        ["status.json", "{ }\n"],
      ]),
    );
    expect(r.written).toEqual(["status.json"]);
    expect(read(out, "ns/a")).toBe("1\n");
  });

  it("removes the top-level link of a folder it no longer renders, unless a user's file is in it", async () => {
    const out = fresh();
    const sink = await FileSink.open(out);
    await sink.sync(
      new Map([
        ["a/x.json", "1\n"],
        ["b/y.json", "2\n"],
        ["status.json", "{}\n"],
      ]),
    );
    writeFileSync(join(out, "b", "mine.txt"), "user\n");
    const r = await sink.sync(new Map([["status.json", "{}\n"]]));
    expect(sorted(r.removed)).toEqual(["a/x.json", "b/y.json"]);
    expect(existsSync(join(out, "a"))).toBe(false);
    // Not even a dangling link (existsSync follows links).
    expect(() => lstatSync(join(out, "a"))).toThrow(/ENOENT/);
    expect(readdirSync(join(out, "b"))).toEqual(["mine.txt"]);
    expect(read(out, "b/mine.txt")).toBe("user\n");
  });

  it("writes its own content over a user's file at a path it now renders", async () => {
    const out = fresh();
    const sink = await FileSink.open(out);
    await sink.sync(new Map([["ns/a", "1\n"]]));
    writeFileSync(join(out, "ns", "b"), "user\n");
    await sink.sync(
      new Map([
        ["ns/a", "1\n"],
        ["ns/b", "oooi\n"],
      ]),
    );
    expect(read(out, "ns/b")).toBe("oooi\n");
  });

  it("leaves a user's symlink at the top level alone when the name it shares is no longer rendered", async () => {
    const out = fresh();
    const sink = await FileSink.open(out);
    await sink.sync(
      new Map([
        ["a/x.json", "1\n"],
        ["status.json", "{}\n"],
      ]),
    );
    rmSync(join(out, "a"));
    mkdirSync(join(scratch, "elsewhere"), { recursive: true });
    symlinkSync(join(scratch, "elsewhere"), join(out, "a"));
    await sink.sync(new Map([["status.json", "{}\n"]]));
    expect(readlinkSync(join(out, "a"))).toBe(join(scratch, "elsewhere"));
  });
});

describe("FileSink: what a stopped run left", () => {
  it("at open removes other generations, ..data_tmp and the links and folders a switch set aside; nothing else", async () => {
    const out = fresh();
    await (await FileSink.open(out)).sync(new Map([["status.json", "{}\n"]]));
    const current = readlinkSync(join(out, "..data"));
    const stale = ["..2020_01_01_00_00_00.deadbeef", "..2026_12_31_23_59_59.0"];
    for (const g of stale) mkdirSync(join(out, g, "ns"), { recursive: true });
    symlinkSync(stale[0] ?? "", join(out, "..data_tmp"));
    mkdirSync(join(out, "..oooi-old-ns", "x"), { recursive: true });
    symlinkSync("..data/status.json", join(out, "..oooi-link-status.json"));
    const users = ["..2020_01_01_00_00_00.deadbeef.bak", "old..2020_01_01_00_00_00.deadbeef", "..keep", "notes.txt"];
    for (const u of users) writeFileSync(join(out, u), "user\n");

    await FileSink.open(out);
    expect(sorted(readdirSync(out))).toEqual(sorted([current, "..data", ".oooi-index.json", "status.json", ...users]));
  });

  it("keeps an unchanged file's inode after a run stopped before placing the top-level links", async () => {
    const out = fresh();
    const set = new Map([
      ["ns/a", "1\n"],
      ["status.json", "{}\n"],
    ]);
    await (await FileSink.open(out)).sync(set);
    const inode = statSync(join(out, "..data", "ns", "a")).ino;
    for (const top of ["ns", "status.json", ".oooi-index.json"]) rmSync(join(out, top));
    const next = new Map(set).set("status.json", "{ }\n");
    const r = await (await FileSink.open(out)).sync(next);
    expect(r).toEqual({ written: ["status.json"], removed: [] });
    expect(statSync(join(out, "ns", "a")).ino).toBe(inode);
  });

  it("continues from a folder ..data names, and a run of the in-place layout from its index", async () => {
    const generations = fresh();
    await (await FileSink.open(generations)).sync(new Map([["ns/a", "1\n"]]));
    const layout = fresh();
    inPlace(layout, new Map([["ns/a", "1\n"]]));
    for (const out of [generations, layout]) {
      const r = await (await FileSink.open(out)).sync(new Map([["ns/b", "2\n"]]));
      expect(r, out).toEqual({ written: ["ns/b"], removed: ["ns/a"] });
      expect(existsSync(join(out, "ns", "a"))).toBe(false);
    }
  });
});

describe("FileSink: the earlier in-place layout", () => {
  it("keeps an unchanged file's content when it moves into the first generation", async () => {
    const out = fresh();
    inPlace(
      out,
      new Map([
        ["ns/x-dns/Corefile", "file db\n"],
        ["ns/x-dns/db", "; zone\n"],
      ]),
    );
    const r = await (
      await FileSink.open(out)
    ).sync(
      new Map([
        ["ns/x-dns/Corefile", "file db\n"],
        ["ns/x-dns/db", "; zone 2\n"],
      ]),
    );
    expect(r).toEqual({ written: ["ns/x-dns/db"], removed: [] });
    expect(lstatSync(join(out, "ns")).isSymbolicLink()).toBe(true);
    expect(read(out, "ns/x-dns/Corefile")).toBe("file db\n");
    expect(read(out, "ns/x-dns/db")).toBe("; zone 2\n");
  });

  it("removes its files of a top-level folder and file it no longer renders, with a stopped write's temporary", async () => {
    const out = fresh();
    inPlace(
      out,
      new Map([
        ["old/x/a.json", "{}\n"],
        ["top.json", "{}\n"],
        ["kept/b.json", "{}\n"],
      ]),
    );
    writeFileSync(join(out, "old", "x", "a.json.oooi-tmp"), "{");
    writeFileSync(join(out, "kept", "mine.txt"), "user\n");
    writeFileSync(join(out, "notes.txt"), "user\n");
    const r = await (await FileSink.open(out)).sync(new Map([["new/c.json", "{}\n"]]));
    expect(sorted(r.removed)).toEqual(["kept/b.json", "old/x/a.json", "top.json"]);
    expect(sorted(readdirSync(out).filter((f) => !f.startsWith("..")))).toEqual(
      sorted([".oooi-index.json", "kept", "new", "notes.txt"]),
    );
    expect(readdirSync(join(out, "kept"))).toEqual(["mine.txt"]);
    expect(read(out, "new/c.json")).toBe("{}\n");
  });
});

describe("OutputWriteError", () => {
  it.each([
    {
      what: "a code the message does not name is added",
      error: Object.assign(new Error("permission denied"), { code: "EACCES" }),
      message: "permission denied (EACCES)",
      code: "EACCES",
    },
    {
      what: "a code the message names is not repeated",
      error: Object.assign(new Error("EIO: i/o error, write"), { code: "EIO" }),
      message: "EIO: i/o error, write",
      code: "EIO",
    },
    {
      what: "a full disk is said in words",
      error: Object.assign(new Error("boom"), { code: "ENOSPC" }),
      message: "no space left on device (ENOSPC)",
      code: "ENOSPC",
    },
    { what: "an error without a code", error: new Error("disk on fire"), message: "disk on fire", code: undefined },
  ])("$what", async ({ error, message, code }) => {
    const out = fresh();
    const sink = await FileSink.open(out, { writeFile: failingOn("db", error) });
    const e = await rejection(sink.sync(new Map([["ns/x-dns/db", "; zone\n"]])));
    expect(e).toBeInstanceOf(OutputWriteError);
    expect(e).toMatchObject({ name: "OutputWriteError", file: "ns/x-dns/db", code });
    expect((e as Error).message).toBe(`cannot write ns/x-dns/db in ${out}: ${message}`);
    // A first set that could not be written leaves nothing behind.
    expect(readdirSync(out)).toEqual([]);
  });

  it("names the index when the index is what could not be written", async () => {
    const out = fresh();
    const error = Object.assign(new Error("no space"), { code: "ENOSPC" });
    const sink = await FileSink.open(out, { writeFile: failingOn(".oooi-index.json", error) });
    const e = await rejection(sink.sync(new Map([["status.json", "{}\n"]])));
    expect(e).toMatchObject({ file: ".oooi-index.json", code: "ENOSPC" });
    expect(readdirSync(out)).toEqual([]);
  });

  it("names the folder a user's file could not be carried into", async () => {
    const out = fresh();
    const sink = await FileSink.open(out);
    await sink.sync(new Map([["ns/a", "1\n"]]));
    mkdirSync(join(out, "ns", "user"));
    writeFileSync(join(out, "ns", "user", "mine.txt"), "user\n");
    // The next set has a file where the user's folder stood: that folder cannot be made.
    const e = await rejection(sink.sync(new Map([["ns/user", "oooi\n"]])));
    expect(e).toMatchObject({ name: "OutputWriteError", file: "ns/user/mine.txt" });
    expect(read(out, "ns/user/mine.txt")).toBe("user\n");
  });
});

/** Timers a test fires by hand; handles are the entries. */
function manualTimers(): {
  pending: { callback: () => void; ms: number }[];
  cleared: unknown[];
  timers: { setTimeout: (callback: () => void, ms: number) => unknown; clearTimeout: (h: unknown) => void };
} {
  const pending: { callback: () => void; ms: number }[] = [];
  const cleared: unknown[] = [];
  return {
    pending,
    cleared,
    timers: {
      setTimeout: (callback, ms) => {
        const handle = { callback, ms };
        pending.push(handle);
        return handle;
      },
      clearTimeout: (h) => cleared.push(h),
    },
  };
}

describe("RetryingFileSink", () => {
  const set = (tag: string): Map<string, string> => new Map([["status.json", `{"set":"${tag}"}\n`]]);

  it("syncs the first set and then only the newest of those given meanwhile", async () => {
    const out = fresh();
    const synced: FileSinkResult[] = [];
    const failed: Error[] = [];
    const writer = new RetryingFileSink(FileSink.open(out), {
      synced: (r) => synced.push(r),
      failed: (e) => failed.push(e),
    });
    writer.submit(set("a"));
    writer.submit(set("b"));
    writer.submit(set("c"));
    await until(() => synced.length === 2, "two syncs");
    expect(read(out, "status.json")).toBe('{"set":"c"}\n');
    // b was replaced before its turn: no third sync follows, none failed.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect({ synced: synced.length, failed }).toEqual({ synced: 2, failed: [] });
    writer.close();
  });

  it("waits 0.5 s after the first failure, then longer, never over 30 s (jittered by up to half)", async () => {
    const { pending, timers } = manualTimers();
    const delays: number[] = [];
    const attempts: number[] = [];
    const full = Object.assign(new Error("no space"), { code: "ENOSPC" });
    const writer = new RetryingFileSink(
      FileSink.open(fresh(), { writeFile: failingOn("status.json", full) }),
      {
        synced: () => undefined,
        failed: (_e, attempt, ms) => {
          attempts.push(attempt);
          delays.push(ms);
        },
      },
      { timers },
    );
    writer.submit(set("a"));
    for (let i = 1; i <= 9; i++) {
      await until(() => delays.length === i, `failure ${String(i)}`);
      if (i < 9) pending.shift()?.callback();
    }
    expect(attempts).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const first = delays[0] ?? 0;
    expect(first).toBeGreaterThanOrEqual(250);
    expect(first).toBeLessThanOrEqual(500);
    for (const d of delays.slice(7)) {
      expect(d).toBeGreaterThanOrEqual(15_000);
      expect(d).toBeLessThanOrEqual(30_000);
    }
    writer.close();
  });

  it("counts attempts again from 1 after a success", async () => {
    const { pending, timers } = manualTimers();
    let full = true;
    const attempts: number[] = [];
    let synced = 0;
    const write: WriteFileFn = async (path, text) => {
      if (full) throw Object.assign(new Error("no space"), { code: "ENOSPC" });
      await writeFile(path, text);
    };
    const writer = new RetryingFileSink(
      FileSink.open(fresh(), { writeFile: write }),
      { synced: () => (synced += 1), failed: (_e, attempt) => attempts.push(attempt) },
      { timers, backoff: { initialMs: 100, jitter: 0 } },
    );
    writer.submit(set("a"));
    await until(() => attempts.length === 1, "first failure");
    pending.shift()?.callback();
    await until(() => attempts.length === 2, "second failure");
    full = false;
    pending.shift()?.callback();
    await until(() => synced === 1, "the retry succeeded");
    full = true;
    writer.submit(set("b"));
    await until(() => attempts.length === 3, "third failure");
    expect(attempts).toEqual([1, 2, 1]);
    writer.close();
  });

  it("retries the newest set when a newer one arrived while the failing sync ran", async () => {
    const { pending, timers } = manualTimers();
    let full = true;
    let failures = 0;
    let synced = 0;
    const write: WriteFileFn = async (path, text) => {
      if (full) throw Object.assign(new Error("no space"), { code: "ENOSPC" });
      await writeFile(path, text);
    };
    const out = fresh();
    const writer = new RetryingFileSink(
      FileSink.open(out, { writeFile: write }),
      { synced: () => (synced += 1), failed: () => (failures += 1) },
      { timers },
    );
    writer.submit(set("b"));
    writer.submit(set("c")); // while b's sync is running
    await until(() => failures === 1, "b failed");
    full = false;
    pending.shift()?.callback();
    await until(() => synced === 1, "the retry succeeded");
    expect(read(out, "status.json")).toBe('{"set":"c"}\n');
    writer.close();
  });

  it("close cancels the retry waiting and syncs nothing more", async () => {
    const { pending, cleared, timers } = manualTimers();
    const full = Object.assign(new Error("no space"), { code: "ENOSPC" });
    let failures = 0;
    let synced = 0;
    const writer = new RetryingFileSink(
      FileSink.open(fresh(), { writeFile: failingOn("status.json", full) }),
      { synced: () => (synced += 1), failed: () => (failures += 1) },
      { timers },
    );
    writer.submit(set("a"));
    await until(() => failures === 1, "a failed");
    writer.close();
    expect(cleared).toEqual([pending[0]]);
    writer.submit(set("b"));
    pending.shift()?.callback();
    // Neither the cancelled retry nor a later set runs: no failure, no sync follows.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect({ failures, synced }).toEqual({ failures: 1, synced: 0 });
  });
});
