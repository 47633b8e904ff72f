// Health, readiness and admin ports listen on the pod network only, never on the VLAN interface:
// CoreDNS's health/ready/metrics bind {$POD_IP} (the downward API's status.podIP), Envoy's admin binds
// 127.0.0.1 and its readiness listener $(POD_IP). Checked on the generated Deployments and
// configuration, and with the real CoreDNS: given POD_IP=127.0.0.1 it answers there and nowhere else
// on loopback (a socket bound to 0.0.0.0 would also answer on 127.0.0.2).
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { POD_IP_ENV } from "../../../src/dns/render/corefile.js";
import { desiredState } from "../../../src/operator/desired/index.js";
import { operatorSettings } from "../../../src/operator/desired/settings.js";
import { renderAll } from "../../../src/pipeline/outputs.js";
import { COREDNS, startCoreDns } from "../../dns/coredns/rig.js";
import { startUpstream } from "../../dns/coredns/upstream.js";
import { attachment, combine, hostedCluster, infra, NS } from "../../support/fixtures.js";

type Json = Record<string, unknown>;
const BRIDGE_NAD = JSON.stringify({ cniVersion: "0.3.1", name: "vlan100", type: "bridge", bridge: "br0", ipam: {} });
const state = combine(
  { infras: [{ ...infra(), metadata: { ...infra().metadata, uid: "u1" } }], attachments: [attachment("alpha")] },
  hostedCluster("alpha", 1, ["192.0.2.50"]),
);
const VLAN_ADDRESSES = ["192.0.2.2", "192.0.2.3", "192.0.2.4"];
const desired = desiredState({
  state,
  outputs: renderAll(state),
  settings: operatorSettings({ namespace: "oooi-system" }),
  networkAttachments: new Map([[`${NS}/vlan100`, BRIDGE_NAD]]),
});
const objects = desired.infras.flatMap((i) => i.objects);
const deployment = (component: string) => {
  const d = objects.find((o) => o.kind === "Deployment" && o.metadata.name === `vlan100-${component}`);
  const pod = (d?.["spec"] as { template: { spec: { containers: Json[] } } } | undefined)?.template.spec;
  if (pod === undefined) throw new Error(`no ${component} Deployment`);
  return pod.containers;
};
const podIpEnv = { name: POD_IP_ENV, valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "status.podIP" } } };

/** Why an address is not a pod-network-only bind, or undefined. */
function wrongBind(address: string): string | undefined {
  if (address === "" || address === "0.0.0.0" || address === "::")
    return `${JSON.stringify(address)} is every interface`;
  if (VLAN_ADDRESSES.includes(address)) return `${address} is a VLAN address`;
  return undefined;
}

describe("health, readiness and admin binds", () => {
  it("wrongBind catches every interface and the VLAN (the check is real)", () => {
    expect(wrongBind("")).toBeDefined();
    expect(wrongBind("0.0.0.0")).toBeDefined();
    expect(wrongBind("192.0.2.3")).toBeDefined();
    expect(wrongBind("{$POD_IP}")).toBeUndefined();
  });

  it("CoreDNS: health, ready and metrics bind {$POD_IP}, which the pod's env fills from status.podIP", () => {
    const cm = objects.find((o) => o.kind === "ConfigMap" && o.metadata.name === "vlan100-dns");
    const corefile = String((cm?.["data"] as Json | undefined)?.["Corefile"]);
    // prometheus is in every block, with one address (CoreDNS shares the listener).
    const lines = new Set([...corefile.matchAll(/^\s+((?:health|ready|prometheus)\s*\S*)$/gm)].map((m) => m[1]));
    const binds = [...lines].map((line) => line?.split(/\s+/) ?? []);
    expect(binds).toEqual([
      ["prometheus", "{$POD_IP}:9153"],
      ["health", "{$POD_IP}:8080"],
      ["ready", "{$POD_IP}:8181"],
    ]);
    for (const [, address] of binds)
      expect(wrongBind(address?.slice(0, address.lastIndexOf(":")) ?? "")).toBeUndefined();
    const [coredns] = deployment("dns");
    expect(coredns?.["env"]).toContainEqual(podIpEnv);
  });

  it("Envoy: admin on 127.0.0.1, readiness on $(POD_IP), no bootstrap listener of its own", () => {
    const cm = objects.find((o) => o.kind === "ConfigMap" && o.metadata.name === "vlan100-proxy-bootstrap");
    const bootstrap = JSON.parse(String(Object.values((cm?.["data"] as Json | undefined) ?? {})[0])) as Json;
    expect(bootstrap["admin"]).toEqual({ address: { socket_address: { address: "127.0.0.1", port_value: 9901 } } });
    expect((bootstrap["static_resources"] as Json)["listeners"]).toBeUndefined();
    const [envoy] = deployment("proxy");
    const args = envoy?.["args"] as string[];
    const extra = JSON.parse(args[args.indexOf("--config-yaml") + 1] ?? "{}") as {
      static_resources: {
        listeners: { name: string; address: { socket_address: { address: string; port_value: number } } }[];
      };
    };
    expect(extra.static_resources.listeners.map((l) => [l.name, l.address.socket_address])).toEqual([
      ["readiness", { address: "$(POD_IP)", port_value: 8081 }],
    ]);
    // Kubernetes expands $(VAR) in args only for a variable the container defines.
    expect(envoy?.["env"]).toContainEqual(podIpEnv);
  });
});

const refused = (host: string, port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const s = connect({ host, port });
    s.once("connect", () => {
      s.destroy();
      resolve(false);
    });
    s.once("error", () => {
      resolve(true);
    });
  });

describe.skipIf(COREDNS.path === undefined)("the real CoreDNS on the generated Corefile", () => {
  it("binds health, ready and metrics to POD_IP only: answers on 127.0.0.1, refuses on 127.0.0.2", async () => {
    const cm = objects.find((o) => o.kind === "ConfigMap" && o.metadata.name === "vlan100-dns");
    const upstream = await startUpstream();
    const coredns = await startCoreDns(cm?.["data"] as Record<string, string>, { upstream });
    try {
      expect((await fetch(`http://127.0.0.1:${coredns.healthPort}/health`)).status).toBe(200);
      expect((await fetch(`http://127.0.0.1:${coredns.readyPort}/ready`)).status).toBe(200);
      expect((await fetch(`http://127.0.0.1:${coredns.metricsPort}/metrics`)).status).toBe(200);
      expect(await refused("127.0.0.2", coredns.healthPort)).toBe(true);
      expect(await refused("127.0.0.2", coredns.readyPort)).toBe(true);
      expect(await refused("127.0.0.2", coredns.metricsPort)).toBe(true);
    } finally {
      await coredns.close();
      await upstream.close();
    }
  }, 60_000);
});
