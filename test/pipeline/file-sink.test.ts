// The output folder's sink on its own: a run that was stopped in the middle of a write leaves
// `<file>.oooi-tmp` behind; the next run that no longer renders that file removes both, and its
// folder, while a user's file beside them stays.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { FileSink } from "../../src/pipeline/file-sink.js";

const scratch = mkdtempSync(join(tmpdir(), "oooi-file-sink-"));
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

describe("FileSink", () => {
  it("removes a stopped write's temporary with the file it was for, and the emptied folder", async () => {
    const dir = join(scratch, "out");
    const first = await FileSink.open(dir);
    await first.sync(
      new Map([
        ["ns/a-dhcp/kea-dhcp4.json", "{}\n"],
        ["ns/b-dns/Corefile", ". {}\n"],
      ]),
    );
    // As a run killed between writing the temporary and renaming it leaves the folder.
    writeFileSync(join(dir, "ns/a-dhcp/kea-dhcp4.json.oooi-tmp"), "{");
    mkdirSync(join(dir, "ns/b-dns"), { recursive: true });
    writeFileSync(join(dir, "ns/b-dns/notes.txt"), "mine\n");

    const second = await FileSink.open(dir);
    const r = await second.sync(new Map([["ns/c-proxy/envoy.json", "{}\n"]]));
    expect([...r.removed].sort()).toEqual(["ns/a-dhcp/kea-dhcp4.json", "ns/b-dns/Corefile"]);
    expect(existsSync(join(dir, "ns/a-dhcp"))).toBe(false);
    // A user's file keeps its folder.
    expect(readFileSync(join(dir, "ns/b-dns/notes.txt"), "utf8")).toBe("mine\n");
    expect(existsSync(join(dir, "ns/b-dns/Corefile"))).toBe(false);
  });
});
