// Golden files: every example directory rendered, compared byte for byte with test/golden/<example>/.
// UPDATE_GOLDEN=1 rewrites the expected files (review the diff before committing).
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { renderAll } from "../../src/pipeline/outputs.js";
import { loadManifestDir } from "../../src/watchers/manifests.js";

const ROOT = join(import.meta.dirname, "..", "..");
const EXAMPLES = join(ROOT, "examples");
const GOLDEN = import.meta.dirname;
const update = process.env["UPDATE_GOLDEN"] === "1";

function listFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(relative(dir, p));
    }
  };
  walk(dir);
  return out.sort();
}

const examples = readdirSync(EXAMPLES, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort();

describe("golden outputs of the examples", () => {
  it("covers every example", () => {
    expect(examples).toEqual(
      expect.arrayContaining([
        "apps-ingress",
        "invalid-infra",
        "minimal",
        "no-internal-proxy",
        "shared-vlan",
        "standalone",
      ]),
    );
  });

  it.each(examples)("%s", async (name) => {
    const load = await loadManifestDir(join(EXAMPLES, name));
    if (!load.ok) throw new Error(`example ${name} unreadable: ${JSON.stringify(load.error)}`);
    const out = renderAll(load.state);
    const dir = join(GOLDEN, name);
    if (update) {
      rmSync(dir, { recursive: true, force: true });
      for (const [rel, text] of out.files) {
        mkdirSync(dirname(join(dir, rel)), { recursive: true });
        writeFileSync(join(dir, rel), text);
      }
    }
    const expected = listFiles(dir);
    expect(
      [...out.files.keys()].sort(),
      `files of ${name} differ; run UPDATE_GOLDEN=1 npx vitest run test/golden`,
    ).toEqual(expected);
    for (const rel of expected) {
      expect(
        out.files.get(rel),
        `${name}/${rel} differs; run UPDATE_GOLDEN=1 npx vitest run test/golden and review the diff`,
      ).toBe(readFileSync(join(dir, rel), "utf8"));
    }
  });
});

describe("re-rendering with the previous outputs", () => {
  it("keeps unchanged parts (same objects, same files) and re-renders only what changed", async () => {
    const load = await loadManifestDir(join(EXAMPLES, "shared-vlan"));
    if (!load.ok) throw new Error("example unreadable");
    const first = renderAll(load.state);
    const again = renderAll(load.state, { previous: first.files, reuse: first });
    expect(again.infras[0]?.envoy).toBe(first.infras[0]?.envoy);
    expect(again.infras[0]?.kea).toBe(first.infras[0]?.kea);
    expect(again.infras[0]?.coreDns).toBe(first.infras[0]?.coreDns);
    expect([...again.files]).toEqual([...first.files]);

    // A worker going away (its Machine and its VMI) drops a worker address. (A Machine alone going
    // changes nothing: its VMI in the control-plane namespace still counts as a worker, as the newest
    // original reads every VMI there; and where oooi runs DHCP a report no longer moves a worker.)
    const [gone] = load.state.machines;
    const sameObject = (o: { metadata: { namespace: string; name: string } }) =>
      o.metadata.namespace === gone?.metadata.namespace && o.metadata.name === gone.metadata.name;
    const moved = {
      ...load.state,
      machines: [...load.state.machines].filter((m) => !sameObject(m)),
      vmis: [...load.state.vmis].filter((v) => !sameObject(v)),
    };
    const changed = renderAll(moved, { previous: again.files, reuse: again });
    expect(changed.infras[0]?.envoy).not.toBe(again.infras[0]?.envoy);
    expect(changed.infras[0]?.envoy).toEqual(renderAll(moved).infras[0]?.envoy);
    // A worker address going changes no DNS record here: the zones stay as they were.
    expect(changed.infras[0]?.coreDns).toBe(again.infras[0]?.coreDns);
  });
});
