// The status page's drawing, StatusView → its sections, written once as browser JavaScript: the
// page's script runs it with DOM nodes (textContent, never innerHTML), and the server runs the same
// source in a node:vm context with an `el` that builds HTML, escaping every text and attribute, so
// GET / arrives drawn (never blank, readable without JavaScript) exactly as the feed then redraws it.
// Both `el`s take (tag, attributes, ...children); a child that is not an element is text.
import { Script, createContext } from "node:vm";
import type { StatusView } from "./view.js";

/** The shared source: needs `el` in scope; defines the section functions, headlineOf and badgeOf. */
export const DRAW = String.raw`
const table = (head, rows) =>
  el("table", {}, el("thead", {}, el("tr", {}, ...head.map((h) => el("th", {}, h)))), el("tbody", {}, ...rows));
const ms = (v) => (v === undefined ? "—" : v + " ms");
const time = (t) => new Date(t).toLocaleTimeString();
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
          el("td", {}, c ? c.id + " (" + c.userAgent + ")" + (c.probe ? " · probe" : "") : "no client"),
          el("td", { class: c && !c.connected ? "GONE" : "" },
            c ? (c.connected ? "yes" : "GONE since " + time(c.goneSince)) : "—"),
          el("td", {}, ...(c ? c.types.flatMap((t) => [el("span", { class: t.state, title: "has " + (t.ackedVersion || "nothing") + ", current " + (t.currentVersion || "—") + (t.reason ? " (" + t.reason + ")" : "") }, t.type + " " + t.state + (t.state === "BEHIND" ? " (" + t.reason + ")" : "")), " "]) : [])),
          el("td", { class: "nack" }, c ? c.types.filter((t) => t.nack !== undefined).map((t) => t.type + ": " + t.nack).join("\n") : "")));
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

const headlineOf = (view) => ({
  text: view.headline || "All clients are on their group's current version.",
  class: view.headline ? "" : "ok",
});
// live: the page follows /events; otherwise it shows the view drawn into the page (JavaScript off).
const badgeOf = (view, live) => {
  const bad = view !== undefined && view.headline !== "";
  const word = live ? "live" : "snapshot";
  return { text: bad ? word + " · problems" : word, class: bad ? "bad" : live ? "on" : "" };
};
`;

// Text and attribute values escaped as the DOM would serialize them: markup in a name is shown, never parsed.
const SERVER_EL = String.raw`
"use strict";
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => "&#" + c.charCodeAt(0) + ";");
const el = (tag, attrs, ...kids) => {
  let html = "<" + tag;
  for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined) html += " " + k + '="' + esc(v) + '"';
  html += ">";
  for (const k of kids) html += typeof k === "object" && k !== null ? k.html : esc(k === undefined ? "" : k);
  return { html: html + "</" + tag + ">" };
};
`;

interface Drawn {
  readonly html: string;
}
interface Drawing {
  infras(view: StatusView): Drawn[];
  groups(view: StatusView): Drawn[];
  pushes(view: StatusView): Drawn[];
  problems(view: StatusView): Drawn[];
  headlineOf(view: StatusView): { text: string; class: string };
  badgeOf(view: StatusView, live: boolean): { text: string; class: string };
  time(ms: number): string;
  esc(text: string): string;
}

/** The page's parts as HTML, drawn by the shared source. */
export interface DrawnView {
  readonly headline: { readonly text: string; readonly class: string };
  readonly badge: { readonly text: string; readonly class: string };
  readonly updated: string;
  readonly infras: string;
  readonly groups: string;
  readonly pushes: string;
  readonly problems: string;
}

let drawing: Drawing | undefined;

/** `view` drawn server-side; headline and badge texts are escaped too. */
export function drawView(view: StatusView): DrawnView {
  drawing ??= new Script(
    `${SERVER_EL}${DRAW}({ infras, groups, pushes, problems, headlineOf, badgeOf, time, esc })`,
  ).runInContext(createContext({})) as Drawing;
  const d = drawing;
  const join = (parts: Drawn[]): string => parts.map((p) => p.html).join("");
  const headline = d.headlineOf(view);
  const badge = d.badgeOf(view, false);
  return {
    headline: { text: d.esc(headline.text), class: headline.class },
    badge: { text: d.esc(badge.text), class: badge.class },
    updated: d.esc(`drawn ${d.time(Date.now())}`),
    infras: join(d.infras(view)),
    groups: join(d.groups(view)),
    pushes: join(d.pushes(view)),
    problems: join(d.problems(view)),
  };
}
