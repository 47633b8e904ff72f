// Problems: one collector, each problem bound to its object once (src/model/problems.ts).
import { describe, expect, test } from "vitest";
import { compareProblems, Problems } from "../../src/model/problems.js";
import type { ObjectRef } from "../../src/model/types.js";
import { proxyServerRef, renderEnvoy } from "../../src/envoy/render/index.js";

const infra: ObjectRef = { kind: "Infra", namespace: "ns", name: "a" };
const attachment: ObjectRef = { kind: "InfraClusterAttachment", namespace: "ns", name: "b" };

describe("Problems.for binds a problem to its object", () => {
  test("warnings and pending problems leave hasErrors false; one error sets it for that binding only", () => {
    const problems = new Problems();
    const p = problems.for(infra);
    const other = problems.for(attachment);
    p.warning("spec.x", "LegacyField", "ignored");
    p.pending("spec.y", "InternalProxyServicePending", "waits");
    expect(p.hasErrors).toBe(false);
    other.error("spec.infraRef.name", "InfraNotFound", "missing");
    expect([p.hasErrors, other.hasErrors]).toEqual([false, true]);
    p.error("spec.networkConfig.cidr", "InvalidSpec", "bad");
    expect(p.hasErrors).toBe(true);
  });

  test("an error recorded before a second binding of the same object does not count for it", () => {
    // resolveInfra binds its Infra once; a later binding (a conflict warning) starts clean.
    const problems = new Problems();
    problems.for(infra).error("spec.networkConfig.cidr", "InvalidSpec", "bad");
    expect(problems.for(infra).hasErrors).toBe(false);
  });

  test("recorded() keeps the order found; sorted() orders by object, field, reason, message", () => {
    const problems = new Problems();
    problems.for(infra).error("spec.b", "InvalidSpec", "second field");
    problems.for(attachment).warning("", "DuplicateSourceIP", "conflict");
    problems.for(infra).error("spec.a", "InvalidSpec", "first field");
    expect(problems.recorded().map((p) => p.message)).toEqual(["second field", "conflict", "first field"]);
    expect(problems.sorted().map((p) => p.message)).toEqual(["first field", "second field", "conflict"]);
    expect(problems.sorted().map((p) => [p.object.kind, p.field, p.severity])).toEqual([
      ["Infra", "spec.a", "error"],
      ["Infra", "spec.b", "error"],
      ["InfraClusterAttachment", "", "warning"],
    ]);
    const [x, y] = problems.sorted();
    if (x === undefined || y === undefined) throw new Error("two problems expected");
    expect([compareProblems(x, y), compareProblems(y, x), compareProblems(x, x)]).toEqual([-1, 1, 0]);
  });
});

describe("renderer problems carry their object", () => {
  test("renderEnvoy's errors belong to the ProxyServer its node names; an upstream no backend uses falls back to spec.backends", () => {
    const r = renderEnvoy({
      node: "ns/a-proxy",
      serverIP: "192.0.2.1",
      backends: [],
      upstreams: [
        {
          kind: "address",
          name: "u",
          endpoints: [],
          connectTimeoutSeconds: 0,
          target: { service: "s", namespace: "ns", port: 1 },
        },
      ],
    });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors).toEqual([
      {
        object: { kind: "ProxyServer", namespace: "ns", name: "a-proxy" },
        field: "spec.backends",
        reason: "InconsistentConfig",
        message: 'upstream "u": connect timeout 0s is not a positive duration',
        severity: "error",
      },
    ]);
  });

  test.each([
    { node: "ns/a-proxy", ref: { kind: "ProxyServer", namespace: "ns", name: "a-proxy" } },
    { node: "bare", ref: { kind: "ProxyServer", namespace: "", name: "bare" } },
    { node: "ns/with/slash", ref: { kind: "ProxyServer", namespace: "ns", name: "with/slash" } },
  ])("proxyServerRef($node)", ({ node, ref }) => {
    expect(proxyServerRef(node)).toEqual(ref);
  });
});
