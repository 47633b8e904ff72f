// Markdown text → its relative links and the anchors it offers, and a set of documents → the links
// that lead nowhere. Anchors follow GitHub's rules: a heading's slug (lowercase, spaces to '-',
// punctuation dropped, "-1", "-2" … for repeats) or an explicit <a id="…"> / <a name="…">.
import { posix } from "node:path";

/** One link written in a document: where it points, and the line it is on (1-based). */
export interface Link {
  readonly target: string;
  readonly line: number;
}

/** A link that leads nowhere, and why. */
export interface BrokenLink {
  readonly file: string;
  readonly line: number;
  readonly target: string;
  readonly reason: string;
}

/** The document text without fenced code blocks (their lines kept empty, so line numbers hold). */
function withoutFences(markdown: string): string[] {
  let fence: string | undefined;
  return markdown.split("\n").map((line) => {
    const marker = /^\s*(```+|~~~+)/.exec(line)?.[1];
    if (fence === undefined) {
      if (marker === undefined) return line;
      fence = marker;
      return "";
    }
    if (marker !== undefined && marker.startsWith(fence)) fence = undefined;
    return "";
  });
}

/** Inline code spans hold text, not links. */
function withoutCodeSpans(line: string): string {
  return line.replace(/(`+)[^`]*?\1/g, "");
}

/** GitHub's heading anchor: lowercase, markup and punctuation dropped, each space a hyphen. */
export function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, "")
    .replace(/[`*]/g, "");
  return text
    .toLowerCase()
    .trim()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** Every anchor a document offers: its headings' slugs (repeats numbered) and explicit ids. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of withoutFences(markdown)) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading !== undefined) {
      const base = slug(heading);
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      anchors.add(count === 0 ? base : `${base}-${String(count)}`);
    }
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1] ?? "");
  }
  return anchors;
}

/** Every link of a document that is not an absolute URL (http:, mailto: …). */
export function linksOf(markdown: string): Link[] {
  const links: Link[] = [];
  for (const [i, raw] of withoutFences(markdown).entries()) {
    const line = withoutCodeSpans(raw);
    const targets = [
      ...[...line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1] ?? ""),
      ...[...line.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/g)].map((m) => m[1] ?? ""),
      ...[...line.matchAll(/<a\s+href="([^"]+)"/g)].map((m) => m[1] ?? ""),
    ];
    for (const target of targets) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      links.push({ target, line: i + 1 });
    }
  }
  return links;
}

/** What the checker may ask about the files around the documents. */
export interface Tree {
  /** Text of a Markdown file by its path from the repository root, or undefined when absent. */
  markdown(path: string): string | undefined;
  /** Whether any file or folder exists at this path from the repository root. */
  exists(path: string): boolean;
}

/** Every relative link of `files` (paths from the root) that names a missing file or anchor. */
export function brokenLinks(files: readonly string[], tree: Tree): BrokenLink[] {
  const broken: BrokenLink[] = [];
  const anchorCache = new Map<string, Set<string>>();
  const anchors = (path: string): Set<string> | undefined => {
    const text = tree.markdown(path);
    if (text === undefined) return undefined;
    let found = anchorCache.get(path);
    if (found === undefined) anchorCache.set(path, (found = anchorsOf(text)));
    return found;
  };
  for (const file of files) {
    for (const { target, line } of linksOf(tree.markdown(file) ?? "")) {
      const hash = target.indexOf("#");
      const pathPart = decodeURI(hash < 0 ? target : target.slice(0, hash));
      const anchor = hash < 0 ? undefined : target.slice(hash + 1);
      const resolved =
        pathPart === "" ? file : posix.normalize(posix.join(posix.dirname(file), pathPart)).replace(/\/$/, "");
      const fail = (reason: string): void => {
        broken.push({ file, line, target, reason });
      };
      if (resolved.startsWith("../") || posix.isAbsolute(resolved)) {
        fail("points outside the repository");
        continue;
      }
      if (!tree.exists(resolved)) {
        fail(`no file ${resolved}`);
        continue;
      }
      if (anchor === undefined || anchor === "") continue;
      if (!resolved.endsWith(".md")) {
        if (!/^L\d+(-L\d+)?$/.test(anchor)) fail(`#${anchor} on a file that is not Markdown`);
        continue;
      }
      if (anchors(resolved)?.has(decodeURIComponent(anchor)) !== true)
        fail(`no heading or id #${anchor} in ${resolved}`);
    }
  }
  return broken;
}
