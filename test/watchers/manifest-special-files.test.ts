// Issue 25 rows 3, 4, 5, 11: what the manifest folder may hold besides manifests. A FIFO, a socket,
// a file over the size limit and a symbolic link loop are each a problem naming the path, never a
// hang or a crash, and the other files are read; a watch that fails as a whole (EMFILE) comes back.
// Real files, FIFOs, sockets and symbolic links in a temporary folder; a real chokidar watcher.
import { execFileSync } from "node:child_process";
import { mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { watch } from "chokidar";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ManifestReader, type ManifestRead } from "../../src/watchers/manifest-cache.js";
import { fileEvents, type WatchEvent, type WatchHealth } from "../../src/watchers/manifest-watch.js";
import { formatManifestError, loadManifestDir, loadManifests } from "../../src/watchers/manifests.js";
import { until } from "../support/cli.js";

const service = (name: string, ip = "10.0.0.1") =>
  `apiVersion: v1\nkind: Service\nmetadata: {name: ${name}, namespace: n}\nspec: {clusterIP: ${ip}}\n`;
const problems = (r: ManifestRead): string[] =>
  r.load.ok ? r.load.problems.map((p) => formatManifestError(p)) : [`unreadable: ${r.load.error.message}`];
const ips = (r: ManifestRead): string[] =>
  r.load.ok ? [...r.load.state.services].map((s) => `${s.metadata.name}=${String(s.spec?.clusterIP)}`) : [];

describe("special entries in the manifest folder", () => {
  let dir: string;
  let socket: Server | undefined;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "oooi-special-"));
  });
  afterEach(async () => {
    socket?.close();
    socket = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it("a FIFO and a socket are named problems, never opened; the other files are read", async () => {
    await writeFile(join(dir, "a.yaml"), service("a"));
    execFileSync("mkfifo", [join(dir, "fifo.yaml")]);
    const s = createServer();
    socket = s;
    await new Promise<void>((resolve) => s.listen(join(dir, "sock.yaml"), resolve));
    const r = await new ManifestReader(dir).read();
    expect(ips(r)).toEqual(["a=10.0.0.1"]);
    expect(problems(r)).toEqual([
      "fifo.yaml: cannot read file: not a regular file: it is a FIFO (named pipe); only regular files are read",
      "sock.yaml: cannot read file: not a regular file: it is a socket; only regular files are read",
    ]);
    // render's reads: the folder and the FIFO named on its own.
    const whole = await loadManifestDir(dir);
    expect(whole.ok ? "" : formatManifestError(whole.error)).toMatch(/^fifo\.yaml: cannot read file: not a regular/);
    const one = await loadManifests(join(dir, "fifo.yaml"));
    expect(one.ok ? "" : one.error.message).toMatch(/FIFO/);
  });

  it("a file replaced by a FIFO keeps what it defined; later edits of other files are read", async () => {
    await writeFile(join(dir, "a.yaml"), service("a"));
    await writeFile(join(dir, "b.yaml"), service("b"));
    const reader = new ManifestReader(dir);
    await reader.read();
    await rm(join(dir, "a.yaml"));
    execFileSync("mkfifo", [join(dir, "a.yaml")]);
    expect(ips(await reader.readPaths(["a.yaml"]))).toEqual(["a=10.0.0.1", "b=10.0.0.1"]);
    await writeFile(join(dir, "b.yaml"), service("b", "10.0.0.2"));
    const r = await reader.readPaths(["b.yaml"]);
    expect(ips(r)).toEqual(["a=10.0.0.1", "b=10.0.0.2"]);
    expect(problems(r)).toEqual([expect.stringMatching(/^a\.yaml: .*FIFO/)]);
  });

  it("a file over --max-manifest-bytes is named with the limit; the rest is read; once removed nothing of it is left", async () => {
    await writeFile(join(dir, "a.yaml"), service("a"));
    const big = `# ${"x".repeat(2000)}\n${service("big")}`;
    await writeFile(join(dir, "big.yaml"), big);
    const reader = new ManifestReader(dir, { maxFileBytes: 1024 });
    const r = await reader.read();
    expect(ips(r)).toEqual(["a=10.0.0.1"]);
    expect(problems(r)).toEqual([
      `big.yaml: cannot read file: ${String(big.length)} bytes, over the limit of 1024 bytes per manifest file (--max-manifest-bytes)`,
    ]);
    await rm(join(dir, "big.yaml"));
    const gone = await reader.readPaths(["big.yaml"]);
    expect(problems(gone)).toEqual([]);
    expect(gone.load.ok && gone.load.files).toEqual(["a.yaml"]);
    const whole = await loadManifests(join(dir, "a.yaml"), 10);
    expect(whole.ok ? "" : whole.error.message).toMatch(/over the limit of 10 bytes/);
  });

  it("a symbolic link loop with a manifest's name is a problem naming it; the rest is read", async () => {
    await writeFile(join(dir, "a.yaml"), service("a"));
    await symlink("loop2.yaml", join(dir, "loop1.yaml"));
    await symlink("loop1.yaml", join(dir, "loop2.yaml"));
    await symlink(".", join(dir, "self"));
    const r = await new ManifestReader(dir).read();
    expect(ips(r)).toEqual(["a=10.0.0.1"]);
    expect(problems(r)).toEqual([
      "loop1.yaml: cannot read file: ELOOP: too many symbolic links (a symbolic link loop)",
      "loop2.yaml: cannot read file: ELOOP: too many symbolic links (a symbolic link loop)",
    ]);
  });
});

describe("fileEvents", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "oooi-watch-fail-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("a symbolic link loop is reported by name, once, and the folder stays watched (no unhandled 'error')", async () => {
    await symlink("loop2", join(dir, "loop1"));
    await symlink("loop1", join(dir, "loop2"));
    await symlink(".", join(dir, "self"));
    const health: WatchHealth[] = [];
    const events: WatchEvent[] = [];
    const sub = fileEvents(dir, { onWatch: (h) => health.push(h) }).subscribe({
      next: (e) => events.push(e),
      error: (e: unknown) => events.push({ type: "change", path: `error: ${String(e)}` }),
    });
    try {
      await until(() => events.some((e) => e.type === "ready"), "ready");
      await until(() => health.filter((h) => h.type === "path").length >= 2, "both loop entries named");
      await writeFile(join(dir, "a.yaml"), service("a"));
      await until(() => events.some((e) => e.type === "change" && e.path === "a.yaml"), "a change after the loop");
      const named = health.flatMap((h) => (h.type === "path" ? [h.path] : []));
      expect(named.filter((p) => p === "loop1" || p === "loop2").sort()).toEqual(["loop1", "loop2"]);
      expect(health.filter((h) => h.type === "down")).toEqual([]);
      expect(events.filter((e) => e.type === "change" && e.path.startsWith("error"))).toEqual([]);
    } finally {
      sub.unsubscribe();
    }
  });

  it("a watch failing with EMFILE is down, restarted after a backoff, up again, and a change after it is seen", async () => {
    // A real watcher of the folder whose first instance then fails as chokidar reports a
    // process out of descriptors (a readdir's EMFILE, not about one entry).
    let started = 0;
    const failing: typeof watch = (paths, options) => {
      const w = watch(paths, options);
      started += 1;
      if (started === 1)
        w.once("ready", () => {
          w.emit("error", Object.assign(new Error("EMFILE: too many open files, scandir"), { code: "EMFILE" }));
        });
      return w;
    };
    const health: WatchHealth[] = [];
    const events: WatchEvent[] = [];
    const sub = fileEvents(dir, {
      onWatch: (h) => health.push(h),
      watch: failing,
      backoff: { initialMs: 20, maxMs: 20, jitter: 0 },
    }).subscribe({ next: (e) => events.push(e) });
    try {
      await until(() => health.some((h) => h.type === "up"), "the watch back up");
      expect(health[0]).toEqual({ type: "down", reason: "EMFILE: too many open files in this process", retryMs: 20 });
      expect(started).toBe(2);
      // The failed watcher's ready is not passed on; the new one's asks for a whole read.
      expect(events.filter((e) => e.type === "ready")).toHaveLength(1);
      await writeFile(join(dir, "a.yaml"), service("a"));
      await until(() => events.some((e) => e.type === "change" && e.path === "a.yaml"), "a change after recovery");
    } finally {
      sub.unsubscribe();
    }
  });
});
