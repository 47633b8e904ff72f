import { describe, expect, it } from "vitest";
import { renderCoreDns } from "../../src/dns/render/index.js";
import type { DnsModel } from "../../src/model/types.js";
import { directives, parseCorefile, viewExpr } from "./corefile-parser.js";
import { INTERNAL_IP, KUBERNETES_ALIASES, model } from "./fixtures.js";
import { violations } from "./invariants.js";

const D = "example-hcp.clusters.example.com";
const THREE = ["alpha.clusters.example.com", "beta.clusters.example.com", "gamma.apps.example.org"];

/** Zone-file text without its digest line (the digest is checked separately). */
function withoutDigest(text: string | undefined): string {
  expect(text).toMatch(/^; oooi-digest: [0-9a-f]{64}\n/);
  return (text ?? "").replace(/^; oooi-digest: [0-9a-f]{64}\n/, "");
}

describe("renderCoreDns: single cluster", () => {
  const files = renderCoreDns(model({ domains: [D], apps: true, internal: INTERNAL_IP })).files;

  it("renders the split-horizon Corefile", () => {
    expect(files.Corefile).toBe(`.:53 {
    errors
    log
    prometheus {$POD_IP}:9153
    health {$POD_IP}:8080
    ready {$POD_IP}:8181
    reload 5s
    cache 30
    forward . 198.51.100.53 198.51.100.54
}

${D}:53 {
    view vlan {
        expr incidr(client_ip(), '192.0.2.0/24')
    }
    errors
    log
    prometheus {$POD_IP}:9153
    file /etc/coredns/db.vlan.${D} ${D} {
        reload 5s
    }
}

${D}:53 {
    errors
    log
    prometheus {$POD_IP}:9153
    file /etc/coredns/db.default.${D} ${D} {
        reload 5s
    }
}
`);
  });

  it("renders the VLAN zone with NS glue at the DNS serverIP and a real wildcard", () => {
    expect(withoutDigest(files[`db.vlan.${D}`])).toBe(`$ORIGIN ${D}.
$TTL 30
@ IN SOA ns.${D}. hostmaster.${D}. 1 7200 3600 1209600 30
@ IN NS ns.${D}.
ns IN A 192.0.2.3
*.apps IN A 192.0.2.200
api IN A 192.0.2.4
api-int IN A 192.0.2.4
ignition IN A 192.0.2.4
konnectivity IN A 192.0.2.4
oauth IN A 192.0.2.4
`);
  });

  it("renders the default zone with the ClusterIP and loopback NS glue", () => {
    expect(withoutDigest(files[`db.default.${D}`])).toBe(`$ORIGIN ${D}.
$TTL 30
@ IN SOA ns.${D}. hostmaster.${D}. 1 7200 3600 1209600 30
@ IN NS ns.${D}.
ns IN A 127.0.0.1
*.apps IN A ${INTERNAL_IP}
api IN A ${INTERNAL_IP}
api-int IN A ${INTERNAL_IP}
ignition IN A ${INTERNAL_IP}
konnectivity IN A ${INTERNAL_IP}
oauth IN A ${INTERNAL_IP}
`);
  });

  it("holds every structural rule and lists keys in sorted order", () => {
    expect(violations(files)).toEqual([]);
    expect(Object.keys(files)).toEqual(["Corefile", `db.default.${D}`, `db.vlan.${D}`]);
  });
});

describe("renderCoreDns: three clusters with kubernetes aliases", () => {
  const files = renderCoreDns(model({ domains: THREE, apps: true, aliases: true, internal: INTERNAL_IP })).files;
  const blocks = parseCorefile(files.Corefile ?? "");

  it("gives every zone a VLAN block followed by a default block", () => {
    const zones = [...THREE, ...KUBERNETES_ALIASES].sort();
    expect(blocks.map((b) => [b.keys.join(" "), viewExpr(b) !== undefined])).toEqual([
      [".:53", false],
      ...zones.flatMap((z) => [
        [`${z}:53`, true],
        [`${z}:53`, false],
      ]),
    ]);
    expect(violations(files)).toEqual([]);
  });

  it("serves each alias zone from an apex A record", () => {
    for (const alias of KUBERNETES_ALIASES) {
      expect(files[`db.vlan.${alias}`]).toContain("\n@ IN A 192.0.2.4\n");
      expect(files[`db.default.${alias}`]).toContain(`\n@ IN A ${INTERNAL_IP}\n`);
    }
  });

  it("is byte-identical for identical input, whatever the input's zone order", () => {
    const m = model({ domains: THREE, apps: true, aliases: true, internal: INTERNAL_IP });
    const shuffled: DnsModel = {
      ...m,
      views: [
        { ...m.views[0], zones: [...m.views[0].zones].reverse() },
        { ...m.views[1], zones: [...m.views[1].zones].reverse() },
      ],
    };
    expect(renderCoreDns(m).files).toEqual(files);
    expect(JSON.stringify(renderCoreDns(shuffled).files)).toBe(JSON.stringify(files));
  });
});

describe("renderCoreDns: default view empty", () => {
  const files = renderCoreDns(model({ domains: THREE, apps: true, aliases: true })).files;
  const blocks = parseCorefile(files.Corefile ?? "");

  it("writes no default-view zone files", () => {
    expect(Object.keys(files).filter((k) => k.startsWith("db.default."))).toEqual([]);
    expect(Object.keys(files).filter((k) => k.startsWith("db.vlan."))).toHaveLength(7);
  });

  it("answers pod-network clients for VLAN zones only by forwarding", () => {
    for (const b of blocks.filter((x) => x.keys[0] !== ".:53")) {
      if (viewExpr(b) === undefined) {
        expect(directives(b, "file")).toEqual([]);
        expect(directives(b, "forward").map((d) => d.args)).toEqual([[".", "198.51.100.53", "198.51.100.54"]]);
      } else {
        expect(directives(b, "file")).toHaveLength(1);
      }
    }
    expect(violations(files)).toEqual([]);
  });
});

describe("renderCoreDns: upstreams", () => {
  it("adds loop to every block that forwards to /etc/resolv.conf", () => {
    const files = renderCoreDns(model({ domains: [D], upstreams: "resolv.conf" })).files;
    const forwarding = parseCorefile(files.Corefile ?? "").filter((b) => directives(b, "forward").length > 0);
    expect(forwarding.map((b) => b.keys[0])).toEqual([".:53", `${D}:53`]);
    for (const b of forwarding) {
      expect(directives(b, "forward")[0]?.args).toEqual([".", "/etc/resolv.conf"]);
      expect(directives(b, "loop")).toHaveLength(1);
    }
    expect(violations(files)).toEqual([]);
  });

  it("omits loop with explicit IPs, dropping duplicates and non-addresses", () => {
    const files = renderCoreDns(
      model({ domains: [D], upstreams: ["198.51.100.53", " 198.51.100.53", "dns.example.com", "203.0.113.9"] }),
    ).files;
    expect(files.Corefile).toContain("    forward . 198.51.100.53 203.0.113.9\n");
    expect(files.Corefile).not.toContain("loop");
  });

  it("falls back to the node's resolvers when no upstream is usable", () => {
    const files = renderCoreDns(model({ domains: [D], upstreams: [] })).files;
    expect(files.Corefile).toContain("    loop\n    forward . /etc/resolv.conf\n");
  });
});

describe("renderCoreDns: names and paths", () => {
  it("lower-cases names, strips trailing dots and drops out-of-zone or malformed records", () => {
    const m = model({ domains: [D] });
    const vlan = m.views[0];
    const odd: DnsModel = {
      ...m,
      views: [
        {
          ...vlan,
          zones: [
            {
              origin: `${D.toUpperCase()}.`,
              records: [
                { name: `API.${D.toUpperCase()}.`, address: "192.0.2.4" },
                { name: `api.${D}`, address: "192.0.2.4" },
                { name: "api.elsewhere.example.net", address: "192.0.2.9" },
                { name: `a.*.apps.${D}`, address: "192.0.2.9" },
                { name: `bad name.${D}`, address: "192.0.2.9" },
                { name: `web.${D}`, address: "192.0.2.300" },
              ],
            },
          ],
        },
        m.views[1],
      ],
    };
    const files = renderCoreDns(odd).files;
    const zone = files[`db.vlan.${D}`] ?? "";
    expect(zone.split("\n").filter((l) => l.includes(" IN A ") && !l.startsWith("ns "))).toEqual([
      "api IN A 192.0.2.4",
    ]);
    expect(zone).not.toContain("192.0.2.9");
    expect(violations(files)).toEqual([]);
  });

  it("keeps ConfigMap keys legal for maximal names", () => {
    const long = `${"a".repeat(63)}.${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(61)}`;
    expect(long).toHaveLength(253);
    const files = renderCoreDns(model({ domains: [long], internal: INTERNAL_IP })).files;
    const keys = Object.keys(files).filter((k) => k !== "Corefile");
    expect(keys).toHaveLength(2);
    for (const k of keys) expect(k.length).toBeLessThanOrEqual(253);
    expect(violations(files)).toEqual([]);
  });

  it("refers to zone files under mountDir", () => {
    const files = renderCoreDns(model({ domains: [D] }), { mountDir: "/zones/" }).files;
    expect(files.Corefile).toContain(`    file /zones/db.vlan.${D} ${D} {\n`);
    expect(violations(files, "/zones")).toEqual([]);
  });

  it("drops a filtered view whose CIDR is unusable instead of serving it to everyone", () => {
    const m = model({ domains: [D] });
    const broken: DnsModel = { ...m, views: [{ ...m.views[0], sourceCidr: "192.0.2.1/24" }, m.views[1]] };
    const files = renderCoreDns(broken).files;
    expect(Object.keys(files)).toEqual(["Corefile"]);
    expect(files.Corefile).not.toContain("192.0.2.4");
  });

  it("isolates VLAN clients from a zone only the default view has", () => {
    const m = model({ domains: [D], internal: INTERNAL_IP });
    const onlyDefault: DnsModel = { ...m, views: [{ ...m.views[0], zones: [] }, m.views[1]] };
    const files = renderCoreDns(onlyDefault).files;
    const blocks = parseCorefile(files.Corefile ?? "").filter((b) => b.keys[0] === `${D}:53`);
    expect(blocks.map((b) => [viewExpr(b) !== undefined, directives(b, "forward").length])).toEqual([
      [true, 1],
      [false, 0],
    ]);
    expect(violations(files)).toEqual([]);
  });
});
