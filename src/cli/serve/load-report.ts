// serve's log of what it read and rendered (one branch of the render loop): each problem once,
// when it appears and when it goes; an unreadable load, a watch that is down.
import type { Logger } from "pino";
import type { Problem } from "../../model/types.js";
import type { ManifestSources } from "../../watchers/manifest-sources.js";
import type { Outputs, RenderedInfra, RenderingDelta, StatusEntry } from "../../pipeline/outputs.js";
import { topologyKey } from "../../model/topology-key.js";
import { patchMap, REMOVED, type Removed } from "../../util/overlay-map.js";
import {
  formatManifestError,
  summarizeIgnored,
  type ManifestError,
  type ManifestLoad,
} from "../../watchers/manifests.js";
import type { WatchHealth } from "../../watchers/manifest-watch.js";
import {
  noInfraWarning,
  problemLine,
  problemLines,
  ProblemMemory,
  userPath,
  type ProblemEntry,
  type ProblemLine,
} from "../problem-report.js";

/**
 * serve's log of what it read: each problem once, when it appears (warn, with file:line:column),
 * and once when it goes (info) — a reload that changes nothing logs nothing.
 */
export class LoadReport {
  readonly #log: Logger;
  readonly #dir: string;
  /** The folder files are named relative to (undefined: --manifests is one file, named as given). */
  readonly #root: string | undefined;
  readonly #problems = new ProblemMemory();
  #unreadable: string | undefined;
  /** The files (and objects) of the last load that could not be applied, as logged. */
  #fileProblems = new Set<string>();
  #watchDown = false;
  #notice: string | undefined;
  #infras: readonly RenderedInfra[] | undefined;
  /** The renderings of the last rendering logged: the next one's delta says what differs from them. */
  #seen: ReadonlyMap<string, RenderedInfra> | undefined;
  /** Per Infra, its children with problems (a refused rendering), patched by each rendering's delta. */
  #children: ReadonlyMap<string, readonly StatusEntry[]> = new Map();
  /**
   * Each model problem's line, while the sources it was located in are the same: a rebuilt Infra's
   * problems are new objects, a kept one's the same, so a load formats and locates only what its
   * change rebuilt (a Machine's change keeps the sources; an Infra's or attachment's replaces them).
   */
  #lines = new WeakMap<Problem, ProblemLine>();
  #linesIn: ManifestSources | undefined;

  constructor(log: Logger, dir: string, root: string | undefined) {
    this.#log = log;
    this.#dir = dir;
    this.#root = root;
  }

  /** The error with its file as the user can open it. */
  #located(e: ManifestError): ManifestError {
    return { ...e, file: userPath(this.#root, e.file) };
  }

  unreadable(error: ManifestError): void {
    const shown = this.#located(error);
    const text = formatManifestError(shown);
    if (text !== this.#unreadable) {
      const at = { file: shown.file, line: error.line, column: error.column };
      this.#log.warn(
        at,
        `${text} — manifests unreadable, keeping the last good configuration${this.#infras === undefined ? " (none yet)" : ""}`,
      );
    }
    this.#unreadable = text;
  }

  watch(h: WatchHealth): void {
    if (h.type === "path") {
      const file = userPath(this.#root, h.path);
      this.#log.warn({ file }, `${file}: cannot be watched: ${h.reason}; the rest of the folder is watched`);
    } else if (h.type === "down") {
      if (!this.#watchDown)
        this.#log.error(`cannot watch ${this.#dir}: ${h.reason}; changes are not seen, retrying (not ready meanwhile)`);
      this.#watchDown = true;
    } else {
      this.#log.info(`watching ${this.#dir} again; reading it whole`);
      this.#watchDown = false;
    }
  }

  rendered(load: Extract<ManifestLoad, { ok: true }>, out: Outputs): void {
    if (this.#unreadable !== undefined) this.#log.info(`manifests readable again: ${this.#unreadable} is resolved`);
    this.#unreadable = undefined;
    // One file that cannot be applied holds back only what it defines: said once, and once resolved.
    const problems = new Set<string>();
    for (const problem of load.problems) {
      const p = this.#located(problem);
      const text = formatManifestError(p);
      problems.add(text);
      if (!this.#fileProblems.has(text))
        this.#log.warn(
          { file: p.file, line: p.line, column: p.column },
          `${text} — not applied: its last good version, if any, is still served; the other files are applied`,
        );
    }
    for (const text of this.#fileProblems) if (!problems.has(text)) this.#log.info(`resolved: ${text}`);
    this.#fileProblems = problems;
    const ignored = summarizeIgnored(load.ignored);
    if (ignored !== "") this.#log.debug(`ignored ${ignored}`);
    const notice = noInfraWarning(this.#dir, load);
    if (notice !== undefined && notice !== this.#notice) this.#log.warn(notice);
    this.#notice = notice;
    const delta = this.#seen !== undefined && out.delta?.from === this.#seen ? out.delta : undefined;
    this.#children = childProblems(out, delta, this.#children);
    this.#seen = out.byInfra;
    const { added, resolved } = this.#problems.update([
      ...this.#modelLines(out.model.problems, load.sources),
      ...problemLines(childEntries(this.#children), load.sources, this.#root),
    ]);
    for (const p of added) {
      this.#log.warn(
        { object: p.object, field: p.field, reason: p.reason, severity: p.severity, ...p.position },
        p.text,
      );
    }
    for (const text of resolved) this.#log.info(`resolved: ${text}`);
    const same =
      delta === undefined
        ? this.#infras !== undefined && sameItems(this.#infras, out.infras)
        : delta.rendered.length === 0 && delta.dropped.length === 0;
    if (!same) {
      this.#log.info({ infras: out.infras.length, problems: out.model.problems.length }, "rendered");
    }
    this.#infras = out.infras;
  }

  /** The model's problems as lines, in their order; each formatted and located once (#lines). */
  #modelLines(problems: readonly Problem[], sources: ManifestSources): ProblemLine[] {
    if (sources !== this.#linesIn) {
      this.#lines = new WeakMap();
      this.#linesIn = sources;
    }
    const out: ProblemLine[] = [];
    for (const p of problems) {
      let line = this.#lines.get(p);
      if (line === undefined) {
        line = problemLine(p.object, p, sources, this.#root);
        this.#lines.set(p, line);
      }
      out.push(line);
    }
    return out;
  }
}

/**
 * The children with problems (a refused rendering) as status entries hold them, in Infra order.
 * Read from the Infras' renderings, not from every object's status, so a change costs the problems,
 * not the objects.
 */
function childEntries(children: ReadonlyMap<string, readonly StatusEntry[]>): ProblemEntry[] {
  const entries: ProblemEntry[] = [];
  for (const [, list] of [...children].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) entries.push(...list);
  return entries;
}

/** Each Infra's children with problems: patched from the previous ones by a delta, else from every rendering. */
function childProblems(
  out: Pick<Outputs, "infras">,
  delta: RenderingDelta | undefined,
  previous: ReadonlyMap<string, readonly StatusEntry[]>,
): ReadonlyMap<string, readonly StatusEntry[]> {
  const withProblems = (r: RenderedInfra) => r.childStatus.filter((c) => c.problems.length > 0);
  if (delta === undefined) {
    const all = new Map<string, readonly StatusEntry[]>();
    for (const r of out.infras) {
      const list = withProblems(r);
      if (list.length > 0) all.set(topologyKey(r.topology), list);
    }
    return all;
  }
  const changes = new Map<string, readonly StatusEntry[] | Removed>();
  for (const r of delta.dropped) changes.set(topologyKey(r.topology), REMOVED);
  for (const r of delta.rendered) {
    const list = withProblems(r);
    changes.set(topologyKey(r.topology), list.length > 0 ? list : REMOVED);
  }
  return patchMap(previous, changes);
}

/** Whether two renderings hold the same Infra renderings (a kept Infra keeps its object). */
function sameItems<T>(a: readonly T[], b: readonly T[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
