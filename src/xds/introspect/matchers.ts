// CSDS node_matchers (envoy.type.matcher.v3.NodeMatcher) evaluated against a node's identity.
// oooi keeps no Envoy node metadata, so a StructMatcher in node_metadatas is matched against the
// identity fields {id, cluster, user_agent_name} instead: path ["cluster"] selects a node group.
import type { NodeIdentity } from "../client-status.js";

/** A request's matcher is malformed or uses a pattern this server does not evaluate. */
export class MatcherError extends Error {}

/** A decoded envoy.type.matcher.v3.StringMatcher (snake_case, unset fields absent). */
export interface StringMatcherObject {
  exact?: string;
  prefix?: string;
  suffix?: string;
  contains?: string;
  safe_regex?: { regex?: string };
  ignore_case?: boolean;
  [other: string]: unknown;
}

/** A decoded envoy.type.matcher.v3.NodeMatcher. */
export interface NodeMatcherObject {
  node_id?: StringMatcherObject | null;
  node_metadatas?: readonly StructMatcherObject[];
}

/** A decoded envoy.type.matcher.v3.StructMatcher. */
export interface StructMatcherObject {
  path?: readonly { key?: string }[];
  value?: ValueMatcherObject | null;
}

/** A decoded envoy.type.matcher.v3.ValueMatcher. */
export interface ValueMatcherObject {
  null_match?: object;
  string_match?: StringMatcherObject;
  bool_match?: boolean;
  present_match?: boolean;
  [other: string]: unknown;
}

/** Whether `node` satisfies any of `matchers` (CSDS: OR semantics; none means every node). */
export function nodeMatchesAny(node: NodeIdentity, matchers: readonly NodeMatcherObject[] | undefined): boolean {
  if (matchers === undefined || matchers.length === 0) return true;
  return matchers.some((m) => nodeMatches(node, m));
}

/** Whether `node` satisfies one NodeMatcher: its node_id pattern and every metadata matcher. */
export function nodeMatches(node: NodeIdentity, m: NodeMatcherObject): boolean {
  if (m.node_id && !stringMatches(node.id, m.node_id)) return false;
  const identity: Record<string, string> = { id: node.id, cluster: node.cluster, user_agent_name: node.userAgent };
  return (m.node_metadatas ?? []).every((s) => structMatches(identity, s));
}

function structMatches(identity: Record<string, string>, s: StructMatcherObject): boolean {
  const keys = (s.path ?? []).map((p) => p.key ?? "");
  const value =
    keys.length === 1 && keys[0] !== undefined && Object.hasOwn(identity, keys[0]) ? identity[keys[0]] : undefined;
  const v = s.value;
  if (!v) throw new MatcherError("a StructMatcher needs a value matcher");
  if (v.present_match !== undefined) return (value !== undefined) === v.present_match;
  if (v.null_match !== undefined) return value === undefined;
  if (v.string_match !== undefined) return value !== undefined && stringMatches(value, v.string_match);
  if (v.bool_match !== undefined) return false;
  throw new MatcherError("only string_match, present_match and null_match are supported in node_metadatas");
}

/** envoy.type.matcher.v3.StringMatcher semantics (safe_regex must match the whole string). */
export function stringMatches(value: string, m: StringMatcherObject): boolean {
  const fold = m.ignore_case === true;
  const v = fold ? value.toLowerCase() : value;
  const p = (s: string): string => (fold ? s.toLowerCase() : s);
  if (m.exact !== undefined) return v === p(m.exact);
  if (m.prefix !== undefined) return v.startsWith(p(m.prefix));
  if (m.suffix !== undefined) return v.endsWith(p(m.suffix));
  if (m.contains !== undefined) return v.includes(p(m.contains));
  if (m.safe_regex !== undefined) {
    let re: RegExp;
    try {
      re = new RegExp(`^(?:${m.safe_regex.regex ?? ""})$`, "u");
    } catch (e) {
      throw new MatcherError(`invalid safe_regex: ${(e as Error).message}`);
    }
    return re.test(value);
  }
  throw new MatcherError("a StringMatcher needs exact, prefix, suffix, contains or safe_regex");
}
