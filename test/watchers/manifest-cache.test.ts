// The manifest folder read again per change: a file is parsed again only when its content changed,
// and each read says which objects changed as keyed changes. Real files in a temporary folder.
import { mkdtemp, rename, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ObjectChange } from "../../src/model/feeds.js";
import { ManifestReader, manifestChanges, type ManifestRead } from "../../src/watchers/manifest-cache.js";
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
  const okRead = async (): Promise<ManifestRead> => {
    const r = await reader.read();
    if (!r.load.ok) throw new Error(`unreadable: ${r.load.error.message}`);
    return r;
  };

  it("keeps the parse (and the objects) of every file that did not change, and says what did", async () => {
    await put("a.yaml", service("a"));
    await put("b.yaml", service("b"));
    const first = await okRead();
    expect(short(manifestChanges(new Map(), first.parsed))).toEqual(["Service a: -→new", "Service b: -→new"]);
    await put("b.yaml", service("b", "10.0.0.2"));
    const second = await okRead();
    expect(second.parsed.get("a.yaml")).toBe(first.parsed.get("a.yaml"));
    expect(second.parsed.get("b.yaml")).not.toBe(first.parsed.get("b.yaml"));
    const changes = manifestChanges(first.parsed, second.parsed);
    expect(short(changes)).toEqual(["Service b: old→new"]);
    // The change's objects are the state's own, so the model can compare by identity.
    const after = second.load.ok ? second.load.state.services.find((s) => s.metadata.name === "b") : undefined;
    expect(changes[0]?.after).toBe(after);
  });

  it("a touch without a content change (mtime moves, same bytes) keeps the parse", async () => {
    await put("a.yaml", service("a"));
    const first = await okRead();
    await utimes(join(dir, "a.yaml"), new Date(2030, 0, 1), new Date(2030, 0, 1));
    const second = await okRead();
    expect(second.parsed.get("a.yaml")).toBe(first.parsed.get("a.yaml"));
    expect(manifestChanges(first.parsed, second.parsed)).toEqual([]);
  });

  it("an atomic save (write elsewhere, rename over) is seen", async () => {
    await put("a.yaml", service("a"));
    const first = await okRead();
    await put("a.yaml.tmp", service("a", "10.0.0.9"));
    await rename(join(dir, "a.yaml.tmp"), join(dir, "a.yaml"));
    const second = await okRead();
    expect(short(manifestChanges(first.parsed, second.parsed))).toEqual(["Service a: old→new"]);
  });

  it("a deleted file deletes its objects; an object moved to another file is one change", async () => {
    await put("a.yaml", service("a"));
    await put("b.yaml", service("b"));
    const first = await okRead();
    await rm(join(dir, "a.yaml"));
    await put("c.yaml", service("b"));
    await rm(join(dir, "b.yaml"));
    const second = await okRead();
    expect(short(manifestChanges(first.parsed, second.parsed))).toEqual(["Service a: old→-", "Service b: old→new"]);
  });

  it("a broken file fails the read as loadManifestDir does; once fixed, changes are since the last readable read", async () => {
    await put("a.yaml", service("a"));
    await put("i.yaml", infra("i"));
    const good = await okRead();
    await put("a.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: a\n");
    const broken = await reader.read();
    expect(broken.load.ok).toBe(false);
    expect(broken.load).toEqual(await loadManifestDir(dir));
    await put("a.yaml", service("a", "10.0.0.3"));
    const fixed = await okRead();
    expect(short(manifestChanges(good.parsed, fixed.parsed))).toEqual(["Service a: old→new"]);
  });

  it("an Infra the schema refuses is absent from the changes, as from the state", async () => {
    await put("i.yaml", infra("i"));
    const first = await okRead();
    await put("i.yaml", infra("i", "not-a-cidr"));
    const second = await okRead();
    expect(second.load.ok && second.load.state.invalid?.map((x) => x.ref.name)).toEqual(["i"]);
    expect(short(manifestChanges(first.parsed, second.parsed))).toEqual(["Infra i: old→-"]);
  });

  it("reads the same state as loadManifestDir", async () => {
    await put("a.yaml", service("a"));
    await put("i.yaml", infra("i"));
    const r = await okRead();
    const once = await loadManifestDir(dir);
    expect(r.load.ok && r.load.state).toEqual(once.ok && once.state);
  });
});
