// Collects problems while the model is built; sorting happens once at the end.
import type { ObjectRef, Problem } from "./types.js";

export class Problems {
  readonly #items: Problem[] = [];

  error(object: ObjectRef, field: string, reason: string, message: string): void {
    this.#items.push({ object, field, reason, message, severity: "error" });
  }

  pending(object: ObjectRef, field: string, reason: string, message: string): void {
    this.#items.push({ object, field, reason, message, severity: "pending" });
  }

  warning(object: ObjectRef, field: string, reason: string, message: string): void {
    this.#items.push({ object, field, reason, message, severity: "warning" });
  }

  /** True when an error was recorded against the object since `mark` (see count). */
  errorsSince(mark: number, object: ObjectRef): boolean {
    return this.#items.slice(mark).some((p) => p.severity === "error" && sameRef(p.object, object));
  }

  get count(): number {
    return this.#items.length;
  }

  sorted(): Problem[] {
    return [...this.#items].sort(compareProblems);
  }
}

export function refKey(r: ObjectRef): string {
  return `${r.kind}/${r.namespace}/${r.name}`;
}

export function sameRef(a: ObjectRef, b: ObjectRef): boolean {
  return a.kind === b.kind && a.namespace === b.namespace && a.name === b.name;
}

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
