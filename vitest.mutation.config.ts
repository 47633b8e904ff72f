// The suites Stryker runs against each mutant (stryker.config.mjs): unit tests of the folders whose
// bugs reach a user, without the suites that need peers (kube-apiserver, Kea, CoreDNS, dig).
import { defineConfig } from "vitest/config";
import { FastFirstSequencer } from "./test/support/fast-first-sequencer.js";

export default defineConfig({
  test: {
    include: [
      "test/model/**/*.test.ts",
      "test/golden/{model,envoy,golden,apps-ingress-paths}.test.ts",
      "test/envoy/**/*.test.ts",
      "test/xds/server/{authz,plan,plan-make-before-break,plan-shortcuts,session,subscription,shared,splice,cache,identity,unknown-groups,subscription-limits,warming,conformance,hot-push,services,memory,stream-log,connection-cap,held-map,tls,session-*}.test.ts",
      "test/xds/{client-status-idle,health}.test.ts",
      "test/xds/introspect/{csds,debug,services}.test.ts",
      "test/pipeline/{last-good,last-good.property,incremental,file-sink,file-sink-generations,file-sink-rules,output-guard,snapshots,same-json}.test.ts",
      "test/dns/server/{table,table-oracle.property,domain-not-owned,buffers}.test.ts",
    ],
    setupFiles: ["test/support/fast-check-setup.ts"],
    testTimeout: 60_000,
    pool: "forks",
    sequence: { sequencer: FastFirstSequencer },
  },
});
