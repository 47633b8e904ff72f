// One row of `oooi verify -o json`'s `results`, as the tests read it: declared here, test-side, so the
// tests check the CLI's JSON against its documented shape instead of importing `src/` types.
export interface Row {
  check: string;
  object: string;
  verdict: string;
  detail: string;
  failure?: string;
  cause?: string;
  fix?: string;
}

/** The rows of one `oooi verify -o json` run's stdout. */
export function resultRows(stdout: string): Row[] {
  return (JSON.parse(stdout) as { results: Row[] }).results;
}
