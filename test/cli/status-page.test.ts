// The live status page of the built `oooi serve`, in headless Chromium (Debian's chromium driven by
// playwright-core): it shows every Infra and attachment of the example, an Envoy's NACK with its
// text, the problems with their field paths; markup in a user's manifest or in a NACK is shown as
// text and never runs; and a manifest edit saved atomically (temp file + rename) appears without a
// reload.
import { cpSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { afterAll, describe, expect, it } from "vitest";
import { LISTENER_TYPE_URL } from "../../src/xds/resource/protos.js";
import { EnvoyLikeClient } from "../support/envoy/client.js";
import { chromiumBinary } from "../support/peers.js";
import { ROOT, ServeProcess, until } from "../support/cli.js";

// The DOM the functions evaluated in the page use (this project compiles without lib "dom").
interface PageElement {
  readonly textContent: string | null;
}
declare const document: {
  getElementById(id: string): PageElement | null;
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): { readonly length: number };
  readonly scripts: { readonly length: number };
};
declare const window: { __pwned?: number; __sameDocument?: boolean };

const browserBinary = chromiumBinary();
const dir = mkdtempSync(join(tmpdir(), "oooi-status-page-"));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

// Markup a user might write; the page must show it, not run it.
const INJECTED_NAME = "<img src=x onerror=window.__pwned=1>";
const INJECTED_NACK = '<script>window.__pwned=2</script><b id="bold">listener rejected</b>';

const XSS_ATTACHMENT = `---
apiVersion: hostedcluster.densityops.com/v1alpha1
kind: InfraClusterAttachment
metadata:
  name: markup
  namespace: clusters
  annotations:
    note: "<script>window.__pwned=3</script>"
spec:
  infraRef:
    name: tenant-vlan
  hostedClusterRef:
    name: markup
    namespace: clusters
  dns:
    clusterName: "${INJECTED_NAME}"
    baseDomain: clusters.example.com
`;

describe.skipIf(browserBinary.path === undefined)(
  `the status page in Chromium${browserBinary.skipReason === undefined ? "" : ` (skipped: ${browserBinary.skipReason})`}`,
  () => {
    it("shows every Infra and attachment, a NACK's text, problems as text, and an atomic manifest edit live", async () => {
      cpSync(join(ROOT, "examples", "standalone"), dir, { recursive: true });
      writeFileSync(join(dir, "markup.yaml"), XSS_ATTACHMENT);
      const serve = new ServeProcess([
        "--manifests",
        dir,
        "--xds-listen",
        "127.0.0.1:0",
        "--http-listen",
        "127.0.0.1:0",
        "--no-dns",
        "--debounce",
        "20",
      ]);
      let browser: Browser | undefined;
      let envoy: EnvoyLikeClient | undefined;
      try {
        await until(() => /status page on http:\/\/127\.0\.0\.1:\d+\//.test(serve.log), "the status page listening");
        await until(() => /xDS \(ADS\) server listening on [\d.]+:\d+/.test(serve.log), "xDS listening");
        const url = /status page on (http:\/\/127\.0\.0\.1:\d+\/)/.exec(serve.log)?.[1] ?? "";
        const xdsPort = /xDS \(ADS\) server listening on [\d.]+:(\d+)/.exec(serve.log)?.[1] ?? "";
        // An Envoy that refuses every listener with an error text full of markup.
        const client = new EnvoyLikeClient({
          address: `127.0.0.1:${xdsPort}`,
          node: { id: "envoy-nack", cluster: "clusters/tenant-vlan-proxy" },
          validate: (typeUrl) => (typeUrl === LISTENER_TYPE_URL ? INJECTED_NACK : undefined),
        });
        envoy = client;
        client.connect();

        browser = await chromium.launch({
          executablePath: browserBinary.path ?? "chromium",
          // Root (CI) cannot use Chromium's sandbox; nothing outside loopback is loaded.
          args: ["--no-sandbox", "--disable-background-networking", "--disable-dev-shm-usage"],
        });
        const page = await browser.newPage();
        const errors: string[] = [];
        page.on("pageerror", (e) => errors.push(e.message));
        await page.goto(url);

        await page.waitForSelector('[data-infra="clusters/tenant-vlan"]');
        for (const a of ["clusters/alpha", "clusters/beta"])
          await page.waitForSelector(`[data-attachment="${a}"]`, { state: "attached" });
        expect(await page.textContent('[data-attachment="clusters/alpha"]')).toContain("alpha.clusters.example.com");
        // The refused attachment's problem, with its field path and the markup as plain text.
        await page.waitForFunction(
          (name) => document.getElementById("problems")?.textContent?.includes(name) === true,
          INJECTED_NAME,
        );
        expect(await page.textContent("#problems")).toContain("spec.dns.clusterName");
        // The NACK, as the Envoy wrote it.
        await page.waitForFunction(
          (text) => document.getElementById("groups")?.textContent?.includes(text) === true,
          INJECTED_NACK,
        );
        expect(await page.textContent("#groups")).toContain("envoy-nack");
        // The broken data plane is the headline, above everything, and the badge is not a green "live".
        await page.waitForFunction(() => document.getElementById("headline")?.textContent === "1 in error");
        expect(await page.getAttribute("#live", "class")).toBe("bad");
        expect(
          await page.evaluate(() => ({
            pwned: window.__pwned,
            scripts: document.scripts.length,
            injected: document.querySelectorAll("main img, main b").length,
          })),
        ).toEqual({ pwned: undefined, scripts: 1, injected: 0 });

        // An editor's atomic save: the new content goes to a temp file renamed over the original.
        await page.evaluate(() => {
          window.__sameDocument = true;
        });
        const file = join(dir, "attachments.yaml");
        const edited = readFileSync(file, "utf8").replace("clusterName: beta", "clusterName: beta-renamed");
        expect(edited).not.toBe(readFileSync(file, "utf8"));
        writeFileSync(join(dir, ".attachments.yaml.tmp"), edited);
        renameSync(join(dir, ".attachments.yaml.tmp"), file);
        await page.waitForFunction(
          () =>
            document.querySelector('[data-attachment="clusters/beta"]')?.textContent?.includes("beta-renamed.") ===
            true,
        );
        expect(await page.evaluate(() => window.__sameDocument)).toBe(true);
        expect(errors).toEqual([]);
      } finally {
        await browser?.close();
        envoy?.close();
        await serve.stop();
      }
    });
  },
);
