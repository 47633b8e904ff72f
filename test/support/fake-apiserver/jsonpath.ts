// The JSONPath subset a CRD's additionalPrinterColumns use: `.field` steps, `[n]` indexes and
// `[?(@.a.b=='x')]` filters. kube-apiserver accepts more; anything else is refused when the CRD is read,
// so the fake never serves a column it cannot evaluate the way the real server would.
import type { Json } from "./types.js";
import { isObject } from "./types.js";

type Step =
  | { readonly type: "field"; readonly name: string }
  | { readonly type: "index"; readonly index: number }
  | {
      readonly type: "filter";
      readonly path: readonly string[];
      readonly op: "==" | "!=";
      readonly value: string | number;
    };

/** A parsed printer-column path. */
export type JsonPath = readonly Step[];

const FIELD = /^\.([A-Za-z0-9_-]+)/;
const INDEX = /^\[(\d+)\]/;
const FILTER = /^\[\?\(@((?:\.[A-Za-z0-9_-]+)+)\s*(==|!=)\s*(?:'([^']*)'|"([^"]*)"|(-?\d+(?:\.\d+)?))\)\]/;

/** Parses `expr` or throws an Error saying what part of it is not supported. */
export function parseJsonPath(expr: string): JsonPath {
  const steps: Step[] = [];
  let rest = expr.trim();
  if (rest.startsWith("{") && rest.endsWith("}")) rest = rest.slice(1, -1);
  if (!rest.startsWith(".")) throw new Error(`JSONPath ${JSON.stringify(expr)} must start with "."`);
  while (rest !== "") {
    let m: RegExpExecArray | null;
    if ((m = FIELD.exec(rest)) !== null) steps.push({ type: "field", name: m[1] ?? "" });
    else if ((m = INDEX.exec(rest)) !== null) steps.push({ type: "index", index: Number(m[1]) });
    else if ((m = FILTER.exec(rest)) !== null) {
      const path = (m[1] ?? "").slice(1).split(".");
      const op = m[2] === "!=" ? "!=" : "==";
      const value = m[5] !== undefined ? Number(m[5]) : (m[3] ?? m[4] ?? "");
      steps.push({ type: "filter", path, op, value });
    } else throw new Error(`JSONPath ${JSON.stringify(expr)}: unsupported at ${JSON.stringify(rest)}`);
    rest = rest.slice(m[0].length);
  }
  return steps;
}

function at(v: Json | undefined, path: readonly string[]): Json | undefined {
  let cur = v;
  for (const p of path) cur = isObject(cur) ? cur[p] : undefined;
  return cur;
}

/** Every value the path selects in `root`, in document order (a filter may select several). */
export function evaluate(path: JsonPath, root: Json): Json[] {
  let current: Json[] = [root];
  for (const step of path) {
    const next: Json[] = [];
    for (const v of current) {
      if (step.type === "field") {
        const x = isObject(v) ? v[step.name] : undefined;
        if (x !== undefined) next.push(x);
      } else if (step.type === "index") {
        const x = Array.isArray(v) ? v[step.index] : undefined;
        if (x !== undefined) next.push(x);
      } else if (Array.isArray(v)) {
        for (const item of v) {
          const x = at(item, step.path);
          if (x === undefined) continue;
          if ((x === step.value) === (step.op === "==")) next.push(item);
        }
      }
    }
    current = next;
  }
  return current;
}
