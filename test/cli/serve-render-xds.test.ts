// A render never blocks answering xDS (issue 25 row 12): while the built `oooi serve` renders one
// Infra of 1,000 attachments (seconds of model build, rendering and encoding on its main thread), a
// new Envoy of another group still gets its configuration. One file brings the large Infra and the
// example's worker alpha-workers-1 gone, so the example group's new Listener comes only once that
// rendering is done; serve logs "rendering" (debug) right before it starts. New Envoys connect one
// after another: every one given the old Listener after that line was answered while the rendering
// ran. With the ADS server on the rendering's thread there are none: ordering, not time.
import { cpSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { LISTENER_TYPE_URL } from "../../src/xds/resource/protos.js";
import { ROOT, ServeProcess, until } from "../support/cli.js";
import { EnvoyLikeClient } from "../support/envoy/client.js";
import { largeInfra } from "./large-infra.js";

const scratch = mkdtempSync(join(tmpdir(), "oooi-serve-render-xds-"));
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

const GROUP = "clusters/tenant-vlan-proxy";
const ATTACHMENTS = 1000;

/** The Listener version a new Envoy of GROUP is given first. */
async function firstListener(address: string, id: string): Promise<string> {
  const client = new EnvoyLikeClient({ address, node: { id, cluster: GROUP }, protocol: "sotw" });
  client.connect();
  try {
    // Generous: this waits out the whole rendering when the server shares its thread.
    await client.waitFor(() => client.version(LISTENER_TYPE_URL) !== "", `${id}'s first Listener`, 180_000);
    return client.version(LISTENER_TYPE_URL);
  } finally {
    client.close();
  }
}

describe("oooi serve rendering a large Infra", () => {
  it("answers new Envoys of another group while the rendering runs", async () => {
    const manifests = join(scratch, "m");
    cpSync(join(ROOT, "examples", "standalone"), manifests, { recursive: true });
    const serve = new ServeProcess([
      "--manifests",
      manifests,
      "--xds-listen",
      "127.0.0.1:0",
      "--no-dns",
      "--debounce",
      "20",
      "--log-level",
      "debug",
      "--log-format",
      "json",
    ]);
    try {
      let address = "";
      await until(() => {
        address = /xDS \(ADS\) server listening on ([\d.]+:\d+)/.exec(serve.log)?.[1] ?? "";
        return address !== "";
      }, "the xDS listener");
      const old = await firstListener(address, "envoy-before");
      const renderingLines = (): number => serve.lines().filter((l) => l.msg === "rendering").length;
      const before = renderingLines();

      // alpha-workers-1 (its Machine and VMI) gone and the large Infra, put in place at once: one load.
      const file = join(manifests, "observed.yaml");
      const staged = join(scratch, "observed.yaml");
      const docs = readFileSync(file, "utf8").split(/^---$/m);
      writeFileSync(
        staged,
        `${docs.filter((d) => !/^ {2}name: alpha-workers-1$/m.test(d)).join("---")}\n---\n${largeInfra(ATTACHMENTS)}`,
      );
      renameSync(staged, file);
      await until(() => renderingLines() > before, "serve to start rendering the large Infra", 120_000);

      let answeredOld = 0;
      for (let n = 0; ; n += 1) {
        const version = await firstListener(address, `envoy-during-${String(n)}`);
        if (version !== old) break;
        answeredOld += 1;
      }
      // On the rendering's thread: none (each new stream's request waits for the rendering).
      expect(answeredOld).toBeGreaterThanOrEqual(3);
    } finally {
      await serve.stop();
    }
  }, 300_000);
});
