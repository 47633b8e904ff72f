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
import { formatManifestError, loadManifestDir } from "../../src/watchers/manifests.js";

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

const problems = (r: ManifestRead): string[] =>
  r.load.ok ? r.load.problems.map((p) => formatManifestError(p)) : [`unreadable: ${r.load.error.message}`];
const ips = (r: ManifestRead): string[] =>
  r.load.ok ? [...r.load.state.services].map((s) => `${s.metadata.name}=${String(s.spec?.clusterIP)}`) : [];

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
    r.load.ok ? [...r.load.state.services].find((s) => s.metadata.name === name) : undefined;

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

  it("a reported file left as a dangling link is a problem of that file; the rest is read", async () => {
    await put("a.yaml", service("a"));
    ok(await reader.read());
    await symlink(join(dir, "nowhere.yaml"), join(dir, "link.yaml"));
    const r = ok(await reader.readPaths(["link.yaml"]));
    expect(problems(r)).toEqual(["link.yaml: cannot read file: ENOENT: no such file or directory"]);
    expect(ips(r)).toEqual(["a=10.0.0.1"]);
    // As a whole read has it.
    expect(problems(await new ManifestReader(dir).read())).toEqual(problems(r));
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

  it("a broken file keeps what it defined at its last good read; every other file's changes flow", async () => {
    await put("a.yaml", service("a"));
    await put("i.yaml", infra("i"));
    ok(await reader.read());
    await put("a.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: a\n");
    const broken = ok(await reader.readPaths(["a.yaml"]));
    expect(problems(broken)).toEqual([expect.stringMatching(/^a\.yaml:\d+:\d+: /)]);
    expect(ips(broken)).toEqual(["a=10.0.0.1"]);
    expect(broken.changes).toEqual([]);
    expect((await reader.readPaths(["a.yaml"])).unchanged).toBe(true);
    await put("i.yaml", infra("i", "192.0.3.0/24"));
    const other = ok(await reader.readPaths(["i.yaml"]));
    expect(short(other.changes)).toEqual(["Infra i: old→new"]);
    expect(other.load.ok && other.load.state.infras[0]?.spec.networkConfig.cidr).toBe("192.0.3.0/24");
    expect(problems(other)).toEqual(problems(broken));
    await put("a.yaml", service("a", "10.0.0.3"));
    const fixed = ok(await reader.readPaths(["a.yaml"]));
    expect(short(fixed.changes)).toEqual(["Service a: old→new"]);
    expect(problems(fixed)).toEqual([]);
  });

  it("a file first read broken contributes nothing until it is fixed; the others are read", async () => {
    await put("a.yaml", "kind: [oops\n");
    await put("b.yaml", service("b"));
    const r = ok(await reader.read());
    expect(ips(r)).toEqual(["b=10.0.0.1"]);
    expect(problems(r)).toEqual([expect.stringMatching(/^a\.yaml:\d+:\d+: /)]);
  });

  it("a duplicate across files keeps the object as it was and names the later file; removing one resolves it", async () => {
    await put("a.yaml", service("a"));
    await put("c.yaml", service("c"));
    ok(await reader.read());
    await put("b.yaml", service("a", "10.0.0.7") + "---\n" + service("b"));
    await put("c.yaml", service("c", "10.0.0.9"));
    const dup = ok(await reader.readPaths(["b.yaml", "c.yaml"]));
    expect(problems(dup)).toEqual(["b.yaml:1:1: duplicate Service n/a: also defined in a.yaml:1"]);
    // Service a stays as it was; b.yaml's other object and c.yaml's edit flow.
    expect(ips(dup)).toEqual(["a=10.0.0.1", "b=10.0.0.1", "c=10.0.0.9"]);
    await rm(join(dir, "a.yaml"));
    const r = ok(await reader.readPaths(["a.yaml"]));
    expect(ips(r)).toEqual(["a=10.0.0.7", "b=10.0.0.1", "c=10.0.0.9"]);
    expect(short(r.changes)).toEqual(["Service a: old→new"]);
    expect(problems(r)).toEqual([]);
  });

  it("a file that went unreadable and then went away takes its objects with it", async () => {
    await put("a.yaml", service("a"));
    await put("b.yaml", service("b"));
    ok(await reader.read());
    await put("a.yaml", "kind: [oops\n");
    expect(ips(ok(await reader.readPaths(["a.yaml"])))).toEqual(["a=10.0.0.1", "b=10.0.0.1"]);
    await rm(join(dir, "a.yaml"));
    const r = ok(await reader.readPaths(["a.yaml"]));
    expect(ips(r)).toEqual(["b=10.0.0.1"]);
    expect(problems(r)).toEqual([]);
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
