// A small Corefile reader for tests: server blocks → keys + directives (with nested blocks).
// Line-oriented, like the renderer's output; it throws on anything it cannot place.

/** One directive line, e.g. `forward . 1.2.3.4`, optionally with a `{ … }` body. */
export interface Directive {
  readonly name: string;
  readonly args: readonly string[];
  readonly body: readonly Directive[] | undefined;
}

/** One server block: its keys (`zone:port`) and directives. */
export interface ServerBlockAst {
  readonly keys: readonly string[];
  readonly directives: readonly Directive[];
}

interface Open {
  readonly name: string;
  readonly args: string[];
  readonly body: Directive[];
}

/** Parses a Corefile into its server blocks, in order. */
export function parseCorefile(text: string): ServerBlockAst[] {
  const blocks: ServerBlockAst[] = [];
  const stack: Open[] = [];
  text.split("\n").forEach((raw, i) => {
    const line = raw.replace(/#.*$/, "").trim();
    if (line === "") return;
    const tokens = line.split(/\s+/);
    const at = `line ${i + 1}: ${raw}`;
    if (line === "}") {
      const done = stack.pop();
      if (done === undefined) throw new Error(`unbalanced } at ${at}`);
      const parent = stack[stack.length - 1];
      if (parent === undefined) blocks.push({ keys: done.args, directives: done.body });
      else parent.body.push({ name: done.name, args: done.args, body: done.body });
      return;
    }
    const opens = tokens[tokens.length - 1] === "{";
    const words = opens ? tokens.slice(0, -1) : tokens;
    const [name, ...args] = words;
    if (name === undefined) throw new Error(`empty directive at ${at}`);
    if (stack.length === 0) {
      if (!opens) throw new Error(`directive outside a server block at ${at}`);
      stack.push({ name: "", args: words, body: [] });
    } else if (opens) {
      stack.push({ name, args, body: [] });
    } else {
      stack[stack.length - 1]?.body.push({ name, args, body: undefined });
    }
  });
  if (stack.length !== 0) throw new Error("unterminated block at end of Corefile");
  return blocks;
}

/** The directives of a block with the given name. */
export function directives(block: ServerBlockAst, name: string): Directive[] {
  return block.directives.filter((d) => d.name === name);
}

/** The view filter expression of a block, undefined when it is unfiltered. */
export function viewExpr(block: ServerBlockAst): string | undefined {
  const view = directives(block, "view")[0];
  const expr = view?.body?.find((d) => d.name === "expr");
  return expr?.args.join(" ");
}
