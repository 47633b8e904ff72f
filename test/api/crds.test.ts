import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { Type } from "@sinclair/typebox";
import { crdObject, generateCrdDirectory, generateCrds, toStructural } from "../../src/api/crd.js";
import { GROUP, KINDS, VERSION } from "../../src/api/schema.js";
import { structuralViolations } from "./structural.js";

const CRD_DIR = fileURLToPath(new URL("../../deploy/crds/", import.meta.url));
const REGENERATE = "UPDATE_CRDS=1 npx vitest run test/api/crds.test.ts";

type Json = Record<string, unknown>;
const at = (o: unknown, ...path: (string | number)[]): unknown =>
  path.reduce<unknown>((v, k) => (v as Record<string | number, unknown> | undefined)?.[k], o);

function schemaOf(kind: string): Json {
  const def = KINDS.find((k) => k.kind === kind);
  if (def === undefined) throw new Error(`no kind ${kind}`);
  return at(crdObject(def), "spec", "versions", 0, "schema", "openAPIV3Schema") as Json;
}

describe("deploy/crds", () => {
  const files = generateCrdDirectory();

  it("committed files equal generateCrds() output", () => {
    if (process.env["UPDATE_CRDS"] === "1") {
      mkdirSync(CRD_DIR, { recursive: true });
      for (const f of readdirSync(CRD_DIR)) if (f.endsWith(".yaml")) rmSync(join(CRD_DIR, f));
      for (const f of files) writeFileSync(join(CRD_DIR, f.fileName), f.yaml);
    }
    const committed = readdirSync(CRD_DIR)
      .filter((f) => f.endsWith(".yaml"))
      .sort();
    expect(committed, `deploy/crds holds other files than generated; regenerate with: ${REGENERATE}`).toEqual(
      files.map((f) => f.fileName).sort(),
    );
    for (const f of files) {
      expect(
        readFileSync(join(CRD_DIR, f.fileName), "utf8"),
        `deploy/crds/${f.fileName} is stale; regenerate with: ${REGENERATE}`,
      ).toBe(f.yaml);
    }
  });

  it("generation is deterministic", () => {
    expect(generateCrdDirectory()).toEqual(files);
  });

  it("kustomization lists every CRD", () => {
    const k = parse(files.find((f) => f.fileName === "kustomization.yaml")?.yaml ?? "") as Json;
    expect(k["kind"]).toBe("Kustomization");
    expect(k["resources"]).toEqual(KINDS.map((d) => `${GROUP}_${d.plural}.yaml`));
  });

  it.each(KINDS.map((d) => [d.kind, d] as const))("%s CRD has names, version, subresources and columns", (_, def) => {
    const file = generateCrds().find((f) => f.fileName === `${GROUP}_${def.plural}.yaml`);
    expect(file).toBeDefined();
    const crd = parse(file?.yaml ?? "") as Json;
    expect(crd["apiVersion"]).toBe("apiextensions.k8s.io/v1");
    expect(crd["kind"]).toBe("CustomResourceDefinition");
    expect(at(crd, "metadata", "name")).toBe(`${def.plural}.${GROUP}`);
    expect(at(crd, "spec", "group")).toBe(GROUP);
    expect(at(crd, "spec", "scope")).toBe("Namespaced");
    expect(at(crd, "spec", "names")).toEqual({
      categories: ["oooi"],
      kind: def.kind,
      listKind: `${def.kind}List`,
      plural: def.plural,
      shortNames: def.shortNames,
      singular: def.singular,
    });
    const versions = at(crd, "spec", "versions") as Json[];
    expect(versions).toHaveLength(1);
    expect(versions[0]).toMatchObject({ name: VERSION, served: true, storage: true, subresources: { status: {} } });
    expect(at(versions[0], "additionalPrinterColumns")).toEqual(def.printerColumns);
    const root = at(versions[0], "schema", "openAPIV3Schema") as Json;
    expect(Object.keys(at(root, "properties") as Json).sort()).toEqual([
      "apiVersion",
      "kind",
      "metadata",
      "spec",
      "status",
    ]);
  });

  it.each(KINDS.map((d) => [d.kind] as const))(
    "%s schema obeys the structural-schema rules (in memory and after YAML)",
    (kind) => {
      const schema = schemaOf(kind);
      expect(structuralViolations(schema)).toEqual([]);
      const def = KINDS.find((d) => d.kind === kind);
      const fromYaml = parse(
        generateCrds().find((f) => f.fileName === `${GROUP}_${def?.plural ?? ""}.yaml`)?.yaml ?? "",
      ) as Json;
      const yamlSchema = at(fromYaml, "spec", "versions", 0, "schema", "openAPIV3Schema");
      expect(yamlSchema, "YAML round trip changed the schema (quoting of patterns?)").toEqual(
        JSON.parse(JSON.stringify(schema)),
      );
      expect(structuralViolations(yamlSchema)).toEqual([]);
    },
  );
});

describe("structural rule checker", () => {
  // The checker must catch what the API server rejects, or the test above proves nothing.
  it.each<[string, unknown, RegExp]>([
    [
      "untyped node",
      { type: "object", properties: { a: { description: "x" } } },
      /properties\.a: every node needs a type/,
    ],
    [
      "properties with additionalProperties",
      { type: "object", properties: { a: { type: "string" } }, additionalProperties: { type: "string" } },
      /mutually exclusive/,
    ],
    [
      "patternProperties",
      { type: "object", patternProperties: { "^(.*)$": { type: "string" } } },
      /patternProperties is forbidden/,
    ],
    ["anyOf union", { type: "object", properties: { a: { anyOf: [{ const: "x", type: "string" }] } } }, /anyOf/],
    [
      "default of wrong type",
      { type: "object", properties: { a: { type: "integer", default: "1" } } },
      /a\.default: "1" is not of type integer/,
    ],
    [
      "default outside enum",
      { type: "object", properties: { a: { type: "string", enum: ["x"], default: "y" } } },
      /not in the enum/,
    ],
    [
      "default with unknown field",
      { type: "object", properties: { a: { type: "object", default: { b: 1 } } } },
      /unknown field/,
    ],
    [
      "default violating pattern",
      { type: "object", properties: { a: { type: "string", pattern: "^[a-z]+$", default: "A" } } },
      /does not match pattern/,
    ],
    [
      "required not a property",
      { type: "object", properties: { a: { type: "string" } }, required: ["b"] },
      /required b is not a property/,
    ],
    ["lookahead pattern", { type: "object", properties: { a: { type: "string", pattern: "^(?!x)" } } }, /not RE2/],
    [
      "list map key not required",
      {
        type: "object",
        properties: {
          c: {
            type: "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["t"],
            items: { type: "object", properties: { t: { type: "string" } } },
          },
        },
      },
      /map key t must be required or defaulted/,
    ],
    [
      "restricted metadata beyond name",
      { type: "object", properties: { metadata: { type: "object", properties: { labels: { type: "object" } } } } },
      /metadata\.properties\.labels: only name and generateName/,
    ],
    [
      "a default for metadata.name",
      {
        type: "object",
        properties: { metadata: { type: "object", properties: { name: { type: "string", default: "x" } } } },
      },
      /metadata\.properties\.name: must not have a default/,
    ],
    ["symbol keys", { type: "object", [Symbol("TypeBox.Kind")]: "Object" }, /symbol keys/],
  ])("flags %s", (_, schema, expected) => {
    expect(structuralViolations(schema).join("\n")).toMatch(expected);
  });
});

describe("toStructural", () => {
  const infra = schemaOf("Infra");
  const spec = at(infra, "properties", "spec");

  it("drops TypeBox internals and $id", () => {
    const node = toStructural(Type.String({ $id: "X", minLength: 1 })) as unknown as Json;
    expect(node).toEqual({ type: "string", minLength: 1 });
    expect(Object.getOwnPropertySymbols(node)).toEqual([]);
  });

  it("lists only non-optional properties as required", () => {
    expect(at(spec, "required")).toEqual(["networkConfig"]);
    // gateway and the NAD are optional: a structured attachment replaces the NAD, and a Primary
    // network needs no gateway (the original's network_types_test.go pins the same).
    expect(at(spec, "properties", "networkConfig", "required")).toEqual(["cidr"]);
    expect(at(spec, "properties", "infraComponents", "required")).toBeUndefined();
  });

  it("keeps defaults, descriptions and constraints", () => {
    expect(at(spec, "properties", "networkConfig", "properties", "dnsServers")).toMatchObject({
      type: "array",
      default: ["resolv.conf"],
      items: { type: "string", minLength: 1 },
    });
    expect(at(spec, "properties", "infraComponents", "properties", "dhcp", "properties", "leaseTime")).toMatchObject({
      type: "string",
      default: "1h",
      pattern: expect.any(String) as string,
    });
    expect(at(spec, "properties", "infraComponents", "properties", "dhcp")).toMatchObject({
      type: "object",
      default: {},
      description: "Kea DHCPv4 on the VLAN.",
    });
    const ports = at(
      schemaOf("InfraClusterAttachment"),
      "properties",
      "spec",
      "properties",
      "appsIngress",
      "properties",
      "ports",
      "properties",
      "http",
    );
    expect(ports).toEqual({ type: "integer", default: 80, minimum: 1, maximum: 65535 });
  });

  it("turns a union of string literals into an enum", () => {
    expect(at(spec, "properties", "infraComponents", "properties", "dhcp", "properties", "unknownClients")).toEqual({
      description: expect.any(String) as string,
      type: "string",
      enum: ["deny", "pool"],
      default: "deny",
    });
  });

  it("turns Record<string,string> into additionalProperties", () => {
    expect(
      at(
        spec,
        "properties",
        "infraComponents",
        "properties",
        "proxy",
        "properties",
        "externalService",
        "properties",
        "labels",
      ),
    ).toEqual({
      description: "Labels added to the Service.",
      type: "object",
      additionalProperties: { type: "string" },
    });
  });

  it("carries the original's four networkConfig CEL rules and its structured enums", () => {
    const nc = at(spec, "properties", "networkConfig") as Json;
    expect((nc["x-kubernetes-validations"] as { message: string }[]).map((r) => r.message)).toEqual([
      "networkConfig must specify either attachment or networkAttachmentDefinition",
      expect.stringMatching(
        /^cannot mix legacy networkAttachmentDefinition\/networkAttachmentNamespace with structured/,
      ),
      "structured fields topology, role, exposure, ipam and routeAdvertisementsRef require attachment",
      "networkAttachmentNamespace requires networkAttachmentDefinition",
    ]);
    expect(at(nc, "properties", "attachment", "properties", "kind", "enum")).toEqual([
      "NetworkAttachmentDefinition",
      "ClusterUserDefinedNetwork",
    ]);
    expect(at(nc, "properties", "attachment", "required")).toEqual(["kind", "name"]);
    expect(at(nc, "properties", "topology", "enum")).toEqual(["Localnet", "Layer2", "Layer3"]);
    expect(at(nc, "properties", "role", "enum")).toEqual(["Secondary", "Primary"]);
    expect(at(nc, "properties", "exposure", "enum")).toEqual(["Layer2", "BGP"]);
    expect(at(nc, "properties", "ipam", "enum")).toEqual(["DHCP", "External", "OVNKubernetes"]);
    expect(at(nc, "properties", "routeAdvertisementsRef", "required")).toEqual(["name"]);
  });

  it("keeps x-kubernetes-* extensions", () => {
    expect(at(infra, "properties", "status", "properties", "conditions")).toMatchObject({
      type: "array",
      "x-kubernetes-list-type": "map",
      "x-kubernetes-list-map-keys": ["type"],
    });
  });

  it("rejects constructs a structural schema cannot express", () => {
    expect(() => toStructural(Type.Union([Type.String(), Type.Integer()]))).toThrow(/only unions of string literals/);
    expect(() => toStructural(Type.Any())).toThrow(/no structural equivalent/);
  });
});
