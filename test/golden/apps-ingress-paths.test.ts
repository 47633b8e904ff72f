// examples/apps-ingress serves two paths: the operator path (kubectl apply -k) must carry no status
// — the operator writes appsIngressStatus — while serve/render take it from serve-apps-status.yaml.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { loadManifestDir } from "../../src/watchers/manifests.js";
import { which } from "../dhcp/support/run.js";

const EXAMPLE = join(import.meta.dirname, "..", "..", "examples", "apps-ingress");
const exec = promisify(execFile);

describe("examples/apps-ingress", () => {
  it("kubectl apply -k applies the Infra, its Service and the attachment's spec, and no status", async (ctx) => {
    const kubectl = await which("kubectl");
    if (kubectl === undefined) {
      ctx.skip("kubectl missing: .ci/run installs kubernetes-client");
      return;
    }
    const { stdout } = await exec(kubectl, ["kustomize", EXAMPLE]);
    const objects = parseAllDocuments(stdout).map((d) => d.toJS() as Record<string, unknown>);
    expect(objects.map((o) => o["kind"]).sort()).toEqual(["Infra", "InfraClusterAttachment", "Service"]);
    for (const o of objects) expect(o, String(o["kind"])).not.toHaveProperty("status");
    const attachment = objects.find((o) => o["kind"] === "InfraClusterAttachment");
    expect(attachment?.["spec"]).toMatchObject({ appsIngress: { enabled: true } });
  });

  it("serve and render read the attachment's spec with the status of serve-apps-status.yaml", async () => {
    const load = await loadManifestDir(EXAMPLE);
    if (!load.ok) throw new Error(JSON.stringify(load.error));
    expect(load.state.attachments.map((a) => [a.metadata.name, a.spec.appsIngress?.enabled, a.status])).toEqual([
      [
        "example-hcp",
        true,
        {
          appsIngressStatus: {
            phase: "Ready",
            reason: "IngressReady",
            message: "LoadBalancer Service openshift-ingress/oooi-ingress has 192.0.2.200",
            externalIP: "192.0.2.200",
          },
        },
      ],
    ]);
    expect(load.ignored.map((o) => o.kind)).toEqual(["Kustomization"]);
  });
});
