// The manifest watcher against the real filesystem: every kind of edit a person, an editor, sed -i
// or git makes is seen; editors' scratch files are not. The coalescing window is a marble test.
import { mkdir, mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { filter, firstValueFrom, of, timeout, type Observable, type Subscription } from "rxjs";
import { TestScheduler } from "rxjs/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  CHANGE_ECHO_MS,
  fileEvents,
  isScratchPath,
  oneAtATime,
  reloadOnEvents,
  SCAN_AFTER_MS,
  watchManifestDir,
  type LoadRequest,
  type WatchEvent,
} from "../../src/watchers/manifest-watch.js";
import type { ManifestLoad } from "../../src/watchers/manifests.js";

const service = (name: string) => `apiVersion: v1\nkind: Service\nmetadata: {name: ${name}, namespace: n}\n`;
const serviceNames = (l: ManifestLoad): string[] => (l.ok ? [...l.state.services].map((s) => s.metadata.name) : []);
// A guard against a hung watcher, not a performance assertion.
const GUARD = { first: 15_000 };

/** Records every emission so a test can wait for one that satisfies a predicate. */
class Recorder {
  readonly seen: ManifestLoad[] = [];
  private readonly waiters: { pred: (l: ManifestLoad) => boolean; resolve: (l: ManifestLoad) => void }[] = [];
  readonly sub: Subscription;
  constructor(source: Observable<ManifestLoad>) {
    this.sub = source.subscribe((l) => {
      this.seen.push(l);
      for (const w of [...this.waiters]) {
        if (w.pred(l)) {
          this.waiters.splice(this.waiters.indexOf(w), 1);
          w.resolve(l);
        }
      }
    });
  }
  next(pred: (l: ManifestLoad) => boolean): Promise<ManifestLoad> {
    const already = this.seen.at(-1);
    if (already !== undefined && pred(already)) return Promise.resolve(already);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => {
        reject(
          new Error(
            `no matching emission; saw ${JSON.stringify(this.seen.map((l) => (l.ok ? serviceNames(l) : l.error.message)))}`,
          ),
        );
      }, GUARD.first);
      this.waiters.push({
        pred,
        resolve: (l) => {
          clearTimeout(t);
          resolve(l);
        },
      });
    });
  }
}

describe("watchManifestDir", () => {
  let dir: string;
  let rec: Recorder | undefined;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "oooi-watch-"));
  });
  afterEach(async () => {
    rec?.sub.unsubscribe();
    rec = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it("emits the current state at once, then the state after an edit", async () => {
    await writeFile(join(dir, "svc.yaml"), service("before"));
    const first = await firstValueFrom(watchManifestDir(dir, { debounceMs: 50 }).pipe(timeout(GUARD.first)));
    expect(serviceNames(first)).toEqual(["before"]);

    rec = new Recorder(watchManifestDir(dir, { debounceMs: 50 }));
    await rec.next((l) => serviceNames(l).includes("before"));
    await writeFile(join(dir, "svc.yaml"), service("after"));
    expect(serviceNames(await rec.next((l) => serviceNames(l).includes("after")))).toEqual(["after"]);
  });

  it("sees files in new subdirectories and reports broken YAML (keeping what the file defined), then recovers", async () => {
    rec = new Recorder(watchManifestDir(dir, { debounceMs: 50 }));
    await rec.next((l) => l.ok);
    await mkdir(join(dir, "sub"));
    await writeFile(join(dir, "sub", "x.yaml"), service("nested"));
    await rec.next((l) => serviceNames(l).includes("nested"));
    await writeFile(join(dir, "sub", "x.yaml"), "kind: [oops\n");
    const broken = await rec.next((l) => l.ok && l.problems.length > 0);
    expect(broken.ok ? broken.problems.map((p) => p.file) : undefined).toEqual(["sub/x.yaml"]);
    expect(serviceNames(broken)).toEqual(["nested"]);
    await writeFile(join(dir, "sub", "x.yaml"), service("fixed"));
    await rec.next((l) => serviceNames(l).includes("fixed"));
  });

  it("coalesces a burst of writes and ends on the last content", async () => {
    rec = new Recorder(watchManifestDir(dir, { debounceMs: 1000 }));
    await rec.next((l) => l.ok);
    const before = rec.seen.length;
    const writes = 10;
    // Spaced so that each write would get its own reload without the coalescing window.
    for (let i = 0; i < writes; i++) {
      await writeFile(join(dir, "svc.yaml"), service(`v${i}`));
      await new Promise((r) => setTimeout(r, 25));
    }
    await rec.next((l) => serviceNames(l).includes(`v${writes - 1}`));
    expect(rec.seen.length - before).toBeLessThan(writes);
  });

  it("sees a file replaced by rename (sed -i, an editor's atomic save) and in-place writes after it", async () => {
    const file = join(dir, "svc.yaml");
    await writeFile(file, service("v1"));
    rec = new Recorder(watchManifestDir(dir, { debounceMs: 20 }));
    await rec.next((l) => serviceNames(l).includes("v1"));
    await writeFile(join(dir, "svc.yaml.new"), service("renamed"));
    await rename(join(dir, "svc.yaml.new"), file);
    await rec.next((l) => serviceNames(l).includes("renamed"));
    // Node's recursive fs.watch stayed on the replaced inode: this write went unseen.
    await writeFile(file, service("in-place"));
    await rec.next((l) => serviceNames(l).includes("in-place"));
    await writeFile(file, service("again"));
    await rec.next((l) => serviceNames(l).includes("again"));
  });

  it("two writes of one file a few ms apart: the second is loaded, and a load that changed nothing is not emitted", async () => {
    const file = join(dir, "svc.yaml");
    await writeFile(file, service("v0"));
    rec = new Recorder(watchManifestDir(dir, { debounceMs: 20 }));
    await rec.next((l) => serviceNames(l).includes("v0"));
    // Same size: chokidar reports the first and drops the second (one change per file per 50 ms).
    await writeFile(file, service("v1"));
    await writeFile(file, service("v2"));
    await rec.next((l) => serviceNames(l).includes("v2"));
    // The echo and the scan read the file again and find nothing new: no further load.
    const count = rec.seen.length;
    await new Promise((r) => setTimeout(r, SCAN_AFTER_MS + 500));
    expect(rec.seen.slice(count).map(serviceNames)).toEqual([]);
  });

  it("sees a file deleted and re-created, and a whole sub-folder removed", async () => {
    await mkdir(join(dir, "sub"));
    await writeFile(join(dir, "sub", "a.yaml"), service("a"));
    rec = new Recorder(watchManifestDir(dir, { debounceMs: 20 }));
    await rec.next((l) => serviceNames(l).includes("a"));
    await rm(join(dir, "sub", "a.yaml"));
    await rec.next((l) => l.ok && serviceNames(l).length === 0);
    await writeFile(join(dir, "sub", "a.yaml"), service("back"));
    await rec.next((l) => serviceNames(l).includes("back"));
    await rm(join(dir, "sub"), { recursive: true });
    await rec.next((l) => l.ok && serviceNames(l).length === 0);
    await mkdir(join(dir, "sub2", "deeper"), { recursive: true });
    await writeFile(join(dir, "sub2", "deeper", "b.yaml"), service("deep"));
    await rec.next((l) => serviceNames(l).includes("deep"));
  });

  // The watcher of a removed folder reports nothing more, not even its return (chokidar); the scan
  // that follows the removal's events is over a second later. The later rows re-create it past that scan.
  it.each([
    ["re-created with its file at once", "none"],
    ["re-created with its file long after it was removed", "before mkdir"],
    ["re-created empty, its file written long after", "after mkdir"],
  ] as const)("reports the folder gone when it is removed, and serves it %s", async (_name, pause) => {
    const folder = join(dir, "m");
    await mkdir(folder);
    await writeFile(join(folder, "svc.yaml"), service("first"));
    rec = new Recorder(watchManifestDir(folder, { debounceMs: 20 }));
    await rec.next((l) => serviceNames(l).includes("first"));
    await rm(folder, { recursive: true });
    const gone = await rec.next((l) => !l.ok);
    expect(gone.ok ? "" : gone.error.message).toMatch(/ENOENT/);
    const wait = () => new Promise((r) => setTimeout(r, 2 * SCAN_AFTER_MS));
    if (pause === "before mkdir") await wait();
    await mkdir(folder);
    if (pause === "after mkdir") await wait();
    await writeFile(join(folder, "svc.yaml"), service("back"));
    await rec.next((l) => serviceNames(l).includes("back"));
  });

  it("stops watching on unsubscribe", async () => {
    const r = new Recorder(watchManifestDir(dir, { debounceMs: 10 }));
    await r.next((l) => l.ok);
    r.sub.unsubscribe();
    const count = r.seen.length;
    await writeFile(join(dir, "svc.yaml"), service("late"));
    // Wait for any stray emission through an independent watcher that does see the change.
    await firstValueFrom(
      watchManifestDir(dir, { debounceMs: 10 }).pipe(
        filter((l) => serviceNames(l).includes("late")),
        timeout(GUARD.first),
      ),
    );
    expect(r.seen.length).toBe(count);
  });
});

describe("fileEvents", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "oooi-events-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it.each([
    ["4913", true],
    [".infra.yaml.swp", true],
    [".infra.yaml.swx", true],
    ["infra.yaml~", true],
    [".#infra.yaml", true],
    ["infra.yaml.tmp", true],
    ["envoy.json.oooi-tmp", true],
    [".git", true],
    ["infra.yaml", false],
    ["sub", false],
    ["..data", false],
    ["tmp.yaml", false],
  ])("isScratchPath(%s) = %s", (name, scratch) => {
    expect(isScratchPath(join(dir, name))).toBe(scratch);
  });

  it("reports manifest edits and none of an editor's scratch files", async () => {
    const seen: string[] = [];
    const sub = fileEvents(dir).subscribe((e) => {
      if (e.type === "change") seen.push(e.path);
    });
    try {
      // chokidar reports nothing before it has scanned the folder: wait until a probe is seen.
      await writeUntilSeen(join(dir, "probe.yaml"), seen, "probe.yaml");
      for (const name of ["4913", ".infra.yaml.swp", "infra.yaml~", ".#infra.yaml", "infra.yaml.tmp"]) {
        await writeFile(join(dir, name), "scratch");
      }
      await mkdir(join(dir, ".git"));
      await writeFile(join(dir, ".git", "HEAD"), "ref");
      await writeFile(join(dir, "infra.yaml"), "kind: Namespace\n");
      await waitFor(() => seen.includes("infra.yaml"));
      expect(seen.filter((p) => p !== "probe.yaml" && p !== "infra.yaml")).toEqual([]);
    } finally {
      sub.unsubscribe();
    }
  });
});

async function waitFor(check: () => boolean): Promise<void> {
  const deadline = Date.now() + GUARD.first;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not reached");
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function writeUntilSeen(path: string, seen: readonly string[], rel: string): Promise<void> {
  const deadline = Date.now() + GUARD.first;
  for (let i = 0; !seen.includes(rel); i++) {
    if (Date.now() > deadline) throw new Error(`${rel} never reported`);
    await writeFile(path, `# ${String(i)}\n`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("reloadOnEvents (marble)", () => {
  const events = (marble: string, cold: (m: string, v: Record<string, WatchEvent>) => Observable<WatchEvent>) =>
    cold(marble, {
      r: { type: "ready" },
      a: { type: "change", path: "a.yaml" },
      b: { type: "change", path: "b.yaml" },
      c: { type: "change", path: "c.yaml" },
      d: { type: "change", path: "d.yaml" },
    });
  /** What a load was asked to read: "F" = the whole folder, else the paths. */
  const asked = (r: LoadRequest): Observable<string> => of(r === undefined ? "F" : [...r].sort().join(","));
  const scheduler = () =>
    new TestScheduler((actual, expected) => {
      expect(actual).toEqual(expected);
    });

  it("loads when ready, at the first change of a burst, at the end of its window, and once more after the echo gap", () => {
    expect(CHANGE_ECHO_MS).toBe(60); // the marbles below are drawn for it
    const s = scheduler();
    s.run(({ cold, expectObservable }) => {
      // 10 ms window. ready at 0 → whole folder; changes at 2, 4, 6 fall in its window → one load
      // of the three at 10; the change at 24 → load at 24; the echoes at 62, 64, 66 → loads at 62
      // and 72; 24's echo → 84. Each load reads what was reported since the previous one.
      const source = events("r-a-b-c 17ms d|", cold);
      expectObservable(reloadOnEvents(source, { load: asked }, { debounceMs: 10, scheduler: s })).toBe(
        "F 9ms x 13ms d 37ms a 9ms y 11ms (d|)",
        { F: "F", x: "a.yaml,b.yaml,c.yaml", d: "d.yaml", a: "a.yaml", y: "b.yaml,c.yaml" },
      );
    });
  });

  it("with no window (--debounce 0), loads at each change; a load that takes time reads what came meanwhile", () => {
    const s = scheduler();
    s.run(({ cold, expectObservable }) => {
      // Instant loads: one per change (0, 2, 4) and per echo (62, 64).
      const source = events("r-a-b|", cold);
      expectObservable(reloadOnEvents(source, { load: asked }, { debounceMs: 0, scheduler: s })).toBe(
        "F-a-b 57ms a-(b|)",
        { F: "F", a: "a.yaml", b: "b.yaml" },
      );
    });
    const slow = scheduler();
    slow.run(({ cold, expectObservable }) => {
      // Loads of 5 ms: the folder's from 0 to 5 holds back a (at 2) and b (at 4), read by one load
      // from 5 to 10; c at 12 is read at once (12 to 17); the echoes at 62, 64 and 72 are read one
      // after another (62 to 67, 67 to 72, 72 to 77).
      const source = events("r-a-b 7ms c|", cold);
      const load = (r: LoadRequest) => cold("5ms (x|)", { x: r === undefined ? "F" : [...r].sort().join(",") });
      expectObservable(reloadOnEvents(source, { load }, { debounceMs: 0, scheduler: slow })).toBe(
        "5ms F 4ms x 6ms c 49ms a 4ms b 4ms (c|)",
        { F: "F", x: "a.yaml,b.yaml", c: "c.yaml", a: "a.yaml", b: "b.yaml" },
      );
    });
  });

  it("scans a while after a change (once per period while they keep coming) and reads what the scan found", () => {
    const s = scheduler();
    s.run(({ cold, expectObservable }) => {
      // The change at 2 → the scan starts at 27 and finds z.yaml at 32; the echo at 62 → another
      // scan at 87, found at 92. The load of a.yaml at 10 is the window's trailing edge.
      const source = events("r-a|", cold);
      const scan = () => cold("5ms (s|)", { s: new Set(["z.yaml"]) });
      expectObservable(
        reloadOnEvents(source, { load: asked, scan, scanAfterMs: 25 }, { debounceMs: 10, scheduler: s }),
      ).toBe("F 9ms a 21ms z 29ms a 29ms (z|)", { F: "F", a: "a.yaml", z: "z.yaml" });
    });
  });

  it("a scan that finds a folder changed reads the whole folder; one that finds nothing loads nothing", () => {
    const s = scheduler();
    s.run(({ cold, expectObservable }) => {
      const source = events("r-a|", cold);
      let n = 0;
      const scan = () => cold("5ms (s|)", { s: n++ === 0 ? undefined : new Set<string>() });
      expectObservable(
        reloadOnEvents(source, { load: asked, scan, scanAfterMs: 25 }, { debounceMs: 10, scheduler: s }),
      ).toBe("F 9ms a 21ms F 29ms a 29ms |", { F: "F", a: "a.yaml" });
    });
  });
});

describe("oneAtATime", () => {
  it("runs one load at a time; what is asked meanwhile is answered by one more run after it", () => {
    const s = new TestScheduler((actual, expected) => {
      expect(actual).toEqual(expected);
    });
    s.run(({ cold, hot, expectObservable }) => {
      let n = 0;
      // Each run takes 10 ms. Asks at 0 (runs 0–10), 2 and 4 (one run 10–20), 25 (runs 25–35).
      const runs = () => cold("10ms (x|)", { x: n++ });
      expectObservable(hot("a-b-c 20ms d|").pipe(oneAtATime(runs))).toBe("10ms a 9ms b 14ms (c|)", {
        a: 0,
        b: 1,
        c: 2,
      });
    });
  });
});
