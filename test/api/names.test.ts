// Object names and DNS domains (issue 25 rows 7 and 17): what the API server refuses for these
// kinds, the length that still fits every name oooi derives from an Infra's, and domains whose
// published names fit DNS — refused by decodeResource naming the field, and by the generated CRDs.
import { describe, expect, it } from "vitest";
import { crdObject } from "../../src/api/crd.js";
import { DOMAIN_MAX_LENGTH, INFRA_DERIVED_NAMES, INFRA_NAME_MAX_LENGTH, KINDS } from "../../src/api/schema.js";
import { decodeResource, type FieldError } from "../../src/api/validate.js";
import { allObjects, desiredState, operatorSettings } from "../../src/operator/desired/index.js";
import { renderAll } from "../../src/pipeline/outputs.js";
import type { Infra } from "../../src/api/schema.js";
import { attachment, combine, hostedCluster, infra, NS } from "../support/fixtures.js";
import { validate } from "./structural.js";

const API = "hostedcluster.densityops.com/v1alpha1";
const infraSpec = {
  networkConfig: { cidr: "192.0.2.0/24", gateway: "192.0.2.1", networkAttachmentDefinition: "vlan100" },
};
const attachmentSpec = (dns: { clusterName: string; baseDomain: string }) => ({
  infraRef: { name: "vlan100" },
  hostedClusterRef: { name: "hc1" },
  dns,
});

function errors(kind: string, metadata: Record<string, unknown>, spec: unknown): FieldError[] {
  const r = decodeResource({ apiVersion: API, kind, metadata, spec }, kind);
  return r.ok ? [] : r.errors;
}

interface Row {
  readonly name: string;
  readonly kind: "Infra" | "InfraClusterAttachment";
  readonly metadata: Record<string, unknown>;
  readonly spec?: unknown;
  /** The field refused and a part of its message; none: accepted. */
  readonly refused?: { readonly field: string; readonly message: RegExp };
}

const long = (n: number, c = "a"): string => c.repeat(n);
const label63 = long(63, "b");

const rows: Row[] = [
  {
    name: "an Infra named with 300 characters",
    kind: "Infra",
    metadata: { name: long(300), namespace: NS },
    refused: { field: "metadata.name", message: /\(300 characters\): must be at most 48 characters: the Service/ },
  },
  {
    name: "an Infra named ../../etc",
    kind: "Infra",
    metadata: { name: "../../etc", namespace: NS },
    refused: { field: "metadata.name", message: /starting with a letter/ },
  },
  {
    name: "an Infra named a/b",
    kind: "Infra",
    metadata: { name: "a/b", namespace: NS },
    refused: { field: "metadata.name", message: /"a\/b": must be lower-case letters, digits and '-'/ },
  },
  {
    name: "an Infra named Bad_Name",
    kind: "Infra",
    metadata: { name: "Bad_Name", namespace: NS },
    refused: { field: "metadata.name", message: /must be lower-case letters/ },
  },
  {
    name: "an Infra named <img src=x onerror=alert(1)>",
    kind: "Infra",
    metadata: { name: "<img src=x onerror=alert(1)>", namespace: NS },
    refused: { field: "metadata.name", message: /must be lower-case letters/ },
  },
  {
    name: "an Infra named with a dot (its Services could not be)",
    kind: "Infra",
    metadata: { name: "vlan.100", namespace: NS },
    refused: { field: "metadata.name", message: /must be lower-case letters/ },
  },
  {
    name: "an Infra named with a digit first (its Services could not be)",
    kind: "Infra",
    metadata: { name: "100-vlan", namespace: NS },
    refused: { field: "metadata.name", message: /starting with a letter/ },
  },
  {
    name: `an Infra named with ${String(INFRA_NAME_MAX_LENGTH + 1)} characters`,
    kind: "Infra",
    metadata: { name: long(INFRA_NAME_MAX_LENGTH + 1), namespace: NS },
    refused: { field: "metadata.name", message: /must be at most 48 characters/ },
  },
  {
    name: `an Infra named with ${String(INFRA_NAME_MAX_LENGTH)} characters`,
    kind: "Infra",
    metadata: { name: long(INFRA_NAME_MAX_LENGTH), namespace: NS },
  },
  {
    name: "an Infra in namespace ../..",
    kind: "Infra",
    metadata: { name: "vlan100", namespace: "../.." },
    refused: { field: "metadata.namespace", message: /must be a lower-case DNS label/ },
  },
  {
    name: "an Infra in a namespace of 64 characters",
    kind: "Infra",
    metadata: { name: "vlan100", namespace: long(64) },
    refused: { field: "metadata.namespace", message: /must be at most 63 characters/ },
  },
  {
    name: "an attachment named a/b",
    kind: "InfraClusterAttachment",
    metadata: { name: "a/b", namespace: NS },
    spec: attachmentSpec({ clusterName: "hc1", baseDomain: "example.com" }),
    refused: { field: "metadata.name", message: /must be lower-case letters, digits, '-' and '\.'/ },
  },
  {
    name: "an attachment named with 254 characters",
    kind: "InfraClusterAttachment",
    metadata: { name: long(254), namespace: NS },
    spec: attachmentSpec({ clusterName: "hc1", baseDomain: "example.com" }),
    refused: { field: "metadata.name", message: /must be at most 253 characters/ },
  },
  {
    name: "an attachment named with dots (a subdomain, as the API server allows)",
    kind: "InfraClusterAttachment",
    metadata: { name: "hc1.example", namespace: NS },
    spec: attachmentSpec({ clusterName: "hc1", baseDomain: "example.com" }),
  },
  {
    name: "a clusterName of 70 characters",
    kind: "InfraClusterAttachment",
    metadata: { name: "hc1", namespace: NS },
    spec: attachmentSpec({ clusterName: long(70), baseDomain: "example.com" }),
    refused: { field: "spec.dns.clusterName", message: /must be at most 63 characters/ },
  },
  {
    name: "a baseDomain with a label of 70 characters",
    kind: "InfraClusterAttachment",
    metadata: { name: "hc1", namespace: NS },
    spec: attachmentSpec({ clusterName: "hc1", baseDomain: `${long(70)}.example.com` }),
    refused: { field: "spec.dns.baseDomain", message: /each label at most 63 characters/ },
  },
  {
    name: "a baseDomain of 300 characters",
    kind: "InfraClusterAttachment",
    metadata: { name: "hc1", namespace: NS },
    spec: attachmentSpec({
      clusterName: "hc1",
      baseDomain: `${[label63, label63, label63, label63, long(40)].join(".")}.com`,
    }),
    refused: { field: "spec.dns.baseDomain", message: /\(300 characters\): must be at most 253 characters/ },
  },
  {
    name: "labels of exactly 63 characters",
    kind: "InfraClusterAttachment",
    metadata: { name: "hc1", namespace: NS },
    spec: attachmentSpec({ clusterName: label63, baseDomain: `${label63}.com` }),
  },
];

describe("decodeResource refuses names and domains naming the field", () => {
  it.each(rows)("$name", (row) => {
    const found = errors(row.kind, row.metadata, row.spec ?? infraSpec);
    if (row.refused === undefined) {
      expect(found).toEqual([]);
      return;
    }
    expect(found.map((e) => e.field)).toEqual([row.refused.field]);
    expect(found[0]?.message).toMatch(row.refused.message);
  });
});

describe("the CRDs refuse the same names", () => {
  const nameSchema = (kind: string): Record<string, unknown> => {
    const def = KINDS.find((k) => k.kind === kind);
    if (def === undefined) throw new Error(kind);
    const crd = crdObject(def) as { spec: { versions: { schema: { openAPIV3Schema: unknown } }[] } };
    const root = crd.spec.versions[0]?.schema.openAPIV3Schema as {
      properties: { metadata: { properties: { name: Record<string, unknown> } } };
    };
    return root.properties.metadata.properties.name;
  };

  it.each(rows.filter((r) => r.refused?.field === "metadata.name"))("$name", (row) => {
    expect(validate(nameSchema(row.kind), row.metadata["name"], "metadata.name", { skipEnum: false })).not.toEqual([]);
  });

  it.each(KINDS.map((k) => k.kind))("%s names are restricted in its CRD", (kind) => {
    expect(nameSchema(kind)).toMatchObject({ type: "string", minLength: 1, pattern: expect.any(String) as string });
  });

  it("the attachment CRD checks the whole domain with a CEL rule at spec.dns", () => {
    const def = KINDS.find((k) => k.kind === "InfraClusterAttachment");
    if (def === undefined) throw new Error("no attachment kind");
    const crd = JSON.stringify(crdObject(def));
    expect(crd).toContain(`self.clusterName.size() + 1 + self.baseDomain.size() <= ${String(DOMAIN_MAX_LENGTH)}`);
  });
});

describe("every name oooi derives from an Infra's fits its kind's rule", () => {
  const settings = operatorSettings({ namespace: "oooi-system" });
  const nad = JSON.stringify({ cniVersion: "0.3.1", name: "vlan100", type: "bridge", bridge: "br0", ipam: {} });
  const longest = long(INFRA_NAME_MAX_LENGTH, "v");
  const i = infra(longest, {
    infraComponents: { proxy: { externalService: { enabled: true } } },
  });
  const withUid: Infra = { ...i, metadata: { ...i.metadata, uid: "uid-1" } };
  const state = combine(
    { infras: [withUid], attachments: [attachment("alpha", { infra: longest })] },
    hostedCluster("alpha", 1, ["192.0.2.50"]),
  );
  const d = desiredState({
    state,
    outputs: renderAll(state),
    settings,
    networkAttachments: new Map([[`${NS}/vlan100`, nad]]),
  });

  it(`an Infra named with ${String(INFRA_NAME_MAX_LENGTH)} characters gets every object, none refused`, () => {
    expect(d.problems.map((p) => p.reason)).toEqual([]);
    expect(d.infras.flatMap((x) => x.objects).length).toBeGreaterThan(10);
  });

  it("INFRA_DERIVED_NAMES lists every derived name, so its maximum is the real one", () => {
    const suffixes = new Set(INFRA_DERIVED_NAMES.map((n) => n.suffix));
    for (const o of allObjects(d)) {
      const name = o.metadata.name;
      if (!name.startsWith(longest)) continue;
      expect(suffixes, `${o.kind} ${name}`).toContain(name.slice(longest.length));
    }
  });
});
