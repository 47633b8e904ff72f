// The manifest folder read again per change: a file is parsed again only when its content changed,
// a reported path is read alone (the rest of the folder untouched), the background scan finds what
// the watcher did not report, and each read says which objects changed as keyed changes. Real
// files in a temporary folder.
import { mkdir, mkdtemp, rename, rm, symlink, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ObjectChange } from "../../src/model/incremental/infras-read.js";
import { ManifestReader, type ManifestRead } from "../../src/watchers/manifest-cache.js";
import { loadManifestDir } from "../../src/watchers/manifests.js";

const service = (name: string, ip = "10.0.0.1") =>
  `apiVersion: v1\nkind: Service\nmetadata: {name: ${name}, namespace: n}\nspec: {clusterIP: ${ip}}\n`;
const infra = (name: string, cidr = "192.0.2.0/24") =>
  `apiVersion: hostedcluster.densityops.com/v1alpha1\nkind: Infra\nmetadata: {name: ${name}, namespace: n}\n` +
  `spec:\n  networkConfig: {cidr: ${cidr}, gateway: 192.0.2.1, networkAttachmentDefinition: vlan100}\n`;

/** "kind name: before→after" with "-" for absent, sorted. */
const short = (changes: readonly ObjectChange[]): string[] =>
  changes
    .map((c) => {
      const name = (c.after ?? c.before)?.metadata.name ?? "?";
      return `${c.kind} ${name}: ${c.before === undefined ? "-" : "old"}→${c.after === undefined ? "-" : "new"}`;
    })
    .sort();

const ips = (r: ManifestRead): string[] =>
  r.load.ok ? r.load.state.services.map((s) => `${s.metadata.name}=${String(s.spec?.clusterIP)}`) : [];

describe("ManifestReader", () => {
  let dir: string;
  let reader: ManifestReader;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "oooi-manifest-cache-"));
    reader = new ManifestReader(dir);
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const put = (rel: string, text: string) => writeFile(join(dir, rel), text);
  const ok = (r: ManifestRead): ManifestRead => {
    if (!r.load.ok) throw new Error(`unreadable: ${r.load.error.message}`);
    return r;
  };
  const service$ = (r: ManifestRead, name: string) =>
    r.load.ok ? r.load.state.services.find((s) => s.metadata.name === name) : undefined;

  it("keeps the objects of every file that did not change, and says what did", async () => {
    await put("a.yaml", service("a"));
    await put("b.yaml", service("b"));
    const first = ok(await reader.read());
    expect(short(first.changes)).toEqual(["Service a: -→new", "Service b: -→new"]);
    await put("b.yaml", service("b", "10.0.0.2"));
    const second = ok(await reader.read());
    expect(service$(second, "a")).toBe(service$(first, "a"));
    expect(short(second.changes)).toEqual(["Service b: old→new"]);
    // The change's objects are the state's own, so the model can compare by identity.
    expect(second.changes[0]?.after).toBe(service$(second, "b"));
    expect(second.changes[0]?.before).toBe(service$(first, "b"));
  });

  it("a touch without a content change (mtime moves, same bytes) changes nothing", async () => {
    await put("a.yaml", service("a"));
    const first = ok(await reader.read());
    await utimes(join(dir, "a.yaml"), new Date(2030, 0, 1), new Date(2030, 0, 1));
    const second = ok(await reader.read());
    expect(service$(second, "a")).toBe(service$(first, "a"));
    expect(second.changes).toEqual([]);
    expect(second.unchanged).toBe(true);
    expect((await reader.readPaths(["a.yaml"])).unchanged).toBe(true);
  });

  it("an atomic save (write elsewhere, rename over) is seen", async () => {
    await put("a.yaml", service("a"));
    ok(await reader.read());
    await put("a.yaml.tmp", service("a", "10.0.0.9"));
    await rename(join(dir, "a.yaml.tmp"), join(dir, "a.yaml"));
    const second = ok(await reader.readPaths(["a.yaml"]));
    expect(short(second.changes)).toEqual(["Service a: old→new"]);
  });

  it("a reported path is read alone: a change nobody reported waits for its own report (or the scan)", async () => {
    await put("a.yaml", service("a"));
    await put("b.yaml", service("b"));
    ok(await reader.read());
    await put("a.yaml", service("a", "10.0.0.2"));
    await put("b.yaml", service("b", "10.0.0.2"));
    const r = ok(await reader.readPaths(["a.yaml"]));
    expect(ips(r)).toEqual(["a=10.0.0.2", "b=10.0.0.1"]);
    expect(await reader.scan()).toEqual({ full: false, paths: ["b.yaml"] });
    expect(ips(ok(await reader.readPaths(["b.yaml"])))).toEqual(["a=10.0.0.2", "b=10.0.0.2"]);
    expect(await reader.scan()).toEqual({ full: false, paths: [] });
  });

  it("two saves within the same instant are told apart by content, not by stat", async () => {
    await put("a.yaml", service("a", "10.0.0.1"));
    ok(await reader.read());
    // Same size, same inode, and the mtime pinned: only the bytes differ.
    const pinned = new Date(2030, 0, 1);
    await put("a.yaml", service("a", "10.0.0.2"));
    await utimes(join(dir, "a.yaml"), pinned, pinned);
    ok(await reader.readPaths(["a.yaml"]));
    await put("a.yaml", service("a", "10.0.0.3"));
    await utimes(join(dir, "a.yaml"), pinned, pinned);
    const r = ok(await reader.readPaths(["a.yaml"]));
    expect(ips(r)).toEqual(["a=10.0.0.3"]);
    expect(short(r.changes)).toEqual(["Service a: old→new"]);
  });

  it("the scan finds files that appeared or went unreported, and a new folder makes it read everything", async () => {
    await put("a.yaml", service("a"));
    ok(await reader.read());
    await put("c.yaml", service("c"));
    await rm(join(dir, "a.yaml"));
    expect(await reader.scan()).toEqual({ full: false, paths: ["a.yaml", "c.yaml"] });
    const r = ok(await reader.readPaths(["a.yaml", "c.yaml"]));
    expect(short(r.changes)).toEqual(["Service a: old→-", "Service c: -→new"]);
    await mkdir(join(dir, "sub"));
    await put("sub/d.yaml", service("d"));
    expect(await reader.scan()).toEqual({ full: true });
  });

  it("a path a lone read cannot judge (a new folder, a hidden entry, a folder gone) reads the whole folder", async () => {
    await mkdir(join(dir, "sub"));
    await put("sub/a.yaml", service("a"));
    ok(await reader.read());
    await mkdir(join(dir, "new"));
    await put("new/b.yaml", service("b"));
    await put("c.yaml", service("c"));
    // Only the new folder's file is reported; the whole read also finds c.yaml.
    expect(ips(ok(await reader.readPaths(["new/b.yaml"])))).toEqual(["a=10.0.0.1", "b=10.0.0.1", "c=10.0.0.1"]);
    await rm(join(dir, "sub"), { recursive: true });
    expect(ips(ok(await reader.readPaths(["sub"])))).toEqual(["b=10.0.0.1", "c=10.0.0.1"]);
    await put("c.yaml", service("c", "10.0.0.5"));
    expect(ips(ok(await reader.readPaths(["..data"])))).toEqual(["b=10.0.0.1", "c=10.0.0.5"]);
    // A file the model never reads is not a reason to read anything.
    await writeFile(join(dir, "notes.txt"), "hello");
    expect((await reader.readPaths(["notes.txt"])).unchanged).toBe(true);
  });

  it("a reported file left as a dangling link is unreadable, as the whole read has it", async () => {
    await put("a.yaml", service("a"));
    ok(await reader.read());
    await symlink(join(dir, "nowhere.yaml"), join(dir, "link.yaml"));
    const r = await reader.readPaths(["link.yaml"]);
    expect(r.load).toEqual(await loadManifestDir(dir));
    expect(r.load.ok).toBe(false);
  });

  it("a deleted file deletes its objects; an object moved to another file is one change", async () => {
    await put("a.yaml", service("a"));
    await put("b.yaml", service("b"));
    ok(await reader.read());
    await rm(join(dir, "a.yaml"));
    await put("c.yaml", service("b"));
    await rm(join(dir, "b.yaml"));
    const second = ok(await reader.readPaths(["a.yaml", "c.yaml", "b.yaml"]));
    expect(short(second.changes)).toEqual(["Service a: old→-", "Service b: old→new"]);
  });

  it("a broken file fails the read as loadManifestDir does; once fixed, changes are since the last readable read", async () => {
    await put("a.yaml", service("a"));
    await put("i.yaml", infra("i"));
    ok(await reader.read());
    await put("a.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: a\n");
    const broken = await reader.readPaths(["a.yaml"]);
    expect(broken.load.ok).toBe(false);
    expect(broken.load).toEqual(await loadManifestDir(dir));
    expect((await reader.readPaths(["a.yaml"])).unchanged).toBe(true);
    await put("i.yaml", infra("i", "192.0.3.0/24"));
    expect((await reader.readPaths(["i.yaml"])).load.ok).toBe(false);
    await put("a.yaml", service("a", "10.0.0.3"));
    const fixed = ok(await reader.readPaths(["a.yaml"]));
    expect(short(fixed.changes)).toEqual(["Infra i: old→new", "Service a: old→new"]);
  });

  it("a duplicate across files fails the read with loadManifestDir's message; removing it restores the state", async () => {
    await put("a.yaml", service("a"));
    ok(await reader.read());
    await put("b.yaml", service("a", "10.0.0.7"));
    const dup = await reader.readPaths(["b.yaml"]);
    expect(dup.load).toEqual(await loadManifestDir(dir));
    expect(dup.load.ok ? "" : dup.load.error.message).toMatch(/duplicate Service n\/a: also defined in a.yaml:1/);
    await rm(join(dir, "a.yaml"));
    const r = ok(await reader.readPaths(["a.yaml"]));
    expect(ips(r)).toEqual(["a=10.0.0.7"]);
    expect(short(r.changes)).toEqual(["Service a: old→new"]);
  });

  it("after an unreadable read, the next reported change reads the whole folder again", async () => {
    await put("a.yaml", service("a"));
    ok(await reader.read());
    await symlink(join(dir, "nowhere.yaml"), join(dir, "link.yaml"));
    const unreadable = await reader.readPaths(["link.yaml"]);
    expect(unreadable.load.ok ? "" : unreadable.load.error.message).toMatch(/cannot read file: ENOENT/);
    await rm(join(dir, "link.yaml"));
    await put("a.yaml", service("a", "10.0.0.8"));
    const r = ok(await reader.readPaths(["link.yaml"]));
    expect(ips(r)).toEqual(["a=10.0.0.8"]);
    expect(short(r.changes)).toEqual(["Service a: old→new"]);
  });

  it("an Infra the schema refuses is absent from the changes, as from the state", async () => {
    await put("i.yaml", infra("i"));
    ok(await reader.read());
    await put("i.yaml", infra("i", "not-a-cidr"));
    const second = ok(await reader.readPaths(["i.yaml"]));
    expect(second.load.ok && second.load.state.invalid?.map((x) => x.ref.name)).toEqual(["i"]);
    expect(short(second.changes)).toEqual(["Infra i: old→-"]);
  });

  it("reads the same state as loadManifestDir", async () => {
    await put("a.yaml", service("a"));
    await put("i.yaml", infra("i"));
    const r = ok(await reader.read());
    const once = await loadManifestDir(dir);
    expect(r.load.ok && r.load.state).toEqual(once.ok && once.state);
  });
});
