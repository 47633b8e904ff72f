// The per-component NAD: the Infra NAD's config with static IPAM, or a reference with `ips`.
import { describe, expect, it } from "vitest";
import { staticCopy } from "../../../src/operator/desired/network.js";

const IPAM = { type: "static", addresses: [{ address: "192.0.2.4/24", gateway: "192.0.2.1" }] };

describe("staticCopy", () => {
  it("replaces a single plugin's ipam, keeping everything else", () => {
    const config = JSON.stringify({
      cniVersion: "0.4.0",
      name: "vlan",
      type: "macvlan",
      master: "eth1",
      mode: "bridge",
      ipam: { type: "whereabouts", range: "192.0.2.0/24" },
    });
    expect(JSON.parse(staticCopy(config, "192.0.2.4/24", "192.0.2.1") ?? "null")).toEqual({
      cniVersion: "0.4.0",
      name: "vlan",
      type: "macvlan",
      master: "eth1",
      mode: "bridge",
      ipam: IPAM,
    });
  });

  it("in a conflist, puts ipam on the plugin that declares it (else the first)", () => {
    const list = {
      cniVersion: "0.4.0",
      name: "vlan",
      plugins: [
        { type: "bridge", bridge: "br1", ipam: {} },
        { type: "tuning", capabilities: { mac: true } },
      ],
    };
    expect(JSON.parse(staticCopy(JSON.stringify(list), "192.0.2.4/24", "192.0.2.1") ?? "null")).toEqual({
      ...list,
      plugins: [
        { type: "bridge", bridge: "br1", ipam: IPAM },
        { type: "tuning", capabilities: { mac: true } },
      ],
    });
    const noIpam = { name: "vlan", plugins: [{ type: "ovs", bridge: "br1", vlan: 100 }, { type: "tuning" }] };
    expect(JSON.parse(staticCopy(JSON.stringify(noIpam), "192.0.2.4/24", "192.0.2.1") ?? "null")).toEqual({
      ...noIpam,
      plugins: [{ type: "ovs", bridge: "br1", vlan: 100, ipam: IPAM }, { type: "tuning" }],
    });
  });

  it.each([
    ["not observed", undefined],
    ["not JSON", "{"],
    ["not an object", "[1]"],
    ["no plugin type", JSON.stringify({ name: "x" })],
    ["OVN-Kubernetes", JSON.stringify({ name: "x", type: "ovn-k8s-cni-overlay", topology: "layer2" })],
    ["OVN-Kubernetes in a list", JSON.stringify({ name: "x", plugins: [{ type: "ovn-k8s-cni-overlay" }] })],
    ["empty plugin list", JSON.stringify({ name: "x", plugins: [] })],
  ])("falls back to referencing the Infra NAD when %s", (_, config) => {
    expect(staticCopy(config, "192.0.2.4/24", "192.0.2.1")).toBeUndefined();
  });
});
