// Issue 27 finding 4 through the built CLI: a manifest edit `oooi serve` picks up is logged as one
// change line (the object, the Infra it rebuilt, the node group's new versions), and once the
// connected Envoy-like client ACKed the new versions, as one line counting it.
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LISTENER_TYPE_URL } from "../../src/xds/resource/type-urls.js";
import { ServeProcess, until } from "../support/cli.js";
import { EnvoyLikeClient } from "../support/envoy/client.js";
import { exampleCopy } from "../support/examples.js";

const GROUP = "clusters/tenant-vlan-proxy";

describe("oooi serve's change feed", () => {
  it("logs a worker leaving as one change line, then the group's one client ACKing it", async () => {
    const dir = exampleCopy("standalone");
    const serve = new ServeProcess([
      ...["--manifests", dir, "--xds-listen", "127.0.0.1:0", "--no-dns", "--debounce", "20"],
      ...["--log-format", "json"],
    ]);
    try {
      await until(() => /xDS \(ADS\) server listening on [\d.]+:\d+/.test(serve.log), "xDS server listening");
      const port = /xDS \(ADS\) server listening on [\d.]+:(\d+)/.exec(serve.log)?.[1] ?? "";
      const changes = () => serve.lines().filter((l) => /^change \d+: /.test(l.msg));
      await until(() => changes().length > 0, "the first change line");
      // The first rendering: every object added, those of oooi's kinds with their file and line.
      const first = changes()[0];
      expect(first?.["objects"]).toContainEqual(
        expect.objectContaining({ kind: "Infra", name: "tenant-vlan", op: "added", file: join(dir, "infra.yaml") }),
      );
      const envoy = new EnvoyLikeClient({
        address: `127.0.0.1:${port}`,
        node: { id: "envoy-0", cluster: GROUP },
        protocol: "sotw",
      });
      envoy.connect();
      try {
        await envoy.waitFor(() => envoy.version(LISTENER_TYPE_URL) !== "", "the first LDS answer");
        const before = changes().length;
        // A worker leaves: its Machine and VMI are deleted, saved atomically as editors do.
        const file = join(dir, "observed.yaml");
        const docs = readFileSync(file, "utf8").split(/^---$/m);
        writeFileSync(`${file}.tmp`, docs.filter((d) => !/^ {2}name: alpha-workers-1$/m.test(d)).join("---"));
        renameSync(`${file}.tmp`, file);
        await until(() => changes().length > before, "the change line of the edit");
        const line = changes()[before];
        expect(line?.msg).toMatch(/Machine clusters-alpha\/alpha-workers-1 removed/);
        expect(line?.msg).toMatch(/rebuilt Infra clusters\/tenant-vlan/);
        expect(line?.msg).toMatch(/clusters\/tenant-vlan-proxy: .*LDS [0-9a-f]{8}→[0-9a-f]{8}/);
        expect(line?.["infras"]).toEqual(["clusters/tenant-vlan"]);
        expect(Object.keys(line?.["versions"] as object)).toEqual([GROUP]);
        expect(line?.["clients"]).toBe(1);
        const change = line?.["change"] as number;
        const acked = () => serve.lines().find((l) => l["change"] === change && /ACKed by/.test(l.msg));
        await until(() => acked() !== undefined, "the ACK line of the change");
        expect(acked()?.msg).toMatch(
          new RegExp(`^change ${String(change)}: ACKed by 1 of 1 client\\(s\\) in \\d+ ms$`),
        );
        expect(acked()).toMatchObject({ level: 30, acked: 1, clients: 1 });
      } finally {
        envoy.close();
      }
    } finally {
      await serve.stop();
    }
  });
});
