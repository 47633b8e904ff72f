// Structural rules every rendered CoreDNS ConfigMap must obey, as a list of violations.
import { expect } from "vitest";
import { directives, parseCorefile, viewExpr, type ServerBlockAst } from "./corefile-parser.js";

const CONFIGMAP_KEY = /^[-._a-zA-Z0-9]+$/;

/** Why `files` would misbehave in CoreDNS mounted at `mountDir`; empty when it is sound. */
export function violations(files: Readonly<Record<string, string>>, mountDir = "/etc/coredns"): string[] {
  const out: string[] = [];
  for (const key of Object.keys(files)) {
    if (!CONFIGMAP_KEY.test(key) || key.length > 253 || key === "." || key === "..") {
      out.push(`invalid ConfigMap key ${key}`);
    }
  }
  const corefile = files.Corefile;
  if (corefile === undefined) return [...out, "no Corefile"];
  const blocks = parseCorefile(corefile);

  const byZone = new Map<string, ServerBlockAst[]>();
  for (const b of blocks) {
    const key = b.keys[0];
    if (b.keys.length !== 1 || key === undefined || !key.endsWith(":53")) {
      out.push(`block keys ${b.keys.join(" ")}`);
      continue;
    }
    byZone.set(key, [...(byZone.get(key) ?? []), b]);
  }
  for (const [zone, list] of byZone) {
    const unfiltered = list.filter((b) => viewExpr(b) === undefined);
    if (unfiltered.length !== 1) out.push(`${zone}: ${unfiltered.length} unfiltered blocks`);
    if (viewExpr(list[list.length - 1] as ServerBlockAst) !== undefined) {
      out.push(`${zone}: a view block follows the unfiltered block`);
    }
  }

  const referenced = new Set<string>();
  for (const b of blocks) {
    const zone = (b.keys[0] ?? "").replace(/:53$/, "");
    const file = directives(b, "file");
    const forward = directives(b, "forward");
    if (file.length + forward.length !== 1) out.push(`${zone}: ${file.length} file + ${forward.length} forward`);
    for (const f of file) {
      const [path, origin] = f.args;
      const key = path?.startsWith(`${mountDir}/`) === true ? path.slice(mountDir.length + 1) : undefined;
      if (key === undefined || files[key] === undefined) out.push(`${zone}: file ${path ?? ""} is not a key`);
      else referenced.add(key);
      if (origin !== zone) out.push(`${zone}: file origin ${origin ?? ""}`);
    }
    for (const f of forward) {
      if (f.args.includes("/etc/resolv.conf") && directives(b, "loop").length !== 1) {
        out.push(`${zone}: forwards to /etc/resolv.conf without loop`);
      }
    }
  }
  for (const key of Object.keys(files)) {
    if (key !== "Corefile" && !referenced.has(key)) out.push(`zone file ${key} is never loaded`);
  }

  for (const name of ["health", "ready", "reload"]) {
    const where = blocks.filter((b) => directives(b, name).length > 0);
    const count = where.reduce((n, b) => n + directives(b, name).length, 0);
    if (count !== 1 || where[0]?.keys[0] !== ".:53") out.push(`${name} appears ${count} times`);
  }
  return out;
}

/** Asserts that `files` breaks none of the rules above. */
export function invariantsHold(files: Readonly<Record<string, string>>, mountDir?: string): void {
  expect(violations(files, mountDir)).toEqual([]);
}
