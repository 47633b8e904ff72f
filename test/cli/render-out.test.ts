// Issue 9 item 1 through the built CLI: `oooi render --out` never deletes what it did not write.
// The manifests folder and a user's files survive every --out; an --out that is, contains or lies
// inside the manifests is refused; a foreign non-empty folder needs --force; across runs only the
// files the previous render indexed are cleaned up.
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT, oooi } from "../support/cli.js";

const scratch = mkdtempSync(join(tmpdir(), "oooi-render-out-"));
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

let n = 0;
/** A fresh folder holding a copy of examples/minimal in `m` and a user's file beside it. */
function workspace(): { dir: string; manifests: string; notes: string } {
  const dir = join(scratch, `ws-${String(++n)}`);
  const manifests = join(dir, "m");
  cpSync(join(ROOT, "examples", "minimal"), manifests, { recursive: true });
  const notes = join(dir, "notes.txt");
  writeFileSync(notes, "mine\n");
  return { dir, manifests, notes };
}

const listing = (dir: string): string[] => readdirSync(dir, { recursive: true, encoding: "utf8" }).sort();
const index = (out: string): string[] =>
  (JSON.parse(readFileSync(join(out, ".oooi-index.json"), "utf8")) as { files: string[] }).files;

describe("oooi render --out keeps what it did not write", () => {
  it("refuses an --out that contains the manifests folder (the reported data loss); nothing is deleted", async () => {
    const { dir, manifests, notes } = workspace();
    const before = listing(dir);
    const r = await oooi(["render", "--manifests", manifests, "--out", dir]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--out .* contains the manifests folder/);
    expect(listing(dir)).toEqual(before);
    expect(readFileSync(notes, "utf8")).toBe("mine\n");
  });

  it("refuses --out equal to the manifests folder, also through a symlink", async () => {
    const { dir, manifests } = workspace();
    const before = listing(manifests);
    const same = await oooi(["render", "--manifests", manifests, "--out", manifests]);
    expect(same.code).toBe(2);
    expect(same.stderr).toMatch(/is the manifests folder/);
    symlinkSync(manifests, join(dir, "link"));
    const viaLink = await oooi(["render", "--manifests", manifests, "--out", join(dir, "link")]);
    expect(viaLink.code).toBe(2);
    expect(viaLink.stderr).toMatch(/is the manifests folder/);
    expect(listing(manifests)).toEqual(before);
  });

  it("refuses an --out inside the manifests folder and creates nothing there", async () => {
    const { manifests } = workspace();
    const before = listing(manifests);
    const r = await oooi(["render", "--manifests", manifests, "--out", join(manifests, "out", "deeper")]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/inside the manifests folder/);
    expect(listing(manifests)).toEqual(before);
  });

  it("refuses a non-empty folder no render wrote; --force writes there and keeps the user's files", async () => {
    const { dir, manifests } = workspace();
    const out = join(dir, "foreign");
    mkdirSync(out);
    writeFileSync(join(out, "keep.txt"), "keep\n");
    const refused = await oooi(["render", "--manifests", manifests, "--out", out]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/not empty and holds no earlier render.*--force/);
    expect(listing(out)).toEqual(["keep.txt"]);

    const forced = await oooi(["render", "--manifests", manifests, "--out", out, "--force"]);
    expect(forced.code, forced.stderr).toBe(0);
    expect(readFileSync(join(out, "keep.txt"), "utf8")).toBe("keep\n");
    expect(existsSync(join(out, "clusters", "tenant-vlan100-proxy", "envoy.json"))).toBe(true);
    expect(index(out)).not.toContain("keep.txt");
    // Now indexed as a render's folder: the next render needs no --force.
    expect((await oooi(["render", "--manifests", manifests, "--out", out])).code).toBe(0);
  });

  it("across runs removes only the files the previous render wrote and no longer renders", async () => {
    const { dir, manifests, notes } = workspace();
    const out = join(dir, "out");
    const first = await oooi(["render", "--manifests", manifests, "--out", out]);
    expect(first.code, first.stderr).toBe(0);
    expect(index(out)).toEqual(expect.arrayContaining(["status.json", "clusters/tenant-vlan100-proxy/envoy.json"]));
    // A user's files next to the rendered ones, one inside a child folder that is about to go.
    writeFileSync(join(out, "README.txt"), "user\n");
    writeFileSync(join(out, "clusters", "tenant-vlan100-dns", "mine.conf"), "user\n");

    // Renaming the Infra replaces every child folder.
    for (const f of ["infra.yaml", "attachment.yaml"]) {
      const path = join(manifests, f);
      writeFileSync(path, readFileSync(path, "utf8").replaceAll("tenant-vlan100", "tenant-vlan200"));
    }
    const second = await oooi(["render", "--manifests", manifests, "--out", out]);
    expect(second.code, second.stderr).toBe(0);
    expect(existsSync(join(out, "clusters", "tenant-vlan200-proxy", "envoy.json"))).toBe(true);
    expect(existsSync(join(out, "clusters", "tenant-vlan100-proxy"))).toBe(false);
    expect(existsSync(join(out, "clusters", "tenant-vlan100-dhcp"))).toBe(false);
    expect(listing(join(out, "clusters", "tenant-vlan100-dns"))).toEqual(["mine.conf"]);
    expect(readFileSync(join(out, "README.txt"), "utf8")).toBe("user\n");
    expect(readFileSync(notes, "utf8")).toBe("mine\n");
    expect(index(out).filter((f) => f.includes("tenant-vlan100"))).toEqual([]);
    expect(existsSync(join(manifests, "infra.yaml"))).toBe(true);
  });

  it("never follows an index entry outside the folder", async () => {
    const { dir, manifests, notes } = workspace();
    const out = join(dir, "out");
    expect((await oooi(["render", "--manifests", manifests, "--out", out])).code).toBe(0);
    writeFileSync(
      join(out, ".oooi-index.json"),
      JSON.stringify({ generator: "oooi", files: ["../notes.txt", notes, "status.json"] }),
    );
    expect((await oooi(["render", "--manifests", manifests, "--out", out])).code).toBe(0);
    expect(readFileSync(notes, "utf8")).toBe("mine\n");
  });
});

describe("oooi render reports every problem of a file in one pass", () => {
  const typoed = (): string => {
    const { manifests } = workspace();
    const infra = join(manifests, "infra.yaml");
    writeFileSync(
      infra,
      readFileSync(infra, "utf8")
        .replace("    cidr:", "    cdir:")
        .replace('gateway: "192.0.2.1"', 'gateway: "192.0.2.300"'),
    );
    return manifests;
  };

  it("names the typo with its fix, the required field and the invalid value at their lines; exit 0 without --strict", async () => {
    const manifests = typoed();
    const r = await oooi(["render", "--manifests", manifests, "--out", join(manifests, "..", "out")]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stderr.split("\n");
    // Paths under --manifests as given, so each can be opened from where the command ran.
    const file = join(manifests, "infra.yaml");
    expect(lines).toContain(
      `warning ${file}:8:5: Infra clusters/tenant-vlan100: spec.networkConfig.cdir: unknown field — did you mean cidr? (UnknownField)`,
    );
    expect(lines).toContain(
      `error   ${file}:7:3: Infra clusters/tenant-vlan100: spec.networkConfig.cidr: required (InvalidSpec)`,
    );
    expect(
      lines.some((l) =>
        l.startsWith(
          `error   ${file}:9:5: Infra clusters/tenant-vlan100: spec.networkConfig.gateway: "192.0.2.300": must be`,
        ),
      ),
    ).toBe(true);
  });

  it("--strict exits 1 when an object has an error, and 0 when there are only warnings", async () => {
    const manifests = typoed();
    const strict = await oooi(["render", "--manifests", manifests, "--out", join(manifests, "..", "out"), "--strict"]);
    expect(strict.code).toBe(1);
    expect(strict.stderr).toMatch(/--strict: 2 errors/); // required cidr, invalid gateway (the attachment only waits);

    const { manifests: clean } = workspace();
    const infra = join(clean, "infra.yaml");
    // An unknown field alone is a warning: rendered, and --strict passes.
    writeFileSync(infra, readFileSync(infra, "utf8").replace("    gateway:", "    gatewayy: x\n    gateway:"));
    const warned = await oooi(["render", "--manifests", clean, "--out", join(clean, "..", "out"), "--strict"]);
    expect(warned.code, warned.stderr).toBe(0);
    expect(warned.stderr).toMatch(/spec\.networkConfig\.gatewayy: unknown field — did you mean gateway\?/);
  });

  it("warns, naming what it found, when there is no Infra", async () => {
    const dir = join(scratch, "no-infra");
    mkdirSync(dir);
    writeFileSync(join(dir, "svc.yaml"), "apiVersion: v1\nkind: Service\nmetadata: {name: a, namespace: b}\n");
    const r = await oooi(["render", "--manifests", dir, "--out", join(scratch, "no-infra-out")]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`warning no Infra in ${dir}: found 1 Service in 1 file`);
  });
});
