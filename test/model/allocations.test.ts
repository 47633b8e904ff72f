// The allocation rules one by one (issue 10), through the real model build.
import { describe, expect, it } from "vitest";
import type { DHCPAllocation } from "../../src/api/schema.js";
import { build } from "../../src/model/build.js";
import type { BuildResult, ClusterState } from "../../src/model/types.js";
import { attachment, combine, hostedCluster, infra, NS, vmi } from "../support/fixtures.js";

const DHCP = `${NS}/vlan100-dhcp`;
const T0 = Date.parse("2026-01-01T00:00:00Z");
type Vmi = ReturnType<typeof vmi>;

function run(
  vmis: Vmi[],
  previous: readonly DHCPAllocation[] = [],
  opts: { now?: number; spec?: Parameters<typeof infra>[1]; attachments?: ReturnType<typeof attachment>[] } = {},
): BuildResult {
  const state: ClusterState = {
    ...combine({ infras: [infra("vlan100", opts.spec ?? {})], attachments: opts.attachments ?? [] }, { vmis }),
    dhcpAllocations: new Map([[DHCP, previous]]),
    now: opts.now ?? T0,
  };
  return build(state);
}

function table(r: BuildResult): readonly DHCPAllocation[] {
  return r.topologies[0]?.dhcp?.allocations ?? [];
}

function ipOf(r: BuildResult, name: string): string | undefined {
  return table(r).find((a) => a.vmi === `${NS}/${name}`)?.ip;
}

const a = (name: string, n: number, ip?: string) =>
  vmi(NS, name, `02:00:00:00:00:${n.toString(16).padStart(2, "0")}`, ip, {
    created: `2026-01-01T00:00:${String(n).padStart(2, "0")}Z`,
  });

describe("DHCP allocation", () => {
  it("a VMI waiting to report keeps its address while another VMI reports one (the issue's 192.0.2.84 → .38)", () => {
    const first = run([a("waiting", 1)]);
    const ip = ipOf(first, "waiting");
    expect(ip).toMatch(/^192\.0\.2\.1[0-9][0-9]$/);
    for (const reported of ["192.0.2.7", "192.0.2.150", "192.0.2.120"]) {
      const next = run([a("waiting", 1), a("reporter", 2, reported)], table(first));
      expect(ipOf(next, "waiting")).toBe(ip);
    }
  });

  it("a new VMI's address depends only on what is allocated, not on other VMIs' reports", () => {
    const base = run([a("old", 1, "192.0.2.7")]);
    const quiet = run([a("old", 1, "192.0.2.7"), a("new", 3)], table(base));
    const noisy = run([a("old", 1, "192.0.2.7"), a("other", 2, "192.0.2.60"), a("new", 3)], table(base));
    expect(ipOf(noisy, "new")).toBe(ipOf(quiet, "new"));
  });

  it("a reported address allocated to another MAC is a problem on the reporter; the owner keeps it", () => {
    const first = run([a("owner", 1)]);
    const owned = ipOf(first, "owner") ?? "";
    const next = run([a("owner", 1), a("thief", 2, owned)], table(first));
    expect(ipOf(next, "owner")).toBe(owned);
    expect(ipOf(next, "thief")).not.toBe(owned);
    expect(
      next.problems
        .filter((p) => p.reason === "ReportedAddressConflict")
        .map((p) => `${p.object.kind}/${p.object.name}`),
    ).toEqual(["VirtualMachineInstance/thief"]);
  });

  it("adopts a free reported address, even outside the pool (a lease from before oooi)", () => {
    expect(ipOf(run([a("w", 1, "192.0.2.20")]), "w")).toBe("192.0.2.20");
  });

  it("never allocates the gateway, a component or an accepted MetalLB range, even when reported", () => {
    const metallb = attachment("alpha", {
      spec: {
        appsIngress: {
          enabled: true,
          metallb: { addressPoolName: "p", ipAddressPoolRange: "192.0.2.200 - 192.0.2.209" },
        },
      },
    });
    const r = run(
      [a("gw", 1, "192.0.2.1"), a("dns", 2, "192.0.2.3"), a("lb", 3, "192.0.2.205"), a("w", 4, "192.0.2.210")],
      [],
      {
        attachments: [metallb],
      },
    );
    const got = new Map(table(r).map((x) => [x.vmi.slice(NS.length + 1), x.ip]));
    expect(got.get("w")).toBe("192.0.2.210");
    for (const name of ["gw", "dns", "lb"]) expect(got.get(name)).toMatch(/^192\.0\.2\.1[0-9][0-9]$/);
    expect(r.problems.filter((p) => p.reason === "InvalidAddressRange")).toEqual([]);
  });

  it.each([
    [
      "over the whole VLAN",
      "192.0.2.0/24",
      "range 192.0.2.0-192.0.2.255 overlaps the DHCP pool 192.0.2.100-192.0.2.199",
    ],
    ["beyond the VLAN", "0.0.0.0/0", "range 0.0.0.0-255.255.255.255 is not inside the Infra's network 192.0.2.0/24"],
    [
      "over the pool",
      "192.0.2.100-192.0.2.199",
      "range 192.0.2.100-192.0.2.199 overlaps the DHCP pool 192.0.2.100-192.0.2.199",
    ],
    ["a typo that once read as /0", "192.0.2.200/", '"192.0.2.200/" is neither "first-last" nor a CIDR'],
  ])(
    "a MetalLB range apps ingress refuses (%s) holds nothing back: one attachment cannot starve the VLAN",
    (_, range, problem) => {
      for (const enabled of [true, false]) {
        const greedy = attachment("greedy", {
          spec: { appsIngress: { enabled, metallb: { addressPoolName: "p", ipAddressPoolRange: range } } },
        });
        const r = run([a("w1", 1), a("w2", 2, "192.0.2.150")], [], { attachments: [greedy] });
        expect(table(r).map((x) => x.vmi)).toEqual([`${NS}/w1`, `${NS}/w2`]);
        expect(ipOf(r, "w2")).toBe("192.0.2.150");
        const said = r.problems.filter((p) => p.reason === "InvalidAddressRange");
        expect(said.map((p) => [p.object.name, p.field, p.severity, p.message])).toEqual([
          [
            "greedy",
            "spec.appsIngress.metallb.ipAddressPoolRange",
            "warning",
            `${problem}; DHCP does not keep it free of VMIs`,
          ],
        ]);
      }
    },
  );

  it("a full pool is AddressesExhausted on the Infra, naming the VMI; nobody is moved", () => {
    const spec = { infraComponents: { dhcp: { rangeStart: "192.0.2.100", rangeEnd: "192.0.2.101" } } };
    const r = run([a("w1", 1), a("w2", 2), a("w3", 3)], [], { spec });
    expect(table(r).map((x) => x.vmi)).toHaveLength(2);
    const p = r.problems.find((x) => x.reason === "AddressesExhausted");
    expect(p?.object).toMatchObject({ kind: "Infra", name: "vlan100" });
    expect(p?.message).toContain(`${NS}/w3`);
    expect(p?.severity).toBe("pending");
  });

  it("a gone VMI's address is kept for its MAC for the lease time, then released", () => {
    const first = run([a("vm", 1)]);
    const ip = ipOf(first, "vm");
    const gone = run([], table(first), { now: T0 + 1000 });
    expect(table(gone)).toEqual([
      { mac: "02:00:00:00:00:01", ip, vmi: `${NS}/vm`, releasedAt: new Date(T0 + 1000).toISOString() },
    ]);
    // Its reservation stays in Kea meanwhile, so the restarted VM is served its address at once.
    expect(gone.topologies[0]?.dhcp?.reservations.map((x) => x.ipAddress)).toEqual([ip]);
    const back = run([a("vm", 1)], table(gone), { now: T0 + 3599_000 });
    expect(ipOf(back, "vm")).toBe(ip);
    expect(table(back)[0]?.releasedAt).toBeUndefined();
    const expired = run([], table(gone), { now: T0 + 1000 + 3600_000 });
    expect(table(expired)).toEqual([]);
  });

  it("a persisted entry on an address that is no longer allowed is dropped with a warning", () => {
    const r = run([a("vm", 1)], [{ mac: "02:00:00:00:00:01", ip: "192.0.2.3", vmi: `${NS}/vm` }]);
    expect(ipOf(r, "vm")).not.toBe("192.0.2.3");
    expect(r.problems.map((p) => p.reason)).toContain("AllocationDropped");
  });

  it("garbage in the persisted table is ignored, never thrown on", () => {
    const junk = [
      { mac: "nope", ip: "1.2.3", vmi: "" },
      { mac: 7, ip: null },
    ] as unknown as DHCPAllocation[];
    expect(() => run([a("vm", 1)], junk)).not.toThrow();
  });

  it("worker source addresses come from the allocations: a worker reporting another's address moves no route", () => {
    // alpha's worker has not reported yet; beta's worker (Machine and VMI) reports alpha's address.
    const cpA = `${NS}-alpha`;
    const cpB = `${NS}-beta`;
    const withWorkers = (previous: readonly DHCPAllocation[], reportB: string | undefined) =>
      build({
        ...combine(
          { infras: [infra()], attachments: [attachment("alpha"), attachment("beta")] },
          hostedCluster("alpha", 1, ["192.0.2.250"]),
          hostedCluster("beta", 2, reportB === undefined ? [] : [reportB]),
          {
            vmis: [
              vmi(cpA, "alpha-worker-0", "02:00:00:00:0a:01"),
              vmi(cpB, "beta-worker-0", "02:00:00:00:0b:01", reportB),
            ],
          },
        ),
        dhcpAllocations: new Map([[DHCP, previous]]),
        now: T0,
      });
    const first = withWorkers([], undefined);
    const alphaIp = table(first).find((x) => x.vmi === `${cpA}/alpha-worker-0`)?.ip ?? "";
    const workers = (r: BuildResult, name: string) =>
      r.topologies[0]?.attachments.find((x) => x.ref.name === name)?.workerAddresses;
    // The Machine's report (.250) is not the source: the allocation is.
    expect(workers(first, "alpha")).toEqual([alphaIp]);
    const next = withWorkers(table(first), alphaIp);
    expect(workers(next, "alpha")).toEqual([alphaIp]);
    const betaIp = table(next).find((x) => x.vmi === `${cpB}/beta-worker-0`)?.ip;
    expect(workers(next, "beta")).toEqual([betaIp]);
    expect(betaIp).not.toBe(alphaIp);
    expect(next.problems.map((p) => p.reason)).not.toContain("DuplicateSourceIP");
  });
});

describe("DHCP options", () => {
  const withOptions = (options: { code: number; value: string }[]) =>
    run([], [], { spec: { infraComponents: { dhcp: { options } } } });

  it("MTU, NTP, domain search and classless static routes become Kea option-data; the DHCPServer lists them", () => {
    const r = withOptions([
      { code: 121, value: "10.128.0.0/14 - 192.0.2.1, 0.0.0.0/0 - 192.0.2.1" },
      { code: 26, value: "1450" },
      { code: 42, value: "192.0.2.5, 192.0.2.6" },
      { code: 119, value: "example.com,corp.example.com" },
    ]);
    expect(r.problems).toEqual([]);
    expect(r.topologies[0]?.dhcp?.options.map((o) => [o.code, o.name, o.data, o.csvFormat])).toEqual([
      [26, "interface-mtu", "1450", true],
      [42, "ntp-servers", "192.0.2.5, 192.0.2.6", true],
      [119, "domain-search", "example.com, corp.example.com", true],
      // RFC 3442: width 14, 10.128 (2 octets), router; width 0, no octets, router.
      [121, "classless-static-route", "0E0A80C000020100C0000201", false],
    ]);
    expect(r.topologies[0]?.children.dhcp?.spec.options?.map((o) => o.code)).toEqual([26, 42, 119, 121]);
  });

  it("a wrong value or an option oooi sets itself is an error on its field path; the rest is served", () => {
    const r = withOptions([
      { code: 26, value: "huge" },
      { code: 3, value: "192.0.2.9" },
      { code: 121, value: "10.0.0.0 via x" },
      { code: 42, value: "192.0.2.5" },
    ]);
    expect(r.problems.map((p) => `${p.field} ${p.reason}`)).toEqual([
      "spec.infraComponents.dhcp.options[0].value InvalidSpec",
      "spec.infraComponents.dhcp.options[1].code InvalidSpec",
      "spec.infraComponents.dhcp.options[2].value InvalidSpec",
    ]);
    expect(r.topologies[0]?.dhcp?.options.map((o) => o.code)).toEqual([42]);
  });
});
