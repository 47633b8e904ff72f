// The suites Stryker runs against each mutant (stryker.config.mjs): unit tests of the folders whose
// bugs reach a user, without the suites that need peers (kube-apiserver, Kea, CoreDNS, dig).
// OOOI_MUTATION_SUITES=model (or a comma-separated list of the groups below) keeps only the suites
// written for the mutated folder: the Envoy and xDS suites build models too, so without it every
// surviving model mutant also waits for them.
import { defineConfig } from "vitest/config";
import { FastFirstSequencer } from "./test/support/fast-first-sequencer.js";

const SUITES: Readonly<Record<string, readonly string[]>> = {
  model: ["test/model/**/*.test.ts", "test/golden/{model,golden,apps-ingress-paths}.test.ts"],
  envoy: ["test/envoy/**/*.test.ts", "test/golden/{envoy,golden}.test.ts"],
  xds: [
    "test/xds/server/{authz,plan,plan-make-before-break,plan-shortcuts,session,subscription,shared,splice,cache,identity,unknown-groups,subscription-limits,warming,conformance,hot-push,services,memory,stream-log,connection-cap,held-map,tls,session-*}.test.ts",
    "test/xds/{client-status-idle,health}.test.ts",
    "test/xds/introspect/{csds,debug,services}.test.ts",
  ],
  pipeline: [
    "test/pipeline/{last-good,last-good.property,incremental,file-sink,file-sink-generations,file-sink-rules,output-guard,snapshots,same-json}.test.ts",
  ],
  dns: ["test/dns/server/{table,table-oracle.property,domain-not-owned,buffers}.test.ts"],
};

const chosen = (process.env["OOOI_MUTATION_SUITES"] ?? "").split(",").filter((g) => g !== "");
for (const g of chosen) if (SUITES[g] === undefined) throw new Error(`OOOI_MUTATION_SUITES: no group ${g}`);

export default defineConfig({
  test: {
    include: [...new Set((chosen.length > 0 ? chosen : Object.keys(SUITES)).flatMap((g) => SUITES[g] ?? []))],
    setupFiles: ["test/support/fast-check-setup.ts"],
    testTimeout: 60_000,
    pool: "forks",
    sequence: { sequencer: FastFirstSequencer },
  },
});
