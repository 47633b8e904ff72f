// `oooi operator` whose API server does not answer at start, through the built CLI: it stays up,
// answers /healthz, says not ready on /readyz, and logs one summary line per --api-retry-max instead
// of a warning per attempt; SIGTERM still ends it cleanly. In the default (mTLS) mode it exited 13
// right after its first "retrying" line, and with --xds-plaintext it logged ~2 warnings a second
// (issue 27, finding 3). test/kube/cli-operator-api-away.test.ts then brings a real API server up.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { writeKubeconfig } from "../support/fake-apiserver/index.js";
import { CliProcess, until } from "../support/cli.js";
import { httpGet } from "../support/http-get.js";

const dir = mkdtempSync(join(tmpdir(), "oooi-operator-away-"));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** A loopback port nothing listens on (bound once to find it, then closed). */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const address = s.address();
      s.close(() => {
        resolve(typeof address === "object" && address !== null ? address.port : 0);
      });
    });
  });
}

interface Line {
  level: number;
  msg: string;
}

const lines = (op: CliProcess): Line[] =>
  op.log
    .split("\n")
    .slice(0, -1)
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Line);

describe("oooi operator with its API server away", () => {
  it.each([
    { mode: "mTLS (the default)", extra: [] },
    { mode: "--xds-plaintext", extra: ["--xds-plaintext"] },
  ])(
    "$mode: stays up and not ready, one summary line per interval",
    async ({ extra }) => {
      const server = `https://127.0.0.1:${String(await closedPort())}`;
      const kubeconfig = await writeKubeconfig(server, mkdtempSync(join(dir, "kc-")));
      const op = new CliProcess(
        "operator",
        [
          "--kubeconfig",
          kubeconfig,
          "--xds-listen",
          "127.0.0.1:0",
          "--http-listen",
          "127.0.0.1:0",
          "--log-format",
          "json",
          "--api-retry-max",
          "200",
          ...extra,
        ],
        { ...process.env, POD_NAMESPACE: "oooi-system", POD_NAME: "oooi-0" },
      );
      try {
        const summaries = () => lines(op).filter((l) => l.msg.startsWith("API server unreachable for "));
        await until(() => op.child.exitCode !== null || summaries().length >= 3, "three summary lines or an exit");
        expect(op.child.exitCode, op.log).toBe(null);
        expect(summaries()[0]?.msg).toMatch(
          /^API server unreachable for \S+, \d+ attempts \(API discovery\), last error: connect ECONNREFUSED/,
        );

        const base = /probes and metrics on (https?:\/\/[\d.]+:\d+)/.exec(op.log)?.[1] ?? "";
        const ready = await httpGet(`${base}/readyz`);
        expect(ready.status).toBe(503);
        expect((await httpGet(`${base}/healthz`)).status).toBe(200);

        // The first failure and the summaries are the only warnings: no line per attempt of each part.
        const warnings = lines(op).filter((l) => l.level === 40 && !l.msg.startsWith("--xds-plaintext"));
        expect(warnings.map((l) => l.msg.replace(/ (for|\().*$/, ""))).toEqual(
          warnings.map(() => "API server unreachable"),
        );
        const attempts = Number(/(\d+) attempts/.exec(summaries().at(-1)?.msg ?? "")?.[1]);
        expect(warnings.length).toBeLessThan(attempts);

        op.child.kill("SIGTERM");
        expect(await op.exited).toBe(0);
      } finally {
        if (op.child.exitCode === null) op.child.kill("SIGKILL");
      }
    },
    60_000,
  );
});
