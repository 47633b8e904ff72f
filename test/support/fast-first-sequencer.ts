// Stryker runs each mutant's covering tests with bail: the first failure ends the run. Vitest's own
// order starts the slowest files first (best for a full run on many workers), so a mutant that a
// ten-millisecond example kills still waited for a thirty-second property. For mutation runs only
// (vitest.mutation.config.ts), the quickest files go first: killed mutants end early, and only the
// survivors pay for every covering test.
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

export class FastFirstSequencer extends BaseSequencer {
  override sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const cache = this.ctx.cache;
    const cost = (spec: TestSpecification): number => {
      const key = `${spec.project.name}:${relative(this.ctx.config.root, spec.moduleId)}`;
      // Known durations first (from the dry run), else the file's size as the guess.
      return cache.getFileTestResults(key)?.duration ?? cache.getFileStats(key)?.size ?? Number.MAX_SAFE_INTEGER;
    };
    return Promise.resolve([...files].sort((a, b) => cost(a) - cost(b)));
  }
}
