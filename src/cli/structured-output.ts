// `-o json|yaml` of every read command: the same document as JSON or YAML; undefined for the
// command's own human format (table, text).
import { stringify as toYaml } from "yaml";

/** `doc` as the structured format `output` names, or undefined when `output` is a human format. */
export function structured(doc: unknown, output: string): string | undefined {
  if (output === "json") return `${JSON.stringify(doc, null, 2)}\n`;
  if (output === "yaml") return toYaml(doc, { lineWidth: 0 });
  return undefined;
}
