// Last good per object (docs/reference.md#last-good): the decoded state plus the memory of every Infra's and
// attachment's last accepted version → the state to build from (an object whose current version
// is refused is replaced by its last accepted one), the model built from it, and the new memory.
// Pure; the caller injects the time and keeps the memory between renderings.
import { groupBy } from "../util/group.js";
import type { Infra, InfraClusterAttachment } from "../api/schema.js";
import { build } from "../model/build.js";
import { compareProblems, refKey } from "../model/problems.js";
import type { BuildResult, ClusterState, ObjectRef, Problem } from "../model/types.js";

/** A version that was served without an error, and since when (RFC 3339). */
export interface Accepted<T> {
  readonly object: T;
  readonly acceptedAt: string;
}

export interface LastGood {
  /** refKey → the last accepted Infra. */
  readonly infras: ReadonlyMap<string, Accepted<Infra>>;
  /** refKey → the last accepted attachment. */
  readonly attachments: ReadonlyMap<string, Accepted<InfraClusterAttachment>>;
  /** Claims held in the last rendering (ClusterState.incumbents). */
  readonly incumbents: ReadonlyMap<string, string>;
}

export const NO_LAST_GOOD: LastGood = { infras: new Map(), attachments: new Map(), incumbents: new Map() };

export interface LastGoodBuild {
  /** What the model was built from. */
  readonly state: ClusterState;
  /** Its problems include those of every refused version, and say what is served instead. */
  readonly result: BuildResult;
  readonly memory: LastGood;
}

type Kind = "Infra" | "InfraClusterAttachment";
type Obj = Infra | InfraClusterAttachment;

/** Rounds of replacement: reverting one object can only reveal errors in objects that depend on it. */
const MAX_ROUNDS = 3;

export function buildWithLastGood(state: ClusterState, memory: LastGood, now: string): LastGoodBuild {
  const remembered = (kind: Kind, key: string): Accepted<Obj> | undefined =>
    kind === "Infra" ? memory.infras.get(key) : memory.attachments.get(key);
  const refused = new Map<string, { acceptedAt: string; problems: Problem[] }>();
  let infras: Infra[] = [...state.infras];
  let attachments: InfraClusterAttachment[] = [...state.attachments];

  // A version the schema refused: its last accepted one takes its place.
  const invalid = (state.invalid ?? []).filter((inv) => {
    const kind = inv.ref.kind;
    const last = kind === "Infra" || kind === "InfraClusterAttachment" ? remembered(kind, refKey(inv.ref)) : undefined;
    if (last === undefined) return true;
    refused.set(refKey(inv.ref), {
      acceptedAt: last.acceptedAt,
      problems: inv.errors.map((e) => ({
        object: inv.ref,
        field: e.field,
        reason: "InvalidSpec",
        message: e.message,
        severity: "error",
      })),
    });
    if (kind === "Infra") infras.push(last.object as Infra);
    else attachments.push(last.object as InfraClusterAttachment);
    return false;
  });

  const stateOf = (): ClusterState => ({ ...state, infras, attachments, invalid, incumbents: memory.incumbents });
  let current = stateOf();
  let result = build(current);
  // A version the model refused (an error on the object itself): the same, when an accepted one differs.
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const errors = errorsByObject(result.problems);
    const revert = <T extends Obj>(kind: Kind, list: T[]): [T[], boolean] => {
      let changed = false;
      const next = list.map((o) => {
        const key = refKey(refOf(kind, o));
        const last = remembered(kind, key);
        const mine = errors.get(key);
        if (mine === undefined || last === undefined || refused.has(key) || sameSpec(last.object, o)) return o;
        refused.set(key, { acceptedAt: last.acceptedAt, problems: mine });
        changed = true;
        return { ...o, spec: last.object.spec };
      });
      return [next, changed];
    };
    const [nextInfras, infrasChanged] = revert("Infra", infras);
    const [nextAttachments, attachmentsChanged] = revert("InfraClusterAttachment", attachments);
    if (!infrasChanged && !attachmentsChanged) break;
    infras = nextInfras;
    attachments = nextAttachments;
    current = stateOf();
    result = build(current);
  }

  const problems = [...result.problems];
  for (const [, r] of refused) {
    const object = r.problems[0]?.object;
    if (object === undefined) continue;
    problems.push(...r.problems, {
      object,
      field: "",
      reason: "ServingLastGood",
      severity: "warning",
      message: `this version is not applied; the configuration accepted at ${r.acceptedAt} is still served`,
    });
  }
  result = { ...result, problems: problems.sort(compareProblems) };
  return { state: current, result, memory: remember(state, result, memory, refused, now) };
}

/** The new memory: every current version served without an error, dated when it was first accepted. */
function remember(
  state: ClusterState,
  result: BuildResult,
  memory: LastGood,
  refused: ReadonlyMap<string, unknown>,
  now: string,
): LastGood {
  const errors = errorsByObject(result.problems);
  const next = <T extends Obj>(
    kind: Kind,
    list: readonly T[],
    old: ReadonlyMap<string, Accepted<T>>,
  ): Map<string, Accepted<T>> => {
    const out = new Map<string, Accepted<T>>();
    const present = new Set([
      ...list.map((o) => refKey(refOf(kind, o))),
      ...(state.invalid ?? []).filter((i) => i.ref.kind === kind).map((i) => refKey(i.ref)),
    ]);
    for (const o of list) {
      const key = refKey(refOf(kind, o));
      const last = old.get(key);
      if (!refused.has(key) && !errors.has(key)) {
        out.set(key, { object: o, acceptedAt: last !== undefined && sameSpec(last.object, o) ? last.acceptedAt : now });
      }
    }
    // Refused now, or failing for reasons outside it: the accepted version stays remembered.
    for (const [key, last] of old) if (present.has(key) && !out.has(key)) out.set(key, last);
    return out;
  };
  return {
    infras: next("Infra", state.infras, memory.infras),
    attachments: next("InfraClusterAttachment", state.attachments, memory.attachments),
    incumbents: result.claims,
  };
}

function errorsByObject(problems: readonly Problem[]): Map<string, Problem[]> {
  return groupBy(
    problems.filter((p) => p.severity === "error"),
    (p) => refKey(p.object),
  );
}

function refOf(kind: Kind, o: Obj): ObjectRef {
  return { kind, namespace: o.metadata.namespace, name: o.metadata.name };
}

function sameSpec(a: Obj, b: Obj): boolean {
  return JSON.stringify(a.spec) === JSON.stringify(b.spec);
}
