// oooi's kinds come from the CRDs in deploy/crds, not from src/: a copy with one CRD changed (scope,
// status subresource, served version, printer columns) makes the fake behave as kube-apiserver would
// with that CRD installed.
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import {
  BUILTIN_KINDS,
  FakeApiServer,
  OOOI_CRD_DIR,
  OOOI_KINDS,
  loadCrdKinds,
  type ResourceKind,
} from "../support/fake-apiserver/index.js";
import { call } from "./http.js";

const GV = "/apis/hostedcluster.densityops.com/v1alpha1";
const API_VERSION = "hostedcluster.densityops.com/v1alpha1";
const TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";
const file = (plural: string): string => `hostedcluster.densityops.com_${plural}.yaml`;

let work: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "oooi-crds-"));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

let copies = 0;
/** A copy of deploy/crds with `edit` applied to one CRD file (edited as a YAML document). */
async function crdsWith(plural: string, edit: (doc: ReturnType<typeof parseDocument>) => void): Promise<string> {
  const dir = join(work, `crds-${++copies}`);
  await cp(OOOI_CRD_DIR, dir, { recursive: true });
  const path = join(dir, file(plural));
  const doc = parseDocument(await readFile(path, "utf8"));
  edit(doc);
  await writeFile(path, doc.toString());
  return dir;
}

async function withFake(kinds: readonly ResourceKind[], body: (fake: FakeApiServer) => Promise<void>): Promise<void> {
  const fake = await FakeApiServer.start({ kinds: [...BUILTIN_KINDS, ...kinds] });
  try {
    await body(fake);
  } finally {
    await fake.stop();
  }
}

const dns = (status: Record<string, unknown>): Record<string, unknown> => ({
  apiVersion: API_VERSION,
  kind: "DNSServer",
  metadata: { name: "d" },
  spec: { networkConfig: { serverIP: "192.0.2.53" } },
  status,
});

describe("the shipped CRDs", () => {
  it("give every oooi kind a status subresource: the main resource ignores status, /status writes it", async () => {
    await withFake(OOOI_KINDS, async (fake) => {
      const url = `${GV}/namespaces/default/dnsservers`;
      const created = await call(fake, "POST", url, dns({ ackedVersion: "x" }));
      expect(created.status).toBe(201);
      expect(created.body["status"]).toBeUndefined();
      const put = await call(fake, "PUT", `${url}/d`, dns({ ackedVersion: "y" }));
      expect(put.body["status"]).toBeUndefined();
      const status = await call(fake, "PUT", `${url}/d/status`, dns({ ackedVersion: "z" }));
      expect(status.status).toBe(200);
      expect(status.body["status"]).toEqual({ ackedVersion: "z" });
    });
  });

  it("print a CRD's additionalPrinterColumns in Tables, typed per column", async () => {
    await withFake(OOOI_KINDS, async (fake) => {
      fake.seed({
        apiVersion: API_VERSION,
        kind: "Infra",
        metadata: { name: "vlan100", namespace: "default" },
        spec: {},
        status: {
          attachments: { total: 2 },
          conditions: [
            { type: "DHCPReady", status: "True" },
            { type: "Ready", status: "False", reason: "DNSNotReady", message: "dns down" },
          ],
        },
      });
      const list = await call(fake, "GET", `${GV}/namespaces/default/infras`, undefined, undefined, TABLE);
      const columns = (list.body["columnDefinitions"] as { name: string; type: string; priority: number }[]).map(
        (c) => `${c.name}:${c.type}:${c.priority}`,
      );
      expect(columns).toEqual([
        "Name:string:0",
        "Ready:string:0",
        "Attachments:integer:0",
        "DHCP:string:0",
        "DNS:string:0",
        "Proxy:string:0",
        "Age:date:0",
        "Reason:string:1",
        "Message:string:1",
      ]);
      const rows = list.body["rows"] as { cells: unknown[] }[];
      expect(rows).toHaveLength(1);
      expect(rows[0]?.cells).toEqual([
        "vlan100",
        "False",
        2,
        "True",
        null,
        null,
        expect.stringMatching(/^\d+s$/),
        "DNSNotReady",
        "dns down",
      ]);
      const one = await call(fake, "GET", `${GV}/namespaces/default/infras/vlan100`, undefined, undefined, TABLE);
      // The same row; Age may have ticked over a second boundary between the two requests.
      const cells = rows[0]?.cells ?? [];
      expect(one.body).toMatchObject({
        kind: "Table",
        rows: [{ cells: [...cells.slice(0, 6), expect.stringMatching(/^\d+s$/), ...cells.slice(7)] }],
      });
    });
  });
});

describe("a CRD changed in a copy of deploy/crds", () => {
  it("without the status subresource: /status is 404 and the main resource writes status", async () => {
    const dir = await crdsWith("dnsservers", (doc) => {
      doc.deleteIn(["spec", "versions", 0, "subresources"]);
    });
    await withFake(loadCrdKinds(dir), async (fake) => {
      const url = `${GV}/namespaces/default/dnsservers`;
      const created = await call(fake, "POST", url, dns({ ackedVersion: "x" }));
      expect(created.body["status"]).toEqual({ ackedVersion: "x" });
      const put = await call(fake, "PUT", `${url}/d`, dns({ ackedVersion: "y" }));
      expect(put.status).toBe(200);
      expect(put.body["status"]).toEqual({ ackedVersion: "y" });
      // Without the subresource, status is part of what metadata.generation counts.
      expect((put.body["metadata"] as { generation: number }).generation).toBe(2);
      expect((await call(fake, "PUT", `${url}/d/status`, dns({ ackedVersion: "z" }))).status).toBe(404);
      const patch = await call(fake, "PATCH", `${url}/d/status`, { status: {} }, "application/merge-patch+json");
      expect(patch.status).toBe(404);
      const resources = (await call(fake, "GET", GV)).body["resources"] as { name: string }[];
      expect(resources.map((r) => r.name)).toContain("dnsservers");
      expect(resources.map((r) => r.name)).not.toContain("dnsservers/status");
    });
  });

  it("scoped to the cluster: namespaced URLs are 404, the object lives at /<plural>/<name>", async () => {
    const dir = await crdsWith("infras", (doc) => {
      doc.setIn(["spec", "scope"], "Cluster");
    });
    await withFake(loadCrdKinds(dir), async (fake) => {
      const infra = { apiVersion: API_VERSION, kind: "Infra", metadata: { name: "vlan100" }, spec: {} };
      expect((await call(fake, "POST", `${GV}/namespaces/default/infras`, infra)).status).toBe(404);
      expect((await call(fake, "GET", `${GV}/namespaces/default/infras`)).status).toBe(404);
      const created = await call(fake, "POST", `${GV}/infras`, infra);
      expect(created.status).toBe(201);
      expect(created.body["metadata"]).not.toHaveProperty("namespace");
      expect((await call(fake, "GET", `${GV}/infras/vlan100`)).status).toBe(200);
      const resources = (await call(fake, "GET", GV)).body["resources"] as { name: string; namespaced: boolean }[];
      expect(resources.find((r) => r.name === "infras")?.namespaced).toBe(false);
      // The other kinds keep their CRDs' scope.
      expect(resources.find((r) => r.name === "dnsservers")?.namespaced).toBe(true);
    });
  });

  it("with its only version not served: the kind is not served at all", async () => {
    const dir = await crdsWith("proxyservers", (doc) => {
      doc.setIn(["spec", "versions", 0, "served"], false);
    });
    const kinds = loadCrdKinds(dir);
    expect(kinds.map((k) => k.plural)).not.toContain("proxyservers");
    await withFake(kinds, async (fake) => {
      expect((await call(fake, "GET", `${GV}/namespaces/default/proxyservers`)).status).toBe(404);
      expect((await call(fake, "GET", `${GV}/namespaces/default/infras`)).status).toBe(200);
    });
  });

  it("with other printer columns: Tables print those; none declared prints Name and Age", async () => {
    const renamed = await crdsWith("dnsservers", (doc) => {
      doc.setIn(
        ["spec", "versions", 0, "additionalPrinterColumns"],
        [{ name: "Server", type: "string", jsonPath: ".spec.networkConfig.serverIP", description: "VLAN address" }],
      );
    });
    const bare = await crdsWith("dnsservers", (doc) => {
      doc.deleteIn(["spec", "versions", 0, "additionalPrinterColumns"]);
    });
    for (const [dir, names, cells] of [
      [renamed, ["Name", "Server"], ["d", "192.0.2.53"]],
      [bare, ["Name", "Age"], ["d", expect.stringMatching(/^\d+s$/)]],
    ] as const) {
      await withFake(loadCrdKinds(dir), async (fake) => {
        await call(fake, "POST", `${GV}/namespaces/default/dnsservers`, dns({}));
        const t = await call(fake, "GET", `${GV}/namespaces/default/dnsservers`, undefined, undefined, TABLE);
        expect((t.body["columnDefinitions"] as { name: string }[]).map((c) => c.name)).toEqual(names);
        expect(t.body["rows"]).toEqual([expect.objectContaining({ cells })]);
      });
    }
  });

  it("that kube-apiserver would refuse: loading fails naming the file, the CRD and the field", async () => {
    const scope = await crdsWith("infras", (doc) => {
      doc.setIn(["spec", "scope"], "Global");
    });
    expect(() => loadCrdKinds(scope)).toThrow(
      `${join(scope, file("infras"))}: CustomResourceDefinition infras.hostedcluster.densityops.com is invalid: spec.scope: Unsupported value: "Global"`,
    );
    const column = await crdsWith("dnsservers", (doc) => {
      doc.setIn(["spec", "versions", 0, "additionalPrinterColumns", 0, "jsonPath"], ".spec..serverIP");
    });
    expect(() => loadCrdKinds(column)).toThrow(
      /dnsservers\.yaml: CustomResourceDefinition dnsservers\.hostedcluster\.densityops\.com is invalid: spec\.versions\[0\]\.additionalPrinterColumns\[0\]\.jsonPath: Invalid value/,
    );
    const storage = await crdsWith("dhcpservers", (doc) => {
      doc.setIn(["spec", "versions", 0, "storage"], false);
    });
    expect(() => loadCrdKinds(storage)).toThrow(/spec\.versions: Invalid value: must have exactly one version/);
  });
});
