// The plain read of a YAML document: its value only, no syntax tree, no positions of its fields.
// The yaml library (manifests.ts) builds a syntax tree of every node; at 40,000 objects (one
// Infra of 5,000 attachments) that was 9 s of both cores, and most fields are never located (an
// object of our kinds keeps its document, parsed by the yaml library when a field is). js-yaml
// gives the same value in a tenth of the time. It takes only documents whose meaning both
// libraries agree on, under YAML 1.2's core schema resolved as the yaml library resolves it;
// everything else (anchors, tags, merge keys, errors) is declined and read by the yaml library,
// which alone words the errors.
import { FAILSAFE_SCHEMA, load, Type } from "js-yaml";

/** YAML 1.2 core schema (§10.3.2): the plain scalars that are not strings, as the yaml library reads them. */
const CORE_SCALARS = [
  new Type("tag:yaml.org,2002:null", {
    kind: "scalar",
    resolve: (s: string) => /^(?:~|[Nn]ull|NULL)?$/.test(s),
    construct: () => null,
  }),
  new Type("tag:yaml.org,2002:bool", {
    kind: "scalar",
    resolve: (s: string) => /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/.test(s),
    construct: (s: string) => s[0] === "t" || s[0] === "T",
  }),
  new Type("tag:yaml.org,2002:int", {
    kind: "scalar",
    resolve: (s: string) => /^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$/.test(s),
    construct: (s: string) =>
      s.startsWith("0o") ? parseInt(s.slice(2), 8) : s.startsWith("0x") ? parseInt(s.slice(2), 16) : parseInt(s, 10),
  }),
  new Type("tag:yaml.org,2002:float", {
    kind: "scalar",
    resolve: (s: string) =>
      /^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/.test(
        s,
      ),
    construct: (s: string) =>
      /nan$/i.test(s) ? NaN : /inf$/i.test(s) ? (s.startsWith("-") ? -Infinity : Infinity) : parseFloat(s),
  }),
];

const CORE = FAILSAFE_SCHEMA.extend({ implicit: CORE_SCALARS });

/**
 * A mapping key that may have been a null, a boolean or a number: the libraries make different
 * strings of those (a null key is "null" to js-yaml, "" to the yaml library).
 */
const NOT_A_STRING_KEY =
  /^(?:|~|[Nn]ull|NULL|[Tt]rue|TRUE|[Ff]alse|FALSE|[-+]?[0-9.].*|[-+]?\.?(?:inf|Inf|INF)|\.?(?:nan|NaN|NAN)|Infinity|-Infinity|NaN)$/;

/** Whether every mapping key in the value is a string the source wrote as one. */
function stringKeys(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return true;
  if (Array.isArray(value)) return value.every(stringKeys);
  for (const [k, v] of Object.entries(value)) if (NOT_A_STRING_KEY.test(k) || !stringKeys(v)) return false;
  return true;
}

/**
 * What sends a document to the yaml library: anchors and aliases (`&`, `*`: the alias limit is
 * applied there), tags (`!`), merge keys (`<<`), tabs, a byte-order mark, collections as keys
 * (`? `, `]:`, `}:`, or nested in a flow collection: js-yaml makes "[object Object]" or "a,b" of
 * them), `__proto__`, lines long enough for the 1,024-character limit on implicit keys, a `#`
 * right after a quote or a flow indicator (a comment to js-yaml, an error to the yaml library),
 * markers glued to text, empty or nested sequence items on one line (`-`, `- -`, `- #`), lines of
 * spaces, block scalars' indentation indicators (`|2`: the two read a block's blank lines apart),
 * directives (`%`), and a carriage return without its line feed (a line break to js-yaml inside a
 * quoted scalar, a character to the yaml library).
 */
const DECLINED =
  /[&*!\t\uFEFF]|\r(?!\n)|<<|__proto__|^[ ]*\?(?:[ ]|$)|^[^\n]{1024}|["'[\]{},]#|[\]}] *:|[[{][^\]}]*[[{]|^(?:---|\.\.\.)[^ \r\n]|^ *-(?: *$| +#| +-(?: |$))|^ +\r?$|[|>][-+]?[0-9]|^%/m;

/**
 * One document's value (a document's text, as splitDocuments cuts it), or undefined when the
 * yaml library must read it: it may mean something else there, or not parse.
 */
export function plainDocument(text: string): { readonly value: unknown } | undefined {
  if (DECLINED.test(text) || !closesOnEachLine(text)) return undefined;
  try {
    // js-yaml warns only of directives, declined above.
    const value = load(text, { schema: CORE });
    return stringKeys(value) ? { value } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether every quoted scalar and flow collection closes on the line it opens (block scalars'
 * lines aside; a quote inside a plain scalar is text). js-yaml reads on past such a scalar's
 * closing quote, and takes a flow collection's next lines at any indentation; the yaml library
 * refuses both.
 */
function closesOnEachLine(text: string): boolean {
  let blockAbove = -1;
  for (let at = 0; at < text.length;) {
    const end = text.indexOf("\n", at);
    const line = text.slice(at, end === -1 ? text.length : end).replace(/\r$/, "");
    at = end === -1 ? text.length : end + 1;
    const indent = line.length - line.trimStart().length;
    if (line.trim() === "" || (blockAbove >= 0 && indent > blockAbove)) continue;
    blockAbove = -1;
    let quote = "";
    let depth = 0;
    let i = indent;
    for (; i < line.length; i += 1) {
      const c = line[i];
      if (quote === "'") {
        if (c === "'") {
          if (line[i + 1] === "'") i += 1;
          else quote = "";
        }
      } else if (quote === '"') {
        if (c === "\\") i += 1;
        else if (c === '"') quote = "";
      } else if ((c === "'" || c === '"') && startsScalar(line, indent, i)) quote = c;
      else if (c === "#" && (i === 0 || line[i - 1] === " ")) break;
      else if (c === "[" || c === "{") depth += 1;
      else if (c === "]" || c === "}") depth -= 1;
      if (depth < 0) return false;
    }
    // A flow collection left open shows as a closing bracket too many on a line below.
    if (quote !== "") return false;
    // A block scalar's lines, more indented than the line that opens it, are its text.
    if (/(?:^ *|[:-] +)[|>][-+0-9]* *$/.test(line.slice(0, i))) blockAbove = indent;
  }
  return true;
}

/** Whether a quote at `i` starts a scalar; inside a plain scalar (`don't`) it is text. */
function startsScalar(line: string, indent: number, i: number): boolean {
  let j = i - 1;
  while (j >= indent && line[j] === " ") j -= 1;
  const before = j < indent ? "" : line[j];
  return (
    before === "" || before === "[" || before === "{" || before === "," || (j < i - 1 && /[:?-]/.test(before ?? ""))
  );
}

/**
 * Where a document's content starts (1-based, counted from its text's first line): its first
 * line that is not blank, a comment or the `---` marker. Undefined when content follows the
 * marker on its line.
 */
export function contentStart(text: string): { readonly line: number; readonly column: number } | undefined {
  let line = 0;
  for (let at = 0; at <= text.length; line += 1) {
    const end = text.indexOf("\n", at);
    const raw = text.slice(at, end === -1 ? text.length : end);
    at = end === -1 ? text.length + 1 : end + 1;
    const body = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    const trimmed = body.trimStart();
    if (trimmed === "" || trimmed.startsWith("#")) continue;
    if (/^---(?: |$)/.test(body)) {
      if (/^---(?: +(?:#.*)?)?$/.test(body)) continue;
      return undefined;
    }
    return { line: line + 1, column: body.length - trimmed.length + 1 };
  }
  return undefined;
}
