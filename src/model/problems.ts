// Collects problems while the model (or a renderer) runs: each is bound to its object once
// (`problems.for(ref)`); sorting happens once at the end.
import { groupBy } from "../util/group.js";
import type { ObjectRef, Problem, ProblemReason, Severity } from "./types.js";

/** The problems of one object: what `Problems.for` returns. */
export interface ObjectProblems {
  readonly object: ObjectRef;
  /** `field` is a path into the object ("" = the whole object); `message` says what was found and what happens now. */
  error(field: string, reason: ProblemReason, message: string): void;
  pending(field: string, reason: ProblemReason, message: string): void;
  warning(field: string, reason: ProblemReason, message: string): void;
  /** True once an error was recorded through this binding: the object (or part) is not served. */
  readonly hasErrors: boolean;
}

export class Problems {
  readonly #items: Problem[] = [];

  for(object: ObjectRef): ObjectProblems {
    const items = this.#items;
    let errors = 0;
    const add = (severity: Severity) => (field: string, reason: ProblemReason, message: string) => {
      if (severity === "error") errors++;
      items.push({ object, field, reason, message, severity });
    };
    return {
      object,
      error: add("error"),
      pending: add("pending"),
      warning: add("warning"),
      get hasErrors() {
        return errors > 0;
      },
    };
  }

  /** Every problem in the order recorded (a renderer's problems read in the order it checked). */
  recorded(): readonly Problem[] {
    return [...this.#items];
  }

  /** Every problem recorded, in compareProblems order. */
  sorted(): Problem[] {
    return [...this.#items].sort(compareProblems);
  }
}

export function refKey(r: ObjectRef): string {
  return `${r.kind}/${r.namespace}/${r.name}`;
}

/**
 * A list's problems by refKey of their object, grouped once per list (problem lists are immutable
 * and kept while unchanged: the reconcile passes over one rendering group it once).
 */
export function problemsByRef(problems: readonly Problem[]): ReadonlyMap<string, readonly Problem[]> {
  let out = byRefOf.get(problems);
  if (out === undefined) {
    out = groupBy(problems, (p) => refKey(p.object));
    byRefOf.set(problems, out);
  }
  return out;
}

const byRefOf = new WeakMap<readonly Problem[], ReadonlyMap<string, readonly Problem[]>>();

/** Problem order: object, field, reason, message. */
export function compareProblems(a: Problem, b: Problem): number {
  return (
    cmp(refKey(a.object), refKey(b.object)) ||
    cmp(a.field, b.field) ||
    cmp(a.reason, b.reason) ||
    cmp(a.message, b.message)
  );
}

export function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
