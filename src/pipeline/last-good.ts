// Last good per object (docs/reference.md#last-good): the decoded state plus the memory of every Infra's and
// attachment's last accepted version → the state to build from (an object whose current version
// is refused is replaced by its last accepted one), the model built from it, and the new memory.
// Pure; the caller injects the time and keeps the memory between renderings.
import { groupBy } from "../util/group.js";
import type { Infra, InfraClusterAttachment } from "../api/schema.js";
import { changesBetween, type ObjectChange } from "../model/incremental/infras-read.js";
import { buildFrom, buildIncremental, inputsOf, type IncrementalBuild } from "../model/incremental/rebuild.js";
import { compareProblems, refKey } from "../model/problems.js";
import { patchMap, REMOVED, type Removed } from "../util/overlay-map.js";
import {
  EMPTY_STATE,
  type BuildResult,
  type ClusterState,
  type ObjectRef,
  type Problem,
  type Topology,
} from "../model/types.js";

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
  /** The incremental build of `state`, which the next step continues from. */
  readonly build: IncrementalBuild;
  /** Infras built again by this step (every Infra on the first). */
  readonly rebuilt: ReadonlySet<string>;
  /** refKeys of the refused versions and of the objects with an error: the next step looks at them again. */
  readonly watched: ReadonlySet<string>;
}

/** The step before: its input (the decoded state), what it built, and the keyed changes since that input. */
export interface PreviousStep {
  readonly input: ClusterState;
  readonly built: LastGoodBuild;
  /** From `input` to the new state; computed by object identity when not given. */
  readonly changes?: readonly ObjectChange[] | undefined;
}

type Kind = "Infra" | "InfraClusterAttachment";
type Obj = Infra | InfraClusterAttachment;

interface Refusal {
  readonly acceptedAt: string;
  readonly problems: Problem[];
}

/** Rounds of replacement: reverting one object can only reveal errors in objects that depend on it. */
const MAX_ROUNDS = 3;

/**
 * The state with refused versions replaced, and its model. After `previous`, each round is an
 * incremental build (src/model/incremental/rebuild.ts) of what changed since the previous round's state:
 * the result is the same as building the whole state each round, for the Infras changes feed.
 */
export function buildWithLastGood(
  state: ClusterState,
  memory: LastGood,
  now: string,
  previous?: PreviousStep,
): LastGoodBuild {
  const remembered = (kind: Kind, key: string): Accepted<Obj> | undefined =>
    kind === "Infra" ? memory.infras.get(key) : memory.attachments.get(key);
  const refused = new Map<string, Refusal>();
  // The input's own lists while nothing is replaced: an unchanged list stays the same array, which
  // tells the next step (changesBetween) that none of its objects changed without looking at them.
  let infras: readonly Infra[] = state.infras;
  let attachments: readonly InfraClusterAttachment[] = state.attachments;

  // A version the schema refused: its last accepted one takes its place.
  const kept = (state.invalid ?? []).filter((inv) => {
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
    if (kind === "Infra") infras = [...infras, last.object as Infra];
    else attachments = [...attachments, last.object as InfraClusterAttachment];
    return false;
  });
  const invalid = kept.length === (state.invalid ?? []).length ? (state.invalid ?? kept) : kept;

  const stateOf = (): ClusterState => ({ ...state, infras, attachments, invalid, incumbents: memory.incumbents });
  let current = stateOf();
  const inputs = inputsOf(current);
  let step =
    previous === undefined
      ? buildFrom(current)
      : buildIncremental(previous.built.build, firstChanges(previous, state, current), inputs);
  const rebuilt = new Set(step.rebuilt);
  // A version the model refused (an error on the object itself): the same, when an accepted one differs.
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const errors = errorsByObject(step.result.problems);
    if (errors.size === 0) break;
    const reverts = new Map<string, Obj>();
    const changes: ObjectChange[] = [];
    const byKey = new Map<string, [Kind, Obj]>();
    for (const o of infras) byKey.set(refKey(refOf("Infra", o)), ["Infra", o]);
    for (const o of attachments) byKey.set(refKey(refOf("InfraClusterAttachment", o)), ["InfraClusterAttachment", o]);
    for (const [key, mine] of errors) {
      const [kind, o] = byKey.get(key) ?? [];
      if (kind === undefined || o === undefined) continue;
      const last = remembered(kind, key);
      if (last === undefined || refused.has(key) || sameSpec(last.object, o)) continue;
      refused.set(key, { acceptedAt: last.acceptedAt, problems: mine });
      const reverted = { ...o, spec: last.object.spec } as Obj;
      reverts.set(key, reverted);
      changes.push({ kind, before: o, after: reverted } as ObjectChange);
    }
    if (reverts.size === 0) break;
    const revert = <T extends Obj>(kind: Kind, list: readonly T[]): T[] =>
      list.map((o) => (reverts.get(refKey(refOf(kind, o))) as T | undefined) ?? o);
    infras = revert("Infra", infras);
    attachments = revert("InfraClusterAttachment", attachments);
    current = stateOf();
    step = buildIncremental(step, changes, inputs);
    for (const k of step.rebuilt) rebuilt.add(k);
  }

  let result = step.result;
  if (refused.size > 0) {
    const problems = [...step.result.problems];
    const served = servedKeys(step.result);
    for (const [key, r] of refused) {
      const object = r.problems[0]?.object;
      if (object === undefined) continue;
      // The model says the new version is not served; what is served is the last good one, so the
      // problem says only what is wrong with this version, and the line below what is served — unless
      // the last good one is not served either (an attachment whose Infra is gone): then the model's
      // own problems about it say why, and nothing claims it is served.
      const still = served.has(key);
      // Both versions may be wrong in the same way (the same missing Infra): said once.
      const said = new Set(problems.filter((p) => refKey(p.object) === key).map(problemLine));
      const own = (still ? r.problems.map(withoutNotServed) : r.problems).filter((p) => !said.has(problemLine(p)));
      problems.push(...own, {
        object,
        field: "",
        reason: "ServingLastGood",
        severity: "warning",
        message: still
          ? `this version is not applied; the configuration accepted at ${r.acceptedAt} is still served`
          : `this version is not applied; the configuration accepted at ${r.acceptedAt} is not served either`,
      });
    }
    result = { ...step.result, problems: problems.sort(compareProblems) };
  }
  const errors = errorsByObject(result.problems);
  const watched = new Set([...refused.keys(), ...errors.keys()]);
  const served = servedKeys(result);
  const candidates =
    previous !== undefined && previous.built.memory === memory ? touched(previous, state, watched) : undefined;
  return {
    state: current,
    result,
    memory: remember(state, result.claims, memory, { refused, errors, served }, now, candidates),
    build: step,
    rebuilt,
    watched,
  };
}

function problemLine(p: Problem): string {
  return JSON.stringify([p.field, p.reason, p.message]);
}

/** Whether a build serves an Infra or attachment, asked by refKey. */
interface Served {
  has(key: string): boolean;
}

/**
 * The Infras a build serves and the attachments it serves in them. A step asks only for the keys
 * it touched, mostly a few: each topology's keys are listed once and kept while the topology is the
 * same object (an incremental build keeps every Infra it did not rebuild), and a few questions look
 * through them. Many questions (a whole memory made again) get the union, made once.
 */
function servedKeys(result: BuildResult): Served {
  let all: Set<string> | undefined;
  let asked = 0;
  return {
    has: (key) => {
      if (all === undefined && ++asked > FEW_QUESTIONS) {
        all = new Set();
        for (const t of result.topologies) for (const k of servedIn(t)) all.add(k);
      }
      return all === undefined ? result.topologies.some((t) => servedIn(t).has(key)) : all.has(key);
    },
  };
}

const FEW_QUESTIONS = 64;

const servedByTopology = new WeakMap<Topology, ReadonlySet<string>>();

function servedIn(t: Topology): ReadonlySet<string> {
  let keys = servedByTopology.get(t);
  if (keys === undefined) {
    const out = new Set([refKey(t.infra)]);
    for (const a of t.attachments) if (a.served) out.add(refKey(a.ref));
    keys = out;
    servedByTopology.set(t, keys);
  }
  return keys;
}

/**
 * The changes from the previous step's state to this round-0 state: our kinds by identity against
 * what was built (a version reverted then is a change now, tried again), the other kinds as the
 * watcher reported them.
 */
function firstChanges(previous: PreviousStep, input: ClusterState, current: ClusterState): ObjectChange[] {
  const built = previous.built.state;
  // Nothing replaced then or now: what was built and what is built are the inputs' own lists, whose
  // changes the watcher reported.
  const asInput =
    built.infras === previous.input.infras &&
    built.attachments === previous.input.attachments &&
    current.infras === input.infras &&
    current.attachments === input.attachments;
  const ours =
    (asInput ? reportedOurs(previous) : undefined) ??
    changesBetween(
      { ...EMPTY_STATE, infras: built.infras, attachments: built.attachments },
      { ...EMPTY_STATE, infras: current.infras, attachments: current.attachments },
    );
  const theirs = (previous.changes ?? changesBetween(previous.input, input)).filter(
    (c) => c.kind !== "Infra" && c.kind !== "InfraClusterAttachment",
  );
  return [...ours, ...theirs];
}

/**
 * The reported changes of Infras and attachments from the previous step's input to this one
 * (comparing their lists by identity would give the same), or undefined when none were reported.
 */
function reportedOurs(previous: PreviousStep): ObjectChange[] | undefined {
  return previous.changes?.filter((c) => c.kind === "Infra" || c.kind === "InfraClusterAttachment");
}

/**
 * The refKeys whose memory may differ from the previous step's: Infras and attachments that
 * changed, appeared or went, and those refused or in error now or then. Any other one is the same
 * object, served as before, so its remembered version stays. A version the schema refuses needs no
 * look of its own: with a remembered version it is refused (watched), without one there is nothing
 * to remember, and nothing is remembered for it while it stays refused.
 */
function touched(previous: PreviousStep, input: ClusterState, watched: ReadonlySet<string>): Set<string> {
  const out = new Set<string>([...watched, ...previous.built.watched]);
  const ours =
    reportedOurs(previous) ??
    changesBetween(
      { ...EMPTY_STATE, infras: previous.input.infras, attachments: previous.input.attachments },
      { ...EMPTY_STATE, infras: input.infras, attachments: input.attachments },
    );
  for (const c of ours) {
    const o = c.after ?? c.before;
    if (o !== undefined) out.add(refKey(refOf(c.kind as Kind, o as Obj)));
  }
  return out;
}

/**
 * The new memory: every current version served without an error, dated when it was first
 * accepted. With `candidates`, only those keys are looked at (the others keep their entry).
 */
function remember(
  state: ClusterState,
  incumbents: ReadonlyMap<string, string>,
  memory: LastGood,
  verdict: {
    readonly refused: ReadonlyMap<string, unknown>;
    readonly errors: ReadonlyMap<string, unknown>;
    /** Served as it is: only such a version becomes the last good (one pending on another object is not). */
    readonly served: Served;
  },
  now: string,
  candidates: ReadonlySet<string> | undefined,
): LastGood {
  const next = <T extends Obj>(
    kind: Kind,
    list: readonly T[],
    old: ReadonlyMap<string, Accepted<T>>,
  ): ReadonlyMap<string, Accepted<T>> => {
    const mine = candidates === undefined ? undefined : [...candidates].filter((k) => k.startsWith(`${kind}/`));
    // Nothing of this kind to look at: the memory stays the same map.
    if (mine?.length === 0) return old;
    const current =
      mine === undefined ? new Map(list.map((o) => [refKey(refOf(kind, o)), o])) : objectsByKey(kind, list, mine);
    const present = new Set([
      ...current.keys(),
      ...(state.invalid ?? []).filter((i) => i.ref.kind === kind).map((i) => refKey(i.ref)),
    ]);
    const keys = mine ?? present;
    // A few keys looked at: the old memory patched at them (a persistent map), not copied.
    const out = new Map<string, Accepted<T> | Removed>();
    for (const key of keys) {
      const o = current.get(key);
      const last = old.get(key);
      if (o !== undefined && !verdict.refused.has(key) && !verdict.errors.has(key) && verdict.served.has(key)) {
        if (last?.object !== o)
          out.set(key, {
            object: o,
            acceptedAt: last !== undefined && sameSpec(last.object, o) ? last.acceptedAt : now,
          });
        else if (candidates === undefined) out.set(key, last);
      } else if (present.has(key) && last !== undefined) {
        // Refused now, or not served for reasons outside it (its Infra invalid or gone): the accepted
        // version stays remembered — the new one was never checked as a whole (a claimed domain).
        if (candidates === undefined) out.set(key, last);
      } else if (candidates !== undefined && last !== undefined) out.set(key, REMOVED);
    }
    return candidates === undefined ? (out as Map<string, Accepted<T>>) : patchMap(old, out);
  };
  return {
    infras: next("Infra", state.infras, memory.infras),
    attachments: next("InfraClusterAttachment", state.attachments, memory.attachments),
    incumbents,
  };
}

/**
 * The objects of `list` that may have these refKeys, by refKey: a step looks at a few keys of a
 * list of thousands, so an object is keyed only when its name ends one of them. (A name with a "/"
 * is refused, InvalidName, so it is never remembered and its absence here changes nothing.)
 */
function objectsByKey<T extends Obj>(kind: Kind, list: readonly T[], keys: readonly string[]): Map<string, T> {
  const out = new Map<string, T>();
  const missed: string[] = [];
  for (const key of keys) {
    const o = sortedFind(list, key.slice(kind.length + 1));
    if (o === undefined) missed.push(key);
    else out.set(key, o);
  }
  if (missed.length === 0) return out;
  // Not where the order puts it (gone, or a last good version appended after the sorted list).
  const names = new Set(missed.map((k) => k.slice(k.lastIndexOf("/") + 1)));
  for (const o of list) {
    if (!names.has(o.metadata.name)) continue;
    const key = refKey(refOf(kind, o));
    if (!out.has(key)) out.set(key, o);
  }
  return out;
}

/**
 * The object "<namespace>/<name>" of a sorted list, if it is where the order puts it: serve's lists
 * are in (namespace, name) order, the operator's in the order of the whole key (they differ only
 * where one namespace is a prefix of another), so both places are tried.
 */
function sortedFind<T extends Obj>(list: readonly T[], key: string): T | undefined {
  const slash = key.indexOf("/");
  const [namespace, name] = [key.slice(0, slash), key.slice(slash + 1)];
  const byParts = (m: T["metadata"]): boolean =>
    m.namespace < namespace || (m.namespace === namespace && m.name < name);
  const byKey = (m: T["metadata"]): boolean => `${m.namespace}/${m.name}` < key;
  for (const before of [byParts, byKey]) {
    let [lo, hi] = [0, list.length];
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (before((list[mid] as T).metadata)) lo = mid + 1;
      else hi = mid;
    }
    const m = list[lo]?.metadata;
    if (m?.namespace === namespace && m.name === name) return list[lo];
  }
  return undefined;
}

function errorsByObject(problems: readonly Problem[]): ReadonlyMap<string, Problem[]> {
  let errors = errorsOf.get(problems);
  if (errors === undefined) {
    errors = groupBy(
      problems.filter((p) => p.severity === "error"),
      (p) => refKey(p.object),
    );
    errorsOf.set(problems, errors);
  }
  return errors;
}

/** errorsByObject's answer per problem list: a step that rebuilt nothing keeps the list, and asks again. */
const errorsOf = new WeakMap<readonly Problem[], ReadonlyMap<string, Problem[]>>();

function refOf(kind: Kind, o: Obj): ObjectRef {
  return { kind, namespace: o.metadata.namespace, name: o.metadata.name };
}

function sameSpec(a: Obj, b: Obj): boolean {
  return JSON.stringify(a.spec) === JSON.stringify(b.spec);
}

/** A problem of a refused version without the model's "…is not served" clause (last good is served). */
function withoutNotServed(p: Problem): Problem {
  const message = p.message.replace(/; this (?:attachment|object|Infra) is not served(?: while that one exists)?$/, "");
  return message === p.message ? p : { ...p, message };
}
