// Property: on random shared VLANs, the --filter-chain-matcher form of a proxy's listeners picks,
// for every connection, the chain the filter_chain_match form picks — by src/envoy/select.ts and
// by the Envoy stand-in's selector, which reads the matcher from Envoy's documentation
// (test/support/envoy/matcher.ts). The model never makes a listener the matcher form refuses.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { selectFilterChain, type ConnectionInfo } from "../../src/envoy/select.js";
import { renderEnvoy } from "../../src/envoy/render/index.js";
import { KUBERNETES_ALIASES } from "../../src/model/backends.js";
import { build } from "../../src/model/build.js";
import { scenario } from "../support/arbitrary.js";
import { selectChain } from "../support/envoy/select.js";

const HOSTS = ["api", "api-int", "oauth", "ignition", "konnectivity", "kubernetes", "x.apps"];

const portOf = (l: object): number =>
  (l as { address: { socket_address: { port_value: number } } }).address.socket_address.port_value;

describe("filter_chain_matcher form picks what filter_chain_match picks", () => {
  it("on random shared VLANs, for workers, strangers, every name, TLS or not", () => {
    const seen = { picked: 0, closed: 0, bySource: 0 };
    fc.assert(
      fc.property(scenario, (s) => {
        const t = build(s.state).topologies[0];
        if (t?.proxy === undefined) return;
        const classic = renderEnvoy(t.proxy);
        const matcher = renderEnvoy(t.proxy, { filterChainMatcher: true });
        if (!classic.ok) return;
        expect(matcher.ok, matcher.ok ? "" : matcher.errors.map((e) => e.message).join("\n")).toBe(true);
        if (!matcher.ok) return;
        const domains = t.attachments.filter((a) => a.served).map((a) => a.domain);
        const names = [
          undefined,
          ...KUBERNETES_ALIASES,
          ...domains.flatMap((d) => HOSTS.map((h) => `${h}.${d}`)),
          "unknown.example.org",
        ];
        const sources = [...new Set([...s.workers.values()].flat()), "198.51.100.7"];
        for (const l of classic.resources.listeners) {
          const m = matcher.resources.listeners.find((x) => portOf(x) === portOf(l));
          if (m === undefined) throw new Error(`no matcher form of port ${portOf(l)}`);
          for (const sourceIp of sources) {
            for (const serverName of names) {
              for (const transportProtocol of ["tls", "raw_buffer"] as const) {
                const conn: ConnectionInfo = {
                  destinationPort: portOf(l),
                  sourceIp,
                  transportProtocol,
                  ...(serverName === undefined ? {} : { serverName }),
                };
                const expected = selectFilterChain(l, conn);
                const what = `${sourceIp} ${serverName ?? "(no SNI)"} ${transportProtocol}:${portOf(l)}`;
                expect(selectFilterChain(m, conn), what).toEqual(expected);
                expect(selectChain(m, conn), what).toEqual(expected);
                if (expected === undefined) seen.closed += 1;
                else seen.picked += 1;
                if (expected?.name.includes("kubernetes-") === true) seen.bySource += 1;
              }
            }
          }
        }
      }),
      { seed: 30, numRuns: 60 },
    );
    expect(seen.picked).toBeGreaterThan(1000);
    expect(seen.closed).toBeGreaterThan(1000);
    expect(seen.bySource).toBeGreaterThan(100);
  });
});
