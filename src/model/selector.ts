// A LabelSelector as the API server validates it (k8s.io/apimachinery metav1 validation:
// ValidateLabelSelector, ValidateLabelName, IsValidLabelValue), so a selector the user wrote is
// refused here with its field, never by the API server on the policy oooi generates. Pure.
import type { LabelSelector } from "../api/schema.js";

/** One thing wrong with a selector: a path below the selector's own field, and why. */
export interface SelectorError {
  readonly field: string;
  readonly message: string;
}

const NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const PREFIX = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Why `key` is not a label key (`[prefix/]name`, prefix a DNS subdomain ≤ 253, name ≤ 63), or undefined. */
export function labelKeyError(key: string): string | undefined {
  const slash = key.lastIndexOf("/");
  const prefix = slash < 0 ? undefined : key.slice(0, slash);
  const name = slash < 0 ? key : key.slice(slash + 1);
  if (prefix !== undefined && (prefix.length > 253 || !PREFIX.test(prefix)))
    return `${JSON.stringify(key)}: the prefix must be a DNS subdomain of at most 253 characters`;
  if (name.length > 63 || !NAME.test(name))
    return `${JSON.stringify(key)}: the name must be at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit`;
  return undefined;
}

/** Why `value` is not a label value (empty, or a name of at most 63 characters), or undefined. */
export function labelValueError(value: string): string | undefined {
  return value === "" || (value.length <= 63 && NAME.test(value))
    ? undefined
    : `${JSON.stringify(value)} is not a label value (at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit)`;
}

/** Every error of a selector, in field order. */
export function selectorErrors(selector: LabelSelector): SelectorError[] {
  const out: SelectorError[] = [];
  for (const [key, value] of Object.entries(selector.matchLabels ?? {}).sort(([a], [b]) => (a < b ? -1 : 1))) {
    const bad = labelKeyError(key) ?? labelValueError(value);
    if (bad !== undefined) out.push({ field: `matchLabels.${key}`, message: bad });
  }
  (selector.matchExpressions ?? []).forEach((e, i) => {
    const at = `matchExpressions[${i}]`;
    const keyBad = labelKeyError(e.key);
    if (keyBad !== undefined) out.push({ field: `${at}.key`, message: keyBad });
    const values = e.values ?? [];
    if ((e.operator === "In" || e.operator === "NotIn") && values.length === 0)
      out.push({ field: `${at}.values`, message: `operator ${e.operator} needs at least one value` });
    if ((e.operator === "Exists" || e.operator === "DoesNotExist") && values.length > 0)
      out.push({ field: `${at}.values`, message: `operator ${e.operator} takes no values` });
    values.forEach((v, j) => {
      const bad = labelValueError(v);
      if (bad !== undefined) out.push({ field: `${at}.values[${j}]`, message: bad });
    });
  });
  return out;
}
