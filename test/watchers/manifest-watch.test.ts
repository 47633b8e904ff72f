import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { filter, firstValueFrom, lastValueFrom, take, timeout, toArray, type Observable, type Subscription } from "rxjs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { watchManifestDir } from "../../src/watchers/manifest-watch.js";
import type { ManifestLoad } from "../../src/watchers/manifests.js";

const service = (name: string) => `apiVersion: v1\nkind: Service\nmetadata: {name: ${name}, namespace: n}\n`;
const serviceNames = (l: ManifestLoad): string[] => (l.ok ? l.state.services.map((s) => s.metadata.name) : []);
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
        if (w.pred(l)) { this.waiters.splice(this.waiters.indexOf(w), 1); w.resolve(l); }
      }
    });
  }
  next(pred: (l: ManifestLoad) => boolean): Promise<ManifestLoad> {
    const already = this.seen.at(-1);
    if (already !== undefined && pred(already)) return Promise.resolve(already);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => { reject(new Error(`no matching emission; saw ${JSON.stringify(this.seen.map(serviceNames))}`)); }, GUARD.first);
      this.waiters.push({ pred, resolve: (l) => { clearTimeout(t); resolve(l); } });
    });
  }
}

describe("watchManifestDir", () => {
  let dir: string;
  let rec: Recorder | undefined;
  beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), "oooi-watch-")); });
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

  it("sees files in new subdirectories and reports broken YAML, then recovers", async () => {
    rec = new Recorder(watchManifestDir(dir, { debounceMs: 50 }));
    await rec.next((l) => l.ok);
    await mkdir(join(dir, "sub"));
    await writeFile(join(dir, "sub", "x.yaml"), service("nested"));
    await rec.next((l) => serviceNames(l).includes("nested"));
    await writeFile(join(dir, "sub", "x.yaml"), "kind: [oops\n");
    const broken = await rec.next((l) => !l.ok);
    expect(broken.ok ? undefined : broken.error.file).toBe("sub/x.yaml");
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

  it("emits the failed load and completes when the directory is missing", async () => {
    const all = await lastValueFrom(watchManifestDir(join(dir, "missing"), { debounceMs: 50 }).pipe(take(5), toArray(), timeout(GUARD.first)));
    expect(all).toHaveLength(1);
    expect(all[0]?.ok).toBe(false);
    expect(all[0]?.ok === false ? all[0].error.message : "").toMatch(/ENOENT/);
  });

  it("stops watching on unsubscribe", async () => {
    const r = new Recorder(watchManifestDir(dir, { debounceMs: 10 }));
    await r.next((l) => l.ok);
    r.sub.unsubscribe();
    const count = r.seen.length;
    await writeFile(join(dir, "svc.yaml"), service("late"));
    // Wait for any stray emission through an independent watcher that does see the change.
    await firstValueFrom(watchManifestDir(dir, { debounceMs: 10 }).pipe(filter((l) => serviceNames(l).includes("late")), timeout(GUARD.first)));
    expect(r.seen.length).toBe(count);
  });
});
