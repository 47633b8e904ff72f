// The import graph of src/, read with TypeScript's own pre-processor (type-only imports included:
// a cycle through a type is still a cycle a reader has to untangle), and the layer rules checked on
// it. Rules are plain functions over a graph, so the test can plant a wrong edge and see each fail.
import { readdirSync, readFileSync } from "node:fs";
import { join, posix, relative } from "node:path";
import ts from "typescript";

/** Edges of the import graph: a module ("src/…/x.ts") → the specifiers it imports, resolved. */
export type ImportGraph = ReadonlyMap<string, readonly string[]>;

/** Every .ts module under `dir` (repo-relative, POSIX separators) with what it imports. */
export function readImportGraph(root: string, dir = "src"): ImportGraph {
  const graph = new Map<string, string[]>();
  for (const file of walk(join(root, dir))) {
    const module = relative(root, file).split("\\").join("/");
    const info = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
    graph.set(
      module,
      info.importedFiles.map((f) => resolveSpecifier(module, f.fileName)),
    );
  }
  return graph;
}

function* walk(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) yield path;
  }
}

/** A relative specifier as the module it names ("./x.js" → "src/…/x.ts"); a package name as is. */
export function resolveSpecifier(from: string, specifier: string): string {
  if (!specifier.startsWith(".")) return specifier;
  return posix.join(posix.dirname(from), specifier).replace(/\.js$/, ".ts");
}

/** One broken rule: the importing module and what it imported. */
export interface Violation {
  readonly from: string;
  readonly to: string;
}

/** A layer rule: the imports it forbids. */
export interface ImportRule {
  readonly name: string;
  /** Modules the rule constrains. */
  readonly applies: (module: string) => boolean;
  /** Whether `module` may import `target` (a module path or a package specifier). */
  readonly allows: (target: string) => boolean;
}

/** The imports of the graph that break the rule. */
export function violations(graph: ImportGraph, rule: ImportRule): Violation[] {
  const out: Violation[] = [];
  for (const [from, targets] of graph) {
    if (!rule.applies(from)) continue;
    for (const to of targets) if (!rule.allows(to)) out.push({ from, to });
  }
  return out;
}

/** Every import cycle among the graph's modules, each as its modules in import order (Tarjan's SCCs). */
export function cycles(graph: ImportGraph): string[][] {
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    indices.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!indices.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) ?? 0, indices.get(w) ?? 0));
      }
    }
    if (low.get(v) === indices.get(v)) {
      const component: string[] = [];
      let w: string | undefined;
      do {
        w = stack.pop();
        if (w === undefined) break;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      const selfLoop = (graph.get(v) ?? []).includes(v);
      if (component.length > 1 || selfLoop) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!indices.has(v)) visit(v);
  return found;
}

/**
 * The graph of what loading a module loads: static, value-carrying imports and re-exports only
 * (`import type`, `export type` and `import()` are left out — they load nothing at start).
 */
export function readLoadGraph(root: string, dir = "src"): ImportGraph {
  const graph = new Map<string, string[]>();
  for (const file of walk(join(root, dir))) {
    const module = relative(root, file).split("\\").join("/");
    const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest);
    const loads: string[] = [];
    for (const statement of source.statements) {
      if (ts.isImportDeclaration(statement) && ts.isStringLiteral(statement.moduleSpecifier)) {
        if (statement.importClause?.phaseModifier === ts.SyntaxKind.TypeKeyword) continue;
        const named = statement.importClause?.namedBindings;
        const onlyTypes =
          statement.importClause?.name === undefined &&
          named !== undefined &&
          ts.isNamedImports(named) &&
          named.elements.length > 0 &&
          named.elements.every((e) => e.isTypeOnly);
        if (!onlyTypes) loads.push(resolveSpecifier(module, statement.moduleSpecifier.text));
      } else if (
        ts.isExportDeclaration(statement) &&
        !statement.isTypeOnly &&
        statement.moduleSpecifier !== undefined &&
        ts.isStringLiteral(statement.moduleSpecifier)
      ) {
        loads.push(resolveSpecifier(module, statement.moduleSpecifier.text));
      }
    }
    graph.set(module, loads);
  }
  return graph;
}

/** Every module and package loading `start` loads, `start` included. */
export function loadedFrom(graph: ImportGraph, start: string): Set<string> {
  const seen = new Set<string>([start]);
  const queue = [start];
  for (let m = queue.pop(); m !== undefined; m = queue.pop()) {
    for (const next of graph.get(m) ?? []) {
      if (seen.has(next)) continue;
      seen.add(next);
      queue.push(next);
    }
  }
  return seen;
}
