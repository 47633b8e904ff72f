// Property (a): on random shared VLANs, a worker of attachment A never selects a filter chain that
// leads into B's control plane unless it names one of B's own hosts; the kubernetes aliases and
// the no-SNI apiserver path always lead a known worker to its own control plane, and nobody else
// anywhere. Selection follows Envoy's order without backtracking (src/envoy/select.ts).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { build } from "../../src/model/build.js";
import { selectFilterChain, type ConnectionInfo } from "../../src/envoy/select.js";
import { renderEnvoy } from "../../src/envoy/render/index.js";
import { KUBERNETES_ALIASES } from "../../src/model/backends.js";
import { scenario } from "../support/arbitrary.js";

const OWN_HOSTS = ["api", "api-int", "oauth", "ignition", "konnectivity", "kubernetes"];

describe("source isolation on a shared VLAN", () => {
  it("no worker reaches another cluster's control plane through an ambiguous name", () => {
    fc.assert(
      fc.property(scenario, fc.nat(), (s, seed) => {
        const result = build(s.state);
        const t = result.topologies[0];
        if (t?.proxy === undefined) return;
        const rendered = renderEnvoy(t.proxy);
        expect(rendered.ok, rendered.ok ? "" : rendered.errors.map((e) => e.message).join("\n")).toBe(true);
        if (!rendered.ok) return;
        const listener = (port: number) =>
          rendered.resources.listeners.find(
            (l) =>
              (l as { address: { socket_address: { port_value: number } } }).address.socket_address.port_value === port,
          );
        const served = t.attachments.filter((a) => a.served);
        const cpOf = (cluster: string | undefined) =>
          served.find((a) => cluster?.startsWith(`${a.controlPlaneNamespace}/`));
        const domains = served.map((a) => a.domain);
        const sni = [
          undefined,
          ...KUBERNETES_ALIASES,
          ...domains.flatMap((d) => OWN_HOSTS.map((h) => `${h}.${d}`)),
          `x.apps.${domains[0] ?? "none"}`,
          "unknown.example.org",
        ];

        // Every address the scenario handed out, whether it survived de-duplication or not.
        const sources = [...new Set([...s.workers.values()].flat())];
        for (const src of sources) {
          const owner = served.find((a) => a.workerAddresses.includes(src));
          for (const port of [443, 6443]) {
            const l = listener(port);
            if (l === undefined) continue;
            for (const name of sni) {
              const conn: ConnectionInfo = {
                destinationPort: port,
                sourceIp: src,
                transportProtocol: "tls",
                sourcePort: 40000 + (seed % 20000),
                ...(name === undefined ? {} : { serverName: name }),
              };
              const chosen = selectFilterChain(l, conn);
              const target = cpOf(chosen?.cluster);
              if (target === undefined) continue;
              const namesTarget = name !== undefined && name.endsWith(`.${target.domain}`);
              if (!namesTarget) {
                // Ambiguous name (alias, no SNI, foreign): only the worker's own cluster.
                expect(target.ref.name, `${src} ${name ?? "(no SNI)"}:${port} → ${chosen?.cluster ?? ""}`).toBe(
                  owner?.ref.name,
                );
              }
            }
            // Liveness: a known worker's aliases and no-SNI path reach its own control plane.
            if (owner !== undefined) {
              const own = port === 443 ? "kubernetes.default.svc" : undefined;
              const chosen = selectFilterChain(l, {
                destinationPort: port,
                sourceIp: src,
                transportProtocol: "tls",
                ...(own === undefined ? {} : { serverName: own }),
              });
              expect(cpOf(chosen?.cluster)?.ref.name).toBe(owner.ref.name);
            }
          }
        }
      }),
      { seed: 11, numRuns: 300 },
    );
  });
});
