import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    setupFiles: ["test/support/fast-check-setup.ts", "test/support/list-equality-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration suites create network namespaces and run real daemons: keep files apart.
    fileParallelism: true,
    pool: "forks",
  },
});
