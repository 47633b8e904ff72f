// Mutation testing (StrykerJS), run by hand like a benchmark: bench/mutation/run.sh runs one target at a
// time and prints its score as JSON; the scores and the surviving mutants are in bench/README.md.
// The tests are the unit suites of the mutated folders (vitest.mutation.config.ts), not the
// integration suites that start peers: a mutant is judged by the tests written for its code.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: "vitest",
  vitest: { configFile: "vitest.mutation.config.ts", related: false },
  coverageAnalysis: "perTest",
  reporters: ["clear-text", "json", "progress"],
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  htmlReporter: { fileName: "reports/mutation/mutation.html" },
  tempDirName: ".stryker-tmp",
  concurrency: 2,
  timeoutMS: 20_000,
  // The mutation suites include xDS suites over real servers: the first full run takes minutes.
  dryRunTimeoutMinutes: 20,
  thresholds: { high: 90, low: 85, break: null },
  ignoreStatic: true,
};
