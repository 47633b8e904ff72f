// The pure parts of the cluster mode: the probe log parsed back into answers (dig's own output
// format, from dig(1): the ";; ->>HEADER<<-" status line, the ";; flags:" line, answer records),
// the probe pod's network form and refusals, and a child's status judged.
import { describe, expect, it } from "vitest";
import { judgeChild } from "../../src/verify/cluster.js";
import { parseProbeLog, probePod, probeScript } from "../../src/verify/probe-pod.js";

const header = (status: string, flags: string): string =>
  [
    ";; Got answer:",
    `;; ->>HEADER<<- opcode: QUERY, status: ${status}, id: 4242`,
    `;; flags: ${flags}; QUERY: 1, ANSWER: 1, AUTHORITY: 0, ADDITIONAL: 1`,
    "",
  ].join("\n");

describe("parseProbeLog", () => {
  it("reads a zone answer, a forwarded NXDOMAIN and a query that got no answer", () => {
    const log = [
      "oooi-probe api.alpha.example.com",
      header("NOERROR", "qr aa rd"),
      "api.alpha.example.com.\t30\tIN\tA\t10.0.0.9",
      "api.alpha.example.com.\t30\tIN\tA\t10.0.0.4",
      "oooi-probe-exit 0",
      "oooi-probe www.example.net",
      header("NXDOMAIN", "qr rd ra"),
      "oooi-probe-exit 0",
      "oooi-probe oauth.alpha.example.com",
      ";; communications error to 10.0.0.3#53: timed out",
      "oooi-probe-exit 9",
      "oooi-probe cut.example.com",
      header("NOERROR", "qr aa"),
    ].join("\n");
    const got = parseProbeLog(log);
    expect(got.get("api.alpha.example.com")).toEqual({
      rcode: 0,
      authoritative: true,
      addresses: ["10.0.0.4", "10.0.0.9"],
    });
    expect(got.get("www.example.net")).toEqual({ rcode: 3, authoritative: false, addresses: [] });
    expect(got.get("oauth.alpha.example.com")).toEqual(
      new Error("no answer for oauth.alpha.example.com from the DNS server (dig exit 9)"),
    );
    // A log cut before the exit line (pod killed) answers nothing for that name.
    expect(got.has("cut.example.com")).toBe(false);
  });

  it("parses what probeScript frames, names quoted for the shell", () => {
    const script = probeScript("10.0.0.3", ["a.example.com", "*.apps.example.com"]);
    expect(script).toContain("dig @10.0.0.3 +time=2 +tries=1 +noall +comments +answer 'a.example.com' A");
    expect(script).toContain("echo 'oooi-probe *.apps.example.com'");
  });
});

describe("probePod", () => {
  const base = {
    name: "tenant-verify-abcde",
    namespace: "clusters",
    infraName: "tenant",
    infraUid: "uid-1",
    attachment: { kind: "NetworkAttachmentDefinition" as const, name: "vlan100", namespace: "clusters" },
    address: "10.0.0.254",
    prefixLength: 24,
    gateway: "10.0.0.1",
    server: "10.0.0.3",
    names: ["api.example.com"],
    image: "img:1",
  };

  it("selects an OVN-Kubernetes NAD itself with the address in `ips` (no copy)", () => {
    const made = probePod({
      ...base,
      nadConfig: JSON.stringify({ cniVersion: "0.4.0", name: "vlan100", type: "ovn-k8s-cni-overlay" }),
    });
    expect(made.nad).toBeUndefined();
    const annotations = (made.pod.metadata as { annotations: Record<string, string> }).annotations;
    expect(JSON.parse(annotations["k8s.v1.cni.cncf.io/networks"] ?? "")).toEqual([
      { name: "vlan100", namespace: "clusters", interface: "net1", ips: ["10.0.0.254/24"] },
    ]);
  });

  it("refuses a name the shell could misread, and a server that is not IPv4", () => {
    expect(() => probePod({ ...base, nadConfig: undefined, names: ["a'; rm -rf /"] })).toThrow(
      /name "a'; rm -rf \/" cannot be asked by the probe/,
    );
    expect(() => probePod({ ...base, nadConfig: undefined, server: "dns.example" })).toThrow(/not IPv4/);
  });
});

describe("judgeChild", () => {
  const child = (status: Record<string, unknown>): Record<string, unknown> => ({ metadata: { name: "p" }, status });

  it("fails a NACK with its text, an unACKed child, a missing child and a not-Ready child", () => {
    expect(judgeChild("ns/p", child({ ackedVersion: "v1", lastNack: "bad listener" }), "ProxyServer")).toMatchObject({
      verdict: "FAIL",
      detail: "NACKed: bad listener",
      failure: "node-nack",
    });
    expect(judgeChild("ns/p", child({}), "ProxyServer")).toMatchObject({ verdict: "FAIL", failure: "node-stale" });
    expect(judgeChild("ns/p", undefined, "DHCPServer")).toMatchObject({
      verdict: "FAIL",
      detail: "the model expects DHCPServer ns/p; it does not exist",
    });
    expect(
      judgeChild(
        "ns/p",
        child({ ackedVersion: "v1", conditions: [{ type: "Ready", status: "False", message: "old" }] }),
        "ProxyServer",
      ),
    ).toMatchObject({ verdict: "FAIL", failure: "node-behind" });
    expect(
      judgeChild("ns/p", child({ ackedVersion: "v2", conditions: [{ type: "Ready", status: "True" }] }), "ProxyServer"),
    ).toMatchObject({ verdict: "PASS", detail: "ACKed v2" });
  });
});
