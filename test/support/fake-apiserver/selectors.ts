// labelSelector / fieldSelector query parameters, parsed the way kube-apiserver accepts them.
import { badRequest } from "./errors.js";
import type { KubeObject } from "./types.js";
import { meta } from "./types.js";

/** A compiled selector: true when the object matches. */
export type Selector = (obj: KubeObject) => boolean;

/** Everything matches. */
export const everything: Selector = () => true;

// Splits on commas that are not inside parentheses ("a in (x,y),b").
function terms(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = "";
  for (const ch of s) {
    if (ch === "(") depth++;
    if (ch === ")") depth--;
    if (ch === "," && depth === 0) {
      out.push(cur.trim());
      cur = "";
    } else cur += ch;
  }
  if (cur.trim() !== "") out.push(cur.trim());
  return out.filter((t) => t !== "");
}

/** Parses a label selector: `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a)`, `k`, `!k`. */
export function parseLabelSelector(s: string | null): Selector {
  if (s === null || s.trim() === "") return everything;
  const preds = terms(s).map((t): ((l: Record<string, string>) => boolean) => {
    let m = /^(\S+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(t);
    if (m) {
      const key = m[1] ?? "";
      const values = new Set(
        (m[3] ?? "")
          .split(",")
          .map((v) => v.trim())
          .filter((v) => v !== ""),
      );
      return m[2] === "in"
        ? (l) => l[key] !== undefined && values.has(l[key])
        : (l) => l[key] === undefined || !values.has(l[key]);
    }
    m = /^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(t);
    if (m) {
      const key = m[1] ?? "";
      const value = m[3] ?? "";
      return m[2] === "!=" ? (l) => l[key] !== value : (l) => l[key] === value;
    }
    m = /^!\s*([^=!\s]+)$/.exec(t);
    if (m) {
      const key = m[1] ?? "";
      return (l) => l[key] === undefined;
    }
    if (/^[^=!\s(),]+$/.test(t)) return (l) => l[t] !== undefined;
    throw badRequest(`unable to parse requirement: ${t}`);
  });
  return (obj) => {
    const labels = meta(obj).labels ?? {};
    return preds.every((p) => p(labels));
  };
}

/** Parses a field selector over metadata.name / metadata.namespace (`=`, `==`, `!=`), as every kind supports. */
export function parseFieldSelector(s: string | null): Selector {
  if (s === null || s.trim() === "") return everything;
  const preds = terms(s).map((t): Selector => {
    const m = /^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(t);
    if (!m) throw badRequest(`invalid selector: '${t}'; can't understand '${t}'`);
    const field = m[1] ?? "";
    const value = m[3] ?? "";
    const get =
      field === "metadata.name"
        ? (o: KubeObject) => meta(o).name ?? ""
        : field === "metadata.namespace"
          ? (o: KubeObject) => meta(o).namespace ?? ""
          : undefined;
    if (get === undefined) throw badRequest(`field label not supported: ${field}`);
    return m[2] === "!=" ? (o) => get(o) !== value : (o) => get(o) === value;
  });
  return (obj) => preds.every((p) => p(obj));
}
