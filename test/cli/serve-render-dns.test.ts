// A render never blocks answering (issue 25 row 12, issue 30 target 2): while the built `oooi serve`
// renders one Infra of 1,000 attachments (seconds of model build, Envoy and CoreDNS rendering and
// encoding on its main thread), its embedded DNS keeps answering. One file brings the large Infra
// and the example's attachment at a new address, so the new answer comes only once that rendering
// is done; serve logs "rendering" (debug) right before it starts. A client asks one name over and
// over, one query at a time: every old answer to a query sent after that line came while the
// rendering ran. With the responder on the rendering's thread there are none (at most one already
// on its way when the line was read): ordering, not time.
import { cpSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT, ServeProcess, until } from "../support/cli.js";
import { largeInfra } from "./large-infra.js";
import { answersUntil, askA } from "../dns/server/helpers.js";

const scratch = mkdtempSync(join(tmpdir(), "oooi-serve-render-dns-"));
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

const NAME = "console-openshift-console.apps.alpha.clusters.example.com";
const VLAN_CLIENT = "127.0.8.5";
const ATTACHMENTS = 1000;

/** The A answer to one query for NAME from a VLAN address, or undefined when none came within `waitMs`. */
function ask(port: number, id: number, waitMs: number): Promise<string | undefined> {
  return askA(port, { id, name: NAME, from: VLAN_CLIENT }, waitMs);
}

describe("oooi serve rendering a large Infra", () => {
  it("answers DNS while the rendering runs", async () => {
    const manifests = join(scratch, "m");
    cpSync(join(ROOT, "examples", "standalone"), manifests, { recursive: true });
    const serve = new ServeProcess([
      "--manifests",
      manifests,
      "--xds-listen",
      "127.0.0.1:0",
      "--dns-listen",
      "127.0.0.1:0",
      "--dns-server",
      "clusters/tenant-vlan-dns",
      "--debounce",
      "20",
      "--log-level",
      "debug",
      "--log-format",
      "json",
    ]);
    try {
      const port = await serve.dnsPort();
      let id = 0;
      await until(async () => (await ask(port, ++id, 1000)) === "127.0.8.200", "the example's answer", 60_000);
      const renderingLines = () => serve.lines().filter((l) => l.msg === "rendering").length;
      const before = renderingLines();

      // The example's attachments at a new address and the large Infra, put in place at once: one load.
      const file = join(manifests, "attachments.yaml");
      const staged = join(scratch, "attachments.yaml");
      writeFileSync(
        staged,
        `${readFileSync(file, "utf8").replaceAll("127.0.8.200", "127.0.8.201")}\n---\n${largeInfra(ATTACHMENTS)}`,
      );
      renameSync(staged, file);
      await until(() => renderingLines() > before, "serve to start rendering the large Infra", 120_000);

      // Generous: a reply later than 2 s is one a resolver would have given up on.
      const { old, missed } = await answersUntil(() => ask(port, ++id, 2000), {
        previous: "127.0.8.200",
        next: "127.0.8.201",
        never: "the large Infra was never rendered",
      });
      // On the rendering's thread: at most the one query already read before the line was.
      expect(old).toBeGreaterThanOrEqual(3);
      expect(missed).toBe(0);
    } finally {
      await serve.stop();
    }
  }, 300_000);
});
