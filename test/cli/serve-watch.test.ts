// Issue 9 items 2 and 5 through the built CLI: `oooi serve --out` follows every kind of edit under
// --manifests (observed in the files it writes), tells each problem once with its file and line,
// keeps the last good files on a broken save, refuses a missing folder, warns when no Infra is
// found, and after a restart cleans exactly what the previous run wrote.
import { execFile } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { ROOT, ServeProcess, oooi, until } from "../support/cli.js";

const exec = promisify(execFile);
const scratch = mkdtempSync(join(tmpdir(), "oooi-serve-watch-"));
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});
let running: ServeProcess | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

let n = 0;
function workspace(): { manifests: string; out: string } {
  const dir = join(scratch, `ws-${String(++n)}`);
  const manifests = join(dir, "m");
  cpSync(join(ROOT, "examples", "minimal"), manifests, { recursive: true });
  return { manifests, out: join(dir, "out") };
}

function serve(manifests: string, out: string): ServeProcess {
  running = new ServeProcess(["--manifests", manifests, "--out", out, "--no-xds", "--no-dns", "--debounce", "20"]);
  return running;
}

/** The VLAN-view zone files of the api names of an Infra's DNS child as serve wrote them, "" when absent. */
function vlanZone(out: string, infra = "tenant-vlan100"): string {
  const dir = join(out, "clusters", `${infra}-dns`);
  if (!existsSync(dir)) return "";
  return (
    readdirSync(dir)
      // Not serve's atomic-write temporaries: renamed over the zone file, they can vanish before the read.
      .filter((f) => f.startsWith("db.vlan.api.") && !f.endsWith(".oooi-tmp"))
      .map((f) => readFileSync(join(dir, f), "utf8"))
      .join("")
  );
}

// One zone per published name: the api name's own address is the zone apex's A record.
const proxyIp = (zone: string): string | undefined => /^@ IN A (\S+)$/m.exec(zone)?.[1];

function setProxyIp(file: string, ip: string): void {
  writeFileSync(file, readFileSync(file, "utf8").replace(/(proxy:\n\s+serverIP: )"[\d.]+"/, `$1"${ip}"`));
}

describe("oooi serve follows every kind of edit", () => {
  it("in-place writes, sed -i (rename-over) and writes after it, delete and re-create, new sub-folders", async () => {
    const { manifests, out } = workspace();
    const infra = join(manifests, "infra.yaml");
    const s = serve(manifests, out);
    await until(() => proxyIp(vlanZone(out)) === "192.0.2.4", "first render");

    setProxyIp(infra, "192.0.2.5");
    await until(() => proxyIp(vlanZone(out)) === "192.0.2.5", "in-place write");

    await exec("sed", ["-i", "s/192\\.0\\.2\\.5/192.0.2.6/", infra]);
    await until(() => proxyIp(vlanZone(out)) === "192.0.2.6", "sed -i (rename over the file)");
    setProxyIp(infra, "192.0.2.7");
    await until(() => proxyIp(vlanZone(out)) === "192.0.2.7", "in-place write after the rename");

    const text = readFileSync(infra, "utf8");
    rmSync(infra);
    await until(() => !existsSync(join(out, "clusters", "tenant-vlan100-dns")), "delete: the Infra's files removed");
    writeFileSync(infra, text.replace("192.0.2.7", "192.0.2.8"));
    await until(() => proxyIp(vlanZone(out)) === "192.0.2.8", "re-create");

    mkdirSync(join(manifests, "more", "deeper"), { recursive: true });
    writeFileSync(
      join(manifests, "more", "deeper", "second.yaml"),
      text
        .replaceAll("tenant-vlan100", "tenant-vlan300")
        .replaceAll("192.0.2.", "198.18.0.")
        .replace(/---[\s\S]*$/, ""),
    );
    await until(
      () => existsSync(join(out, "clusters", "tenant-vlan300-dns", "Corefile")),
      "a file in a new sub-folder",
    );
    expect(s.lines().filter((l) => l.msg.includes("unreadable"))).toEqual([]);
    expect(s.lines().some((l) => l.level === 40 && l.msg.startsWith("no Infra in"))).toBe(true); // while deleted
  });

  it("two saves of one file a few ms apart (in place, then atomically): the second one is served", async () => {
    const { manifests, out } = workspace();
    const infra = join(manifests, "infra.yaml");
    serve(manifests, out);
    await until(() => proxyIp(vlanZone(out)) === "192.0.2.4", "first render");
    // Same size, same inode, within one timestamp tick: chokidar reports the first write and drops
    // the second (one change per file per 50 ms), and the file's stat need not move between them.
    setProxyIp(infra, "192.0.2.5");
    setProxyIp(infra, "192.0.2.6");
    await until(() => proxyIp(vlanZone(out)) === "192.0.2.6", "the second in-place write");
    const atomically = (ip: string): void => {
      writeFileSync(
        `${infra}.oooi-tmp`,
        readFileSync(infra, "utf8").replace(/(proxy:\n\s+serverIP: )"[\d.]+"/, `$1"${ip}"`),
      );
      renameSync(`${infra}.oooi-tmp`, infra);
    };
    atomically("192.0.2.7");
    atomically("192.0.2.8");
    await until(() => proxyIp(vlanZone(out)) === "192.0.2.8", "the second atomic save");
  });

  it("a broken save: one warn line naming file:line:column, the last good files kept; then recovery", async () => {
    const { manifests, out } = workspace();
    const infra = join(manifests, "infra.yaml");
    const s = serve(manifests, out);
    await until(() => proxyIp(vlanZone(out)) === "192.0.2.4", "first render");
    const good = readFileSync(infra, "utf8");
    // A mis-indented line: the editor's classic.
    writeFileSync(infra, good.replace("    gateway:", "     gateway:"));
    const broken = () => s.lines().filter((l) => l.msg.includes("not applied: its last good version"));
    await until(() => broken().length > 0, "the unreadable log line");
    // Named under --manifests as given: a path the shell opens.
    expect(broken()[0]).toMatchObject({ level: 40, file: infra, line: 9 });
    expect(broken()[0]?.msg.startsWith(`${infra}:9:`)).toBe(true);
    expect(broken()[0]?.msg).toMatch(/is still served; the other files are applied/);
    expect(proxyIp(vlanZone(out))).toBe("192.0.2.4");

    setProxyIp(infra, "192.0.2.9"); // still broken: the same error, not logged again
    writeFileSync(infra, good.replace("192.0.2.4", "192.0.2.9"));
    await until(() => proxyIp(vlanZone(out)) === "192.0.2.9", "recovery after the fix");
    expect(broken()).toHaveLength(1);
  });

  it("a typo is logged once with did-you-mean, file and line, beside the error it causes, and not again on unrelated edits", async () => {
    const { manifests, out } = workspace();
    const infra = join(manifests, "infra.yaml");
    const s = serve(manifests, out);
    await until(() => proxyIp(vlanZone(out)) === "192.0.2.4", "first render");
    writeFileSync(infra, readFileSync(infra, "utf8").replace("    gateway:", "    gatway:"));
    const typo = () =>
      s.lines().filter((l) => l.level === 40 && l.msg.includes("gatway: unknown field — did you mean gateway?"));
    await until(() => typo().length > 0, "the typo's warning");
    expect(typo()[0]).toMatchObject({ level: 40, file: infra, line: 9, column: 5, reason: "UnknownField" });
    expect(typo()[0]?.msg).toBe(
      `${infra}:9:5: Infra clusters/tenant-vlan100: spec.networkConfig.gatway: unknown field — did you mean gateway? (UnknownField)`,
    );
    expect(
      s.lines().some((l) => l.level === 40 && /spec\.networkConfig\.gateway: .*required.*\(InvalidSpec\)/.test(l.msg)),
    ).toBe(true);

    // An unrelated edit (a second, valid Infra) re-renders; the typo is still there and not told again.
    const second = readFileSync(infra, "utf8")
      .replace("    gatway:", "    gateway:")
      .replace(/---[\s\S]*$/, "");
    writeFileSync(join(manifests, "second.yaml"), second.replaceAll("tenant-vlan100", "tenant-vlan300"));
    await until(
      () => existsSync(join(out, "clusters", "tenant-vlan300-dns", "Corefile")),
      "the unrelated edit rendered",
    );
    writeFileSync(infra, readFileSync(infra, "utf8").replace("    gatway:", "    gateway:"));
    await until(
      () => s.lines().some((l) => l.level === 30 && l.msg.startsWith(`resolved: ${infra}:9:5:`)),
      "the typo resolved",
    );
    expect(typo()).toHaveLength(1);
  });

  it("after a restart removes what the previous run wrote and no longer renders, and nothing else", async () => {
    const { manifests, out } = workspace();
    const first = serve(manifests, out);
    await until(() => proxyIp(vlanZone(out)) === "192.0.2.4", "first run rendered");
    // Stopped once its writes are done (no "outputs updated" for a second), so the second run starts
    // from a finished first run. A stop in the middle of a write is another test's subject.
    const writes = (): number => first.lines().filter((l) => l.msg === "outputs updated").length;
    let seen = -1;
    await until(async () => {
      const now = writes();
      if (now > 0 && now === seen) return true;
      seen = now;
      await new Promise((r) => setTimeout(r, 1000));
      return false;
    }, "the first run's writes done");
    await first.stop();
    writeFileSync(join(out, "mine.txt"), "user\n");
    for (const f of ["infra.yaml", "attachment.yaml"]) {
      const path = join(manifests, f);
      writeFileSync(path, readFileSync(path, "utf8").replaceAll("tenant-vlan100", "tenant-vlan200"));
    }
    serve(manifests, out);
    await until(() => proxyIp(vlanZone(out, "tenant-vlan200")) === "192.0.2.4", "second run rendered");
    for (const child of ["dns", "proxy", "dhcp"]) {
      await until(
        () => !existsSync(join(out, "clusters", `tenant-vlan100-${child}`)),
        `the first run's ${child} files removed`,
      );
    }
    expect(readFileSync(join(out, "mine.txt"), "utf8")).toBe("user\n");
  });
});

describe("oooi serve at start", () => {
  it("exits 2 naming a missing --manifests folder", async () => {
    const missing = join(scratch, "does-not-exist");
    const r = await oooi(["serve", "--manifests", missing, "--no-xds", "--no-dns"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(missing);
  });

  it("exits 2 for an --out inside --manifests", async () => {
    const { manifests } = workspace();
    const r = await oooi(["serve", "--manifests", manifests, "--out", join(manifests, "out"), "--no-xds", "--no-dns"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/inside the manifests folder/);
    expect(existsSync(join(manifests, "out"))).toBe(false);
  });

  it("warns, naming what it found, when the folder holds no Infra", async () => {
    const dir = join(scratch, "no-infra");
    mkdirSync(dir);
    writeFileSync(join(dir, "svc.yaml"), "apiVersion: v1\nkind: Service\nmetadata: {name: a, namespace: b}\n");
    const s = new ServeProcess(["--manifests", dir, "--no-xds", "--no-dns"]);
    running = s;
    await until(() => s.lines().some((l) => l.msg.startsWith("no Infra in")), "the no-Infra warning");
    expect(s.lines().find((l) => l.msg.startsWith("no Infra in"))).toMatchObject({
      level: 40,
      msg: `no Infra in ${dir}: found 1 Service in 1 file; nothing is served`,
    });
  });
});
