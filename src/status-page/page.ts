// The status page itself: one HTML document with its CSS and script inline — no build step, no
// external asset. The script draws /events' StatusView (view.ts) with DOM nodes and textContent
// only, never innerHTML, so a name, an annotation or a NACK text is shown as text, never run; the
// Content-Security-Policy (handler.ts) admits this one script by its hash as a second guard.
import { createHash } from "node:crypto";

const STYLE = `
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1d2433;background:#f6f7f9}
header{display:flex;gap:1em;align-items:baseline;padding:.6em 1em;background:#1d2433;color:#fff}
header h1{font-size:1.1em;margin:0}
#live{font-size:.85em;padding:.1em .6em;border-radius:1em;background:#8a6d00}
#live.on{background:#1f7a3f}#live.bad{background:#b42318}
#headline{margin:.8em 0 0;padding:.5em .8em;border-radius:.3em;font-weight:600;background:#fdecea;color:#b42318}
#headline.ok{background:#e7f5ec;color:#1f7a3f}
main{padding:0 1em 2em}
section{margin-top:1.2em}
h2{font-size:1em;margin:.2em 0}
h3{font-size:.95em;margin:.8em 0 .2em}
table{border-collapse:collapse;background:#fff;width:100%;margin:.2em 0}
th,td{border:1px solid #d9dde3;padding:.2em .5em;text-align:left;vertical-align:top}
th{background:#eceef2;font-weight:600}
code,.mono{font-family:ui-monospace,monospace;font-size:.92em}
.muted{color:#6b7280}
.SYNCED,.acked{color:#1f7a3f}.ERROR,.nacked,.error{color:#b42318;font-weight:600}
.STALE,.BEHIND,.pending{color:#8a6d00}.NOT_SENT,.warning{color:#6b7280}
.nack{white-space:pre-wrap;color:#b42318}
`;

const SCRIPT = `
"use strict";
const el = (tag, attrs, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined) e.setAttribute(k, String(v));
  for (const k of kids) e.append(k instanceof Node ? k : document.createTextNode(k === undefined ? "" : String(k)));
  return e;
};
const table = (head, rows) =>
  el("table", {}, el("thead", {}, el("tr", {}, ...head.map((h) => el("th", {}, h)))), el("tbody", {}, ...rows));
const ms = (v) => (v === undefined ? "—" : v + " ms");
const time = (t) => new Date(t).toLocaleTimeString();
const fill = (id, ...kids) => document.getElementById(id).replaceChildren(...kids);

function infras(view) {
  if (!view.rendered) return [el("p", { class: "muted" }, "Nothing rendered yet.")];
  if (view.infras.length === 0) return [el("p", { class: "muted" }, "No Infra is served.")];
  return view.infras.map((i) =>
    el("div", { "data-infra": i.name },
      el("h3", {}, "Infra " + i.name),
      el("p", { class: "muted" },
        "proxy " + (i.proxyGroup || "off") + (i.proxyIP ? " at " + i.proxyIP : "") +
        " · DNS " + (i.dnsServer || "off") + " · DHCP " + (i.dhcpGroup || "off")),
      table(["attachment", "domain", "hosted cluster", "control plane", "served", "workers", "source routes"],
        i.attachments.map((a) =>
          el("tr", { "data-attachment": a.name },
            el("td", {}, a.name), el("td", {}, a.domain), el("td", {}, a.hostedCluster),
            el("td", {}, a.controlPlaneNamespace), el("td", { class: a.served ? "acked" : "pending" }, a.served ? "yes" : "no"),
            el("td", { class: "mono" }, a.workers.join(", ") || "—"),
            el("td", { class: "mono" }, a.sourceRoutes.map((r) => r.backend + ":" + r.port + " ← " + r.prefixes.join(", ")).join("; ") || "—"))))));
}

function groups(view) {
  if (view.nodeGroups.length === 0) return [el("p", { class: "muted" }, "No node group.")];
  return [table(["node group", "kind", "client", "connected", "types", "NACK"],
    view.nodeGroups.flatMap((g) => {
      const clients = g.clients.length > 0 ? g.clients : [undefined];
      return clients.map((c) =>
        el("tr", { "data-group": g.group },
          el("td", {}, g.group), el("td", { class: g.kind === "unknown" ? "error" : "" }, g.kind),
          el("td", {}, c ? c.id + " (" + c.userAgent + ")" : "no client"),
          el("td", {}, c ? (c.connected ? "yes" : "no") : "—"),
          el("td", {}, ...(c ? c.types.flatMap((t) => [el("span", { class: t.state, title: "has " + (t.ackedVersion || "nothing") + ", current " + (t.currentVersion || "—") + (t.reason ? " (" + t.reason + ")" : "") }, t.type + " " + t.state + (t.state === "BEHIND" ? " (" + t.reason + ")" : "")), " "]) : [])),
          el("td", { class: "nack" }, c ? c.types.filter((t) => t.nack !== undefined).map((t) => t.type + ": " + t.nack).join("\\n") : "")));
    }))];
}

function pushes(view) {
  if (view.pushes.length === 0) return [el("p", { class: "muted" }, "No push yet.")];
  return [table(["sent", "node group", "client", "type", "version", "cause", "resources", "change → sent", "change → answer", "result"],
    view.pushes.map((p) =>
      el("tr", {}, el("td", {}, time(p.at)), el("td", {}, p.group), el("td", {}, p.node), el("td", {}, p.type),
        el("td", { class: "mono" }, p.version), el("td", {}, p.cause), el("td", {}, p.resources),
        el("td", {}, ms(p.sentMs)), el("td", {}, ms(p.answeredMs)), el("td", { class: p.result }, p.result))))];
}

function problems(view) {
  if (view.problems.length === 0) return [el("p", { class: "muted" }, view.headline ? "No configuration problem." : "No problem.")];
  return [table(["severity", "object", "field", "reason", "message"],
    view.problems.map((p) =>
      el("tr", {}, el("td", { class: p.severity }, p.severity), el("td", {}, p.object),
        el("td", { class: "mono" }, p.field || "—"), el("td", {}, p.reason), el("td", {}, p.message))))];
}

let lastView;
function badge() {
  const bad = lastView !== undefined && lastView.headline !== "";
  if (live.dataset.connected === "yes") { live.textContent = bad ? "live · problems" : "live"; live.className = bad ? "bad" : "on"; }
}
function draw(view) {
  lastView = view;
  const h = document.getElementById("headline");
  h.textContent = view.headline || "All clients are on their group's current version.";
  h.className = view.headline ? "" : "ok";
  badge();
  fill("infras", ...infras(view));
  fill("groups", ...groups(view));
  fill("pushes", ...pushes(view));
  fill("problems", ...problems(view));
  document.getElementById("updated").textContent = "updated " + time(Date.now());
}

const live = document.getElementById("live");
const source = new EventSource("events");
source.addEventListener("status", (e) => { draw(JSON.parse(e.data)); });
source.onopen = () => { live.dataset.connected = "yes"; live.textContent = "live"; live.className = "on"; badge(); };
source.onerror = () => { live.dataset.connected = "no"; live.textContent = "reconnecting"; live.className = ""; };
`;

/** The page's script, for the CSP hash. */
export const STATUS_PAGE_SCRIPT_HASH = `sha256-${createHash("sha256").update(SCRIPT).digest("base64")}`;

/** The whole page; `title` names what serves it ("oooi serve", "oooi operator"). */
export function statusPageHtml(title: string): string {
  const safeTitle = title.replace(/[&<>"']/g, (c) => `&#${String(c.charCodeAt(0))};`);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${safeTitle} — status</title><style>${STYLE}</style></head>
<body><header><h1>${safeTitle}</h1><span id="live">connecting</span><span id="updated" class="muted"></span></header>
<main>
<p id="headline" class="ok" role="status"></p>
<section><h2>Infras and attachments</h2><div id="infras"></div></section>
<section><h2>Node groups and clients</h2><div id="groups"></div></section>
<section><h2>Recent pushes</h2><div id="pushes"></div></section>
<section><h2>Problems</h2><div id="problems"></div></section>
</main><script>${SCRIPT}</script></body></html>
`;
}
