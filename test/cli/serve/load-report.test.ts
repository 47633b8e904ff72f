// serve's log of a refused child rendering (a ProxyServer whose resources failed their check): said
// once when it appears, once when it is resolved — by a rendering that no longer has it, or by its
// Infra going — whether a rendering continues from the one logged before (read by its delta) or not.
import pino from "pino";
import { describe, expect, it } from "vitest";
import { LoadReport } from "../../../src/cli/serve/load-report.js";
import type { Outputs, RenderedInfra, StatusEntry } from "../../../src/pipeline/outputs.js";
import type { Problem, Topology } from "../../../src/model/types.js";
import { parseManifests, type ManifestLoad } from "../../../src/watchers/manifests.js";
import { ManifestSources } from "../../../src/watchers/manifest-sources.js";
import { combine, infra, NS } from "../../support/fixtures.js";

function logged(): { report: LoadReport; lines: { level: number; msg: string }[] } {
  const lines: { level: number; msg: string }[] = [];
  const log = pino(
    { level: "debug" },
    { write: (s: string) => lines.push(JSON.parse(s) as { level: number; msg: string }) },
  );
  return { report: new LoadReport(log, "/manifests", "/manifests"), lines };
}

const load: Extract<ManifestLoad, { ok: true }> = {
  ok: true,
  state: combine({ infras: [infra("a"), infra("b")] }),
  files: ["infra.yaml"],
  ignored: [],
  sources: new ManifestSources(),
  problems: [],
};

function rendering(name: string, refused: boolean): RenderedInfra {
  const child: StatusEntry = {
    apiVersion: "v1",
    kind: "ProxyServer",
    namespace: NS,
    name: `${name}-proxy`,
    status: { conditions: [] },
    problems: refused
      ? [{ field: "", reason: "InconsistentConfig", message: `${name}: listener refused`, severity: "error" }]
      : [],
  };
  return {
    topology: { infra: { namespace: NS, name } } as unknown as Topology,
    envoy: undefined,
    coreDns: undefined,
    kea: undefined,
    files: [],
    childStatus: [child],
  };
}

/** Outputs holding these renderings; with `from`, continued from it (the delta renderAll would give). */
function outputs(infras: RenderedInfra[], from?: Outputs): Outputs {
  const byInfra = new Map(infras.map((r) => [`${NS}/${r.topology.infra.name}`, r]));
  const was = new Set(from?.infras);
  const now = new Set(infras);
  const delta =
    from === undefined
      ? undefined
      : {
          from: from.byInfra,
          rendered: infras.filter((r) => !was.has(r)),
          dropped: from.infras.filter((r) => !now.has(r)),
        };
  return { model: { problems: [], topologies: [] }, infras, byInfra, delta } as unknown as Outputs;
}

const said = (lines: { msg: string }[], text: string) =>
  lines.filter((l) => l.msg.includes(text)).map((l) => l.msg.split(":")[0]);

describe("LoadReport: a refused child rendering", () => {
  it.each([
    ["continued (read by delta)", true],
    ["not continued (every rendering read)", false],
  ])("is said once, and resolved once when re-rendered without it or when its Infra goes — %s", (_, continued) => {
    const { report, lines } = logged();
    const [a, b] = [rendering("a", true), rendering("b", false)];
    const first = outputs([a, b]);
    report.rendered(load, first);
    const next = (infras: RenderedInfra[], last: Outputs) => outputs(infras, continued ? last : undefined);
    const second = next([a, b], first);
    report.rendered(load, second);
    expect(lines.filter((l) => l.msg.includes("a: listener refused") && l.level === 40)).toHaveLength(1);

    // b refused too; a re-rendered without its problem.
    const [a2, b2] = [rendering("a", false), rendering("b", true)];
    const third = next([a2, b2], second);
    report.rendered(load, third);
    expect(lines.filter((l) => l.msg.startsWith("resolved:") && l.msg.includes("a: listener refused"))).toHaveLength(1);
    expect(lines.filter((l) => l.msg.includes("b: listener refused") && l.level === 40)).toHaveLength(1);

    // b's Infra goes: its problem is resolved with it.
    const fourth = next([a2], third);
    report.rendered(load, fourth);
    expect(lines.filter((l) => l.msg.startsWith("resolved:") && l.msg.includes("b: listener refused"))).toHaveLength(1);
    expect(said(lines, "listener refused")).toHaveLength(4);
  });

  it("reads every rendering again when one it did not see came in between", () => {
    const { report, lines } = logged();
    const [a, b] = [rendering("a", true), rendering("b", false)];
    const first = outputs([a, b]);
    report.rendered(load, first);
    const unseen = outputs([rendering("a", false), b], first);
    const third = outputs([unseen.infras[0] as RenderedInfra, rendering("b", true)], unseen);
    report.rendered(load, third);
    expect(lines.filter((l) => l.msg.startsWith("resolved:") && l.msg.includes("a: listener refused"))).toHaveLength(1);
    expect(lines.filter((l) => l.msg.includes("b: listener refused") && l.level === 40)).toHaveLength(1);
  });
});

describe("LoadReport: the model's problems", () => {
  /** Sources that count how often a field is located. */
  class Counting extends ManifestSources {
    calls = 0;
    override locate(): ReturnType<ManifestSources["locate"]> {
      this.calls += 1;
      return { file: "infra.yaml", line: 3, column: 1 };
    }
  }
  const problem = (name: string): Problem => ({
    object: { kind: "Infra", namespace: NS, name },
    field: "spec.networkConfig.cidr",
    reason: "InvalidSpec",
    message: `${name}: not a network`,
    severity: "error",
  });
  const withProblems = (problems: Problem[]): Outputs =>
    ({ model: { problems, topologies: [] }, infras: [], byInfra: new Map(), delta: undefined }) as unknown as Outputs;

  it("are located and logged once each; a load locates only the problems its change rebuilt", () => {
    const { report, lines } = logged();
    const sources = new Counting();
    const kept = Array.from({ length: 100 }, (_, i) => problem(`i${String(i).padStart(3, "0")}`));
    report.rendered({ ...load, sources }, withProblems(kept));
    expect(sources.calls).toBe(100);
    expect(lines.filter((l) => l.level === 40 && l.msg.includes("infra.yaml:3:1: Infra clusters/i"))).toHaveLength(100);

    // The same problem objects (a change elsewhere): nothing located or logged again.
    report.rendered({ ...load, sources }, withProblems([...kept]));
    expect(sources.calls).toBe(100);
    // One Infra rebuilt: its problem is a new object, equal to the old one.
    const rebuilt = [...kept.slice(0, 99), problem("i099")];
    report.rendered({ ...load, sources }, withProblems(rebuilt));
    expect(sources.calls).toBe(101);
    expect(lines.filter((l) => l.level === 40)).toHaveLength(100);

    // New sources (an Infra's file read again): every problem is located in them.
    const moved = new Counting();
    report.rendered({ ...load, sources: moved }, withProblems(rebuilt));
    expect(moved.calls).toBe(100);
    // One goes: said resolved once.
    report.rendered({ ...load, sources: moved }, withProblems(rebuilt.slice(1)));
    expect(lines.filter((l) => l.msg.startsWith("resolved:") && l.msg.includes("i000"))).toHaveLength(1);
  });

  it("puts each problem at its field's line in the file it was read from", () => {
    const { report, lines } = logged();
    const text = [
      "apiVersion: hostedcluster.densityops.com/v1alpha1",
      "kind: Infra",
      "metadata: {name: i000, namespace: clusters}",
      "spec:",
      "  networkConfig:",
      "    gateway: 192.0.2.1",
      "    cidr: nope",
      "",
    ].join("\n");
    const read = parseManifests([{ path: "infra.yaml", text }]);
    if (!read.ok) throw new Error(read.error.message);
    report.rendered(read, withProblems([problem("i000")]));
    expect(lines.filter((l) => l.level === 40).map((l) => l.msg)).toEqual([
      "/manifests/infra.yaml:7:5: Infra clusters/i000: spec.networkConfig.cidr: i000: not a network (InvalidSpec)",
    ]);
  });
});
