// serve says at start which node groups it serves and how to point an Envoy at them, and an Envoy
// whose node.cluster is mistyped is told about once — with the groups it could have meant — instead
// of silently receiving nothing. Through the built CLI, with the Envoy stand-in.
import { describe, expect, it } from "vitest";
import { startupSummary } from "../../src/cli/serve/xds.js";
import { unknownGroupMessage } from "../../src/xds/server/index.js";
import { LISTENER_TYPE_URL } from "../../src/xds/resource/protos.js";
import { EnvoyLikeClient } from "../support/envoy/client.js";
import { ServeProcess, until } from "../support/cli.js";
import { exampleCopy } from "../support/examples.js";

describe("startup summary and unknown node groups", () => {
  it("words the summary for no group, Envoy groups and DHCP groups", () => {
    expect(startupSummary({ envoy: [], dhcp: [] }, "127.0.0.1:18000")).toContain("serves no node group yet");
    const both = startupSummary({ envoy: ["a/x-proxy", "b/y-proxy"], dhcp: ["a/x-dhcp"] }, "10.0.0.1:18000");
    expect(both).toContain("Envoy node groups a/x-proxy, b/y-proxy");
    expect(both).toContain("ADS 10.0.0.1:18000 with node.cluster");
    expect(both).toContain("oooi dhcp-agent --xds 10.0.0.1:18000 --node <group>");
    expect(unknownGroupMessage("n1", "a/x-prxy", ["a/x-proxy", "b/y"])).toBe(
      'node n1: node.cluster "a/x-prxy" is no known node group, so nothing is sent to it; known groups: a/x-proxy, b/y',
    );
    expect(unknownGroupMessage("n1", "a", [])).toContain("known groups: none yet");
  });

  it("serve logs one summary, and warns once per node about a mistyped node.cluster", async () => {
    const serve = new ServeProcess([
      "--manifests",
      exampleCopy("standalone"),
      "--xds-listen",
      "127.0.0.1:0",
      "--no-dns",
    ]);
    const clients: EnvoyLikeClient[] = [];
    try {
      await until(() => serve.lines().some((l) => l.msg.startsWith("serving ")), "the startup summary");
      const port = /xDS \(ADS\) server listening on [\d.]+:(\d+)/.exec(serve.log)?.[1] ?? "";
      const summary = serve.lines().filter((l) => l.msg.startsWith("serving "));
      expect(summary).toHaveLength(1);
      expect(summary[0]?.msg).toContain(
        `Envoy node groups clusters/tenant-vlan-proxy — point an Envoy at ADS 127.0.0.1:${port}`,
      );

      const connect = (id: string, cluster: string) => {
        const c = new EnvoyLikeClient({ address: `127.0.0.1:${port}`, node: { id, cluster } });
        clients.push(c);
        c.connect();
        return c;
      };
      // The same mistyped node twice (a restart), then a correct one: only the first stream warns.
      connect("typo", "clusters/tenant-vlan-prxy");
      connect("typo", "clusters/tenant-vlan-prxy");
      const good = connect("good", "clusters/tenant-vlan-proxy");
      await good.waitFor(() => good.version(LISTENER_TYPE_URL) !== "", "the correct node configured");
      await until(
        () => serve.lines().filter((l) => l.msg === "xDS stream connected" && l["node"] === "typo").length === 2,
        "both typo streams connected",
      );
      const warned = serve.lines().filter((l) => l.msg.includes("is no known node group"));
      expect(warned).toEqual([
        expect.objectContaining({
          level: 40,
          node: "typo",
          group: "clusters/tenant-vlan-prxy",
          known: ["clusters/tenant-vlan-dhcp", "clusters/tenant-vlan-proxy"],
        }),
      ]);
      expect(warned[0]?.msg).toContain("known groups: clusters/tenant-vlan-dhcp, clusters/tenant-vlan-proxy");
    } finally {
      for (const c of clients) c.close();
      await serve.stop();
    }
  });
});
