// The live status page of the built `oooi serve`, in headless Chromium (Debian's chromium driven by
// playwright-core): it shows every Infra and attachment of the example, an Envoy's NACK with its
// text, the problems with their field paths; markup in a user's manifest or in a NACK is shown as
// text and never runs; and a manifest edit saved atomically (temp file + rename) appears without a
// reload.
import { Client, Metadata, credentials } from "@grpc/grpc-js";
import { cpSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, describe, expect, it } from "vitest";
import {
  ADS_SOTW_METHOD,
  decodeDiscoveryResponse,
  encodeDiscoveryRequest,
  type DiscoveryRequestInit,
} from "../../src/dhcp/agent/ads-messages.js";
import { LISTENER_TYPE_URL } from "../../src/xds/resource/protos.js";
import { EnvoyLikeClient } from "../support/envoy/client.js";
import { chromiumBinary } from "../support/peers.js";
import { ROOT, ServeProcess, until } from "../support/cli.js";

// An Infra whose gateway is outside its CIDR (examples/invalid-infra): a configuration problem.
const BROKEN_INFRA = `---
apiVersion: hostedcluster.densityops.com/v1alpha1
kind: Infra
metadata:
  name: broken-vlan200
  namespace: clusters
spec:
  networkConfig:
    cidr: "198.51.100.0/24"
    gateway: "203.0.113.1"
    networkAttachmentDefinition: vlan200
  infraComponents:
    dhcp:
      serverIP: "198.51.100.2"
    dns:
      serverIP: "198.51.100.3"
    proxy:
      serverIP: "198.51.100.4"
`;

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** An ADS stream that asks for listeners and never answers what it is sent: a proxy behind. */
function silentProxy(address: string, id: string, group: string): () => void {
  const client = new Client(address, credentials.createInsecure());
  const call = client.makeBidiStreamRequest(
    ADS_SOTW_METHOD,
    encodeDiscoveryRequest,
    decodeDiscoveryResponse,
    new Metadata(),
  );
  call.on("error", () => undefined);
  call.on("data", () => undefined);
  const request: DiscoveryRequestInit = {
    version_info: "",
    node: { id, cluster: group, user_agent_name: "envoy" },
    resource_names: [],
    type_url: LISTENER_TYPE_URL,
    response_nonce: "",
  };
  call.write(request);
  return () => {
    call.cancel();
    client.close();
  };
}

// The DOM the functions evaluated in the page use (this project compiles without lib "dom").
interface PageElement {
  readonly textContent: string | null;
}
declare const document: {
  getElementById(id: string): (PageElement & { readonly className: string }) | null;
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): { readonly length: number };
  readonly scripts: { readonly length: number };
};
declare const window: { __pwned?: number; __sameDocument?: boolean };

const browserBinary = chromiumBinary();
const dir = mkdtempSync(join(tmpdir(), "oooi-status-page-"));
const statesDir = mkdtempSync(join(tmpdir(), "oooi-status-states-"));
// Screenshots go to a temp folder, never into the repository; OOOI_KEEP_SCREENSHOTS=1 keeps it to look at.
const shots = mkdtempSync(join(tmpdir(), "oooi-status-shots-"));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(statesDir, { recursive: true, force: true });
  if (process.env["OOOI_KEEP_SCREENSHOTS"] === "1") console.log(`status page screenshots in ${shots}`);
  else rmSync(shots, { recursive: true, force: true });
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

    it("draws each state of the data plane the same with JavaScript on and off, and screenshots it", async () => {
      cpSync(join(ROOT, "examples", "standalone"), statesDir, { recursive: true });
      const serve = new ServeProcess([
        "--manifests",
        statesDir,
        "--xds-listen",
        "127.0.0.1:0",
        "--http-listen",
        "127.0.0.1:0",
        "--no-dns",
        "--debounce",
        "20",
      ]);
      let browser: Browser | undefined;
      const closers: (() => void)[] = [];
      try {
        await until(() => /status page on http:\/\/127\.0\.0\.1:\d+\//.test(serve.log), "the status page listening");
        await until(() => /xDS \(ADS\) server listening on [\d.]+:\d+/.test(serve.log), "xDS listening");
        const url = /status page on (http:\/\/127\.0\.0\.1:\d+\/)/.exec(serve.log)?.[1] ?? "";
        const address = `127.0.0.1:${/xDS \(ADS\) server listening on [\d.]+:(\d+)/.exec(serve.log)?.[1] ?? ""}`;
        const group = "clusters/tenant-vlan-proxy";
        const envoy = (id: string, cluster: string, validate?: (typeUrl: string) => string | undefined) => {
          const c = new EnvoyLikeClient({ address, node: { id, cluster }, ...(validate ? { validate } : {}) });
          closers.push(() => {
            c.close();
          });
          c.connect();
          return c;
        };
        browser = await chromium.launch({
          executablePath: browserBinary.path ?? "chromium",
          args: ["--no-sandbox", "--disable-background-networking", "--disable-dev-shm-usage"],
        });
        const live = await browser.newPage();
        const errors: string[] = [];
        live.on("pageerror", (e) => errors.push(e.message));
        const noScript = await (await browser.newContext({ javaScriptEnabled: false })).newPage();

        const shoot = async (page: Page, name: string): Promise<void> => {
          const png = await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
          expect(png.length).toBeGreaterThan(PNG_SIGNATURE.length);
          expect(png.subarray(0, PNG_SIGNATURE.length).equals(PNG_SIGNATURE)).toBe(true);
          expect(readFileSync(join(shots, `${name}.png`)).equals(png)).toBe(true);
        };
        /** The live page reaches the state (headline, classes); the page drawn by the server alone shows the same. */
        const state = async (name: string, headline: string, bad: boolean): Promise<void> => {
          await live.goto(url);
          await live.waitForFunction(
            ([text, cls]) =>
              document.getElementById("headline")?.textContent === text &&
              document.getElementById("live")?.className === cls,
            [headline, bad ? "bad" : "on"] as const,
          );
          expect(await live.getAttribute("#headline", "class")).toBe(bad ? "" : "ok");
          expect(await live.textContent("#live")).toBe(bad ? "live · problems" : "live");
          await shoot(live, name);
          // JavaScript off: the first paint is all there is.
          await noScript.goto(url);
          expect(await noScript.textContent("#headline")).toBe(headline);
          expect(await noScript.getAttribute("#headline", "class")).toBe(bad ? "" : "ok");
          expect(await noScript.getAttribute("#live", "class")).toBe(bad ? "bad" : "");
          expect(await noScript.textContent("#live")).toBe(bad ? "snapshot · problems" : "snapshot");
          expect(await noScript.textContent("#groups")).toBe(await live.textContent("#groups"));
          expect(await noScript.textContent("#problems")).toBe(await live.textContent("#problems"));
          await shoot(noScript, `${name}-no-javascript`);
        };

        const healthy = envoy("envoy-ok", group);
        await healthy.waitFor(() => healthy.listeners.size > 0 && healthy.clusters.size > 0, "the example's listeners");
        await state("healthy", "All clients are on their group's current version.", false);
        expect(await noScript.textContent("#groups")).toContain("envoy-ok (envoy-like)");
        expect(await noScript.textContent("#infras")).toContain("alpha.clusters.example.com");

        const typo = envoy("envoy-typo", "clusters/tenant-vlan-prxy");
        await state(
          "unknown-group",
          "unknown group clusters/tenant-vlan-prxy (did you mean clusters/tenant-vlan-proxy?)",
          true,
        );
        typo.close();

        const stop = silentProxy(address, "envoy-silent", group);
        closers.push(stop);
        await state("behind", "1 proxy behind", true);
        expect(await noScript.textContent("#groups")).toMatch(/lds BEHIND \(awaiting-ack\)/);
        stop();

        const nacker = envoy("envoy-nack", group, (t) => (t === LISTENER_TYPE_URL ? "listener rejected" : undefined));
        await state("nack", "1 in error", true);
        expect(await noScript.textContent("#groups")).toContain("lds: listener rejected");
        nacker.close();

        // Only the healthy client is connected; the gone ones are listed as such, not counted.
        writeFileSync(join(statesDir, "broken.yaml"), BROKEN_INFRA);
        await live.goto(url);
        await live.waitForFunction(
          () => document.getElementById("problems")?.textContent?.includes("Infra clusters/broken-vlan200") === true,
        );
        await state("config-problem", "All clients are on their group's current version.", false);
        expect(await noScript.textContent("#problems")).toContain("Infra clusters/broken-vlan200");
        expect(await noScript.textContent("#groups")).toMatch(/envoy-nack \(envoy-like\)GONE since /);
        expect(errors).toEqual([]);
      } finally {
        await browser?.close();
        for (const close of closers) close();
        await serve.stop();
      }
    });
  },
);
