// The page's first paint, drawn server-side by the same drawing the browser runs: GET / already
// holds the headline, the badge, the client table and the problems, with every text escaped (markup in
// a NACK, a problem or a node id is shown, never parsed), so the page is never blank and reads
// without JavaScript. The browser half (the same DOM with JavaScript on and off) is
// test/cli/status-page.test.ts.
import { describe, expect, it } from "vitest";
import { statusPageHtml } from "../../src/status-page/page.js";
import { buildStatusView } from "../../src/status-page/view.js";
import { XdsStatus } from "../../src/xds/client-status.js";

const LDS = "type.googleapis.com/envoy.config.listener.v3.Listener";
const MARKUP = '<script>window.__pwned=1</script><img src=x onerror="x">';

function nackingClient(): XdsStatus {
  const s = new XdsStatus();
  s.recordOpen(
    {
      streamId: "s-1",
      node: { id: `envoy-${MARKUP}`, cluster: "ns/proxy", userAgent: "envoy" },
      peer: "ipv4:127.0.0.1:1",
      protocol: "sotw",
      service: "ads",
      connectedAt: 1_000,
    },
    () => undefined,
  );
  const push = s.recordSent(
    "s-1",
    "ns/proxy",
    LDS,
    { version: "l1", nonce: "n1", at: 2_000, resources: 1, removed: 0, bytes: 1 },
    "change",
    1_990,
  );
  s.recordNack("s-1", push, { version: "l1", nonce: "n1", at: 2_010, code: 3, message: MARKUP }, LDS);
  return s;
}

/** The element with this id: its class and inner HTML (a section's div ends where its section does). */
function part(html: string, tag: "p" | "span" | "div", id: string): { class: string; inner: string } {
  const open = new RegExp(`<${tag} id="${id}"(?: class="([^"]*)")?[^>]*>`).exec(html);
  if (open === null) throw new Error(`no #${id} in the page`);
  const start = open.index + open[0].length;
  const end = html.indexOf(tag === "div" ? "</div></section>" : `</${tag}>`, start);
  return { class: open[1] ?? "", inner: html.slice(start, end) };
}

describe("the status page's first paint", () => {
  it("holds the headline, a red badge, the client with its NACK and the problems, all escaped", () => {
    const s = nackingClient();
    const view = {
      ...buildStatusView({ model: undefined, nodes: s.nodes(), pushes: s.history() }),
      problems: [
        {
          object: "Infra ns/a",
          field: "spec.cidr",
          reason: "InvalidSpec",
          severity: "error" as const,
          message: MARKUP,
        },
      ],
    };
    const html = statusPageHtml("oooi serve", view);
    expect(part(html, "p", "headline")).toEqual({ class: "", inner: "1 in error · unknown group ns/proxy" });
    expect(part(html, "span", "live")).toEqual({ class: "bad", inner: "snapshot · problems" });
    const escaped = "&#60;script&#62;window.__pwned=1&#60;/script&#62;&#60;img src=x onerror=&#34;x&#34;&#62;";
    const groups = part(html, "div", "groups").inner;
    expect(groups).toContain(`envoy-${escaped} (envoy)`);
    expect(groups).toContain(`<td class="nack">lds: ${escaped}</td>`);
    expect(groups).toContain('<span class="ERROR" title="has nothing, current —">lds ERROR</span>');
    expect(part(html, "div", "problems").inner).toContain(`<td>${escaped}</td>`);
    // The page's own script is the only one, and no markup from the view became an element.
    expect(html.match(/<script>/g)).toHaveLength(1);
    expect(html).not.toContain("<img");
  });

  it("reads healthy with a green headline before any client or rendering", () => {
    const html = statusPageHtml("oooi serve", buildStatusView({ model: undefined, nodes: [], pushes: [] }));
    expect(part(html, "p", "headline")).toEqual({
      class: "ok",
      inner: "All clients are on their group&#39;s current version.",
    });
    expect(part(html, "span", "live")).toEqual({ class: "", inner: "snapshot" });
    expect(part(html, "div", "infras").inner).toBe('<p class="muted">Nothing rendered yet.</p>');
    expect(part(html, "div", "groups").inner).toBe('<p class="muted">No node group.</p>');
  });
});
