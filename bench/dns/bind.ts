// BIND 9 `named` as the benchmark's reference: the same two views and the very zone files the
// CoreDNS renderer writes, authoritative only, on loopback.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { renderCoreDns, zoneFileKey } from "../../src/dns/render/index.js";
import { UDP_BUFFER_BYTES } from "../../src/dns/server/index.js";
import type { DnsModel } from "../../src/model/types.js";

/** A running named. */
export interface Named {
  readonly port: number;
  readonly pid: number;
  stop(): Promise<void>;
}

/** True when `named` is on PATH. */
export function haveNamed(): boolean {
  return spawnSync("named", ["-v"]).error === undefined;
}

/** Writes named.conf and the zone files into `dir` and starts named on 127.0.0.1:`port`. */
export async function startNamed(model: DnsModel, dir: string, port: number): Promise<Named> {
  const { files } = renderCoreDns(model);
  const viewBlocks = model.views.map((view) => {
    const match = view.sourceCidr === undefined ? "any;" : `${view.sourceCidr};`;
    const zones = view.zones.map((z) => {
      const key = zoneFileKey(view.name, z.origin);
      writeFileSync(join(dir, key), files[key] ?? "");
      return `    zone "${z.origin}" { type primary; file "${join(dir, key)}"; };`;
    });
    return [`view "${view.name}" {`, `    match-clients { ${match} };`, ...zones, "};"].join("\n");
  });
  // minimal-responses: no NS/glue padding, as the embedded responder answers. UDP buffers: the
  // embedded responder's (both capped alike by net.core.rmem_max/wmem_max); with the system
  // default, named's own socket drops queries at 500 outstanding (bench/README.md, DNS).
  const conf = [
    "options {",
    `    directory "${dir}";`,
    `    pid-file "${join(dir, "named.pid")}";`,
    `    session-keyfile "${join(dir, "session.key")}";`,
    `    managed-keys-directory "${dir}";`,
    `    listen-on port ${port} { 127.0.0.1; };`,
    "    listen-on-v6 { none; };",
    "    recursion no;",
    "    minimal-responses yes;",
    `    udp-receive-buffer ${String(UDP_BUFFER_BYTES)};`,
    `    udp-send-buffer ${String(UDP_BUFFER_BYTES)};`,
    "    dnssec-validation no;",
    "    notify no;",
    "    querylog no;",
    "};",
    "controls { };",
    ...viewBlocks,
    "",
  ].join("\n");
  const confPath = join(dir, "named.conf");
  writeFileSync(confPath, conf);
  const child: ChildProcess = spawn("named", ["-g", "-c", confPath], { stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  child.stderr?.on("data", (d: Buffer) => (log += d.toString()));
  const exited = new Promise<void>((resolve) => {
    child.once("exit", () => {
      resolve();
    });
  });
  // named logs "running" once every view's zones are loaded and it listens.
  for (let waited = 0; !log.includes("running"); waited += 50) {
    if (child.exitCode !== null || waited > 20_000) throw new Error(`named did not start:\n${log}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    port,
    pid: child.pid ?? 0,
    stop: async () => {
      child.kill("SIGTERM");
      await exited;
    },
  };
}
