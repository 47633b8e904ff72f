// The status page itself: one HTML document with its CSS and script inline — no build step, no
// external asset. It arrives with the current StatusView (view.ts) drawn in, and its script redraws
// each view of /events with the same drawing (draw.ts): DOM nodes and textContent only, never
// innerHTML, so a name, an annotation or a NACK text is shown as text, never run; the
// Content-Security-Policy (handler.ts) admits this one script by its hash as a second guard.
import { createHash } from "node:crypto";
import { DRAW, drawView } from "./draw.js";
import type { StatusView } from "./view.js";

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
.STALE,.BEHIND,.pending{color:#8a6d00}.NOT_SENT,.GONE,.warning{color:#6b7280}
.nack{white-space:pre-wrap;color:#b42318}
`;

// The browser's side of the shared drawing (draw.ts): DOM nodes, then the live feed redraws.
const SCRIPT = `
"use strict";
const el = (tag, attrs, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined) e.setAttribute(k, String(v));
  for (const k of kids) e.append(k instanceof Node ? k : document.createTextNode(k === undefined ? "" : String(k)));
  return e;
};
${DRAW}
const fill = (id, ...kids) => document.getElementById(id).replaceChildren(...kids);
let lastView;
function badge() {
  if (live.dataset.connected !== "yes") return;
  const b = badgeOf(lastView, true);
  live.textContent = b.text;
  live.className = b.class;
}
function draw(view) {
  lastView = view;
  const h = document.getElementById("headline");
  h.textContent = headlineOf(view).text;
  h.className = headlineOf(view).class;
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
source.onopen = () => { live.dataset.connected = "yes"; badge(); };
source.onerror = () => { live.dataset.connected = "no"; live.textContent = "reconnecting"; live.className = ""; };
`;

/** The page's script, for the CSP hash. */
export const STATUS_PAGE_SCRIPT_HASH = `sha256-${createHash("sha256").update(SCRIPT).digest("base64")}`;

/** The whole page with `view` drawn in; `title` names what serves it ("oooi serve", "oooi operator"). */
export function statusPageHtml(title: string, view: StatusView): string {
  const safeTitle = title.replace(/[&<>"']/g, (c) => `&#${String(c.charCodeAt(0))};`);
  const d = drawView(view);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${safeTitle} — status</title><style>${STYLE}</style></head>
<body><header><h1>${safeTitle}</h1><span id="live" class="${d.badge.class}">${d.badge.text}</span><span id="updated" class="muted">${d.updated}</span></header>
<main>
<p id="headline" class="${d.headline.class}" role="status">${d.headline.text}</p>
<section><h2>Infras and attachments</h2><div id="infras">${d.infras}</div></section>
<section><h2>Node groups and clients</h2><div id="groups">${d.groups}</div></section>
<section><h2>Recent pushes</h2><div id="pushes">${d.pushes}</div></section>
<section><h2>Problems</h2><div id="problems">${d.problems}</div></section>
</main><script>${SCRIPT}</script></body></html>
`;
}
