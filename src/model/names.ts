// Names the model refuses. Objects: what the API server would (src/api/validate.ts metadataErrors),
// checked again because an object may come from a cluster whose CRD predates the rule, and every
// name oooi derives (children, Services, output folders) begins with its Infra's. Domains: what
// the schema says, and short enough for every name published under them.
import { fieldErrors, kindDefinition, metadataErrors, type FieldError } from "../api/validate.js";
import {
  DOMAIN_MAX_LENGTH,
  InfraClusterAttachmentSpec,
  type InfraClusterAttachment,
  type ObjectMeta,
} from "../api/schema.js";

/** Per metadata object (kept while the object is): a big VLAN's rebuild checks its own changes. */
const checkedNames = new WeakMap<ObjectMeta, readonly FieldError[]>();

export function objectNameErrors(kind: string, metadata: ObjectMeta): readonly FieldError[] {
  const kept = checkedNames.get(metadata);
  if (kept !== undefined) return kept;
  const def = kindDefinition(kind);
  const errors = def === undefined ? [] : metadataErrors(def, metadata);
  checkedNames.set(metadata, errors);
  return errors;
}

/** domainErrors by spec.dns object: a big VLAN's build checks every attachment's on each change. */
const checkedDomains = new WeakMap<InfraClusterAttachment["spec"]["dns"], readonly FieldError[]>();

/**
 * spec.dns of an attachment: each part as the schema has it, and the whole domain short enough
 * that konnectivity.<domain> (the longest name published under it) is a DNS name.
 */
export function domainErrors(a: InfraClusterAttachment): readonly FieldError[] {
  const dns = a.spec.dns;
  const kept = checkedDomains.get(dns);
  if (kept !== undefined) return kept;
  const errors = fieldErrors(InfraClusterAttachmentSpec.properties.dns, dns, "spec.dns");
  const length = errors.length > 0 ? 0 : dns.clusterName.length + 1 + dns.baseDomain.length;
  if (length > DOMAIN_MAX_LENGTH) {
    errors.push({
      field: "spec.dns.baseDomain",
      message: `the domain <clusterName>.<baseDomain> is ${String(length)} characters; at most ${String(DOMAIN_MAX_LENGTH)}, so that konnectivity.<domain> is a DNS name of at most 253`,
    });
  }
  checkedDomains.set(dns, errors);
  return errors;
}

/**
 * A hostname Envoy can resolve, lower-cased without its trailing dot; undefined unless every label
 * is an RFC 1123 label (letters, digits, inner hyphens, 1-63 characters) and the name fits 253.
 */
export function dnsName(text: string): string | undefined {
  const name = text.toLowerCase().replace(/\.$/, "");
  const label = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
  return name.length > 0 && name.length <= 253 && name.split(".").every((l) => label.test(l)) ? name : undefined;
}
