// The incremental model equals the whole one: on random sequences of keyed changes to three Infras
// (two on one NAD; the third also on a ClusterUserDefinedNetwork of that NAD's name, or both forms at once), attachments moving between them, claiming one HostedCluster from two Infras,
// one domain twice on one Infra and across two, a missing or invalid Infra, workers appearing, moving and colliding, VMIs,
// Services, Namespaces and HostedClusters' endpoints coming and going, incumbents and DHCP tables fed back as the pipeline
// does (or incumbents drawn at random, or none) and the clock moving past grace periods —
// buildIncremental() after every step is exactly build() of the whole state, and build() of a deep
// copy (whose objects no memo has seen). And the rule the incremental build relies on to skip a
// claim fed back as it was won: building with a build's own winners as incumbents changes nothing.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Infra, InfraClusterAttachment } from "../../../src/api/schema.js";
import type { HostedCluster } from "../../../src/api/external.js";
import { build } from "../../../src/model/build.js";
import { changesBetween } from "../../../src/model/incremental/infras-read.js";
import {
  buildIncremental,
  inputsOf,
  patchGathered,
  subState,
  type BuildInputs,
  type IncrementalBuild,
} from "../../../src/model/incremental/rebuild.js";
import { EMPTY_STATE, type BuildResult, type ClusterState, type InvalidObject } from "../../../src/model/types.js";
import { attachment, infra, machine, namespace, nodePool, NS, service, vmi } from "../../support/fixtures.js";

type Obj =
  ClusterState[keyof Omit<
    ClusterState,
    "invalid" | "unknownFields" | "incumbents" | "dhcpAllocations" | "now"
  >] extends Iterable<infer O>
    ? O
    : never;
type ListName =
  "infras" | "attachments" | "hostedClusters" | "nodePools" | "machines" | "vmis" | "services" | "namespaces";

/** One key of the universe: which list it lives in and the versions it can take. */
interface Slot {
  readonly list: ListName;
  readonly versions: readonly Obj[];
}

const HCS = ["h1", "h2", "h3", "shared"];
const cp = (hc: string): string => `${NS}-${hc}`;
const hcAt = (i: number): string => HCS[i % 3] ?? "h1";

function hostedClusterObject(name: string, rest: Pick<HostedCluster, "spec" | "status">): HostedCluster {
  return {
    apiVersion: "hypershift.openshift.io/v1beta1",
    kind: "HostedCluster",
    metadata: { name, namespace: NS },
    ...rest,
  };
}

function att(name: string, opts: Parameters<typeof attachment>[1]): InfraClusterAttachment {
  return attachment(name, opts);
}

const INFRA_C = infra("c", {
  networkConfig: { cidr: "203.0.113.0/24", gateway: "203.0.113.1" },
  infraComponents: {
    dhcp: { serverIP: "203.0.113.2", rangeStart: "203.0.113.100", rangeEnd: "203.0.113.199" },
    dns: { serverIP: "203.0.113.3" },
    proxy: { serverIP: "203.0.113.4" },
  },
});

/**
 * The same Infra on a localnet ClusterUserDefinedNetwork named vlan200: a VMI on any namespace's
 * vlan200 NAD is then on it (the incremental index keys a CUDN by name alone).
 */
function cudnOf(i: Infra): Infra {
  const networkConfig = {
    ...i.spec.networkConfig,
    attachment: { kind: "ClusterUserDefinedNetwork" as const, name: "vlan200", namespace: "nets" },
    topology: "Localnet" as const,
    role: "Secondary" as const,
    exposure: "Layer2" as const,
    ipam: "DHCP" as const,
  };
  delete networkConfig.networkAttachmentDefinition;
  return { ...i, spec: { ...i.spec, networkConfig } };
}

const SLOTS: readonly Slot[] = [
  {
    list: "infras",
    versions: [
      infra("a", { infraComponents: { proxy: { internalProxyService: "proxy-int.proxies" } } }),
      infra("a", { infraComponents: { proxy: { serverIP: "192.0.2.5", internalProxyService: "proxy-int.proxies" } } }),
      infra("a", { infraComponents: { dhcp: { enabled: false } } }),
    ],
  },
  {
    list: "infras",
    versions: [
      infra("b", {
        networkConfig: { cidr: "198.51.100.0/24", gateway: "198.51.100.1", networkAttachmentDefinition: "vlan200" },
        infraComponents: {
          dhcp: { serverIP: "198.51.100.2", rangeStart: "198.51.100.100", rangeEnd: "198.51.100.199" },
          dns: { serverIP: "198.51.100.3" },
          proxy: { serverIP: "198.51.100.4" },
        },
      }),
    ],
  },
  {
    list: "infras",
    versions: [
      INFRA_C,
      cudnOf(INFRA_C),
      {
        ...INFRA_C,
        spec: {
          ...INFRA_C.spec,
          networkConfig: { ...cudnOf(INFRA_C).spec.networkConfig, networkAttachmentDefinition: "vlan300" },
        },
      },
    ],
  },
  ...["x1", "x2", "x3", "x4"].map((name, i): Slot => ({
    list: "attachments",
    versions: [
      att(name, { infra: "a", hc: hcAt(i), created: `2026-01-0${i + 1}T00:00:00Z` }),
      att(name, { infra: "b", hc: hcAt(i), created: `2026-01-0${i + 1}T00:00:00Z` }),
      att(name, { infra: "c", hc: hcAt(i + 1) }),
      att(name, { infra: i % 2 === 0 ? "a" : "b", hc: "shared", created: `2026-02-0${4 - i}T00:00:00Z` }),
      // One domain claimed on two Infras (a and b), and twice on each: the oldest claim wins everywhere.
      att(name, { infra: i % 2 === 0 ? "a" : "b", hc: hcAt(i), cluster: "dup" }),
      att(name, { infra: "ghost", hc: hcAt(i) }),
      att(name, {
        infra: "a",
        hc: hcAt(i),
        spec: { appsIngress: { enabled: true, metallb: { ipAddressPoolRange: "192.0.2.120-192.0.2.125" } } },
      }),
    ],
  })),
  // HostedClusters whose endpoints move (src/model/endpoints.ts): their attachments' Infras rebuild.
  ...["h1", "shared"].map((hc): Slot => ({
    list: "hostedClusters",
    versions: [
      hostedClusterObject(hc, {}),
      hostedClusterObject(hc, { status: { ignitionEndpoint: `ignition-server-${cp(hc)}.apps.mgmt.example.net` } }),
      hostedClusterObject(hc, {
        spec: {
          services: [
            {
              service: "Konnectivity",
              servicePublishingStrategy: { type: "Route", route: { hostname: `k-${hc}.example.net` } },
            },
          ],
        },
      }),
    ],
  })),
  ...HCS.map((hc): Slot => ({ list: "namespaces", versions: [namespace(cp(hc))] })),
  ...HCS.map((hc): Slot => ({
    list: "nodePools",
    versions: [nodePool(hc), nodePool(hc, `${hc}-workers`, "AWS"), nodePool("h1", `${hc}-workers`)],
  })),
  ...HCS.flatMap((hc, i) =>
    [0, 1].map((w): Slot => ({
      list: "machines",
      versions: [
        machine(cp(hc), `${hc}-${w}`, `${hc}-workers`, [`192.0.2.${10 + i * 4 + w}`]),
        machine(cp(hc), `${hc}-${w}`, `${hc}-workers`, [`198.51.100.${10 + i * 4 + w}`]),
        machine(cp(hc), `${hc}-${w}`, `${hc}-workers`, ["192.0.2.50", "203.0.113.50"]),
        machine(cp(hc), `${hc}-${w}`, `${hc}-workers`, []),
      ],
    })),
  ),
  ...HCS.map((hc, i): Slot => ({
    list: "services",
    versions: [
      service(cp(hc), "kube-apiserver", `10.96.${i}.1`, [6443]),
      service(cp(hc), "kube-apiserver", "None", [6443]),
      service(cp(hc), "kube-apiserver", `10.96.${i}.9`, [443]),
    ],
  })),
  {
    list: "services",
    versions: [service("proxies", "proxy-int", "172.30.9.10", [443]), service("proxies", "proxy-int", "None", [443])],
  },
  ...["h1-0", "h2-1", "stray"].map((name, i): Slot => ({
    list: "vmis",
    versions: [
      vmi(name === "stray" ? NS : cp(name.slice(0, 2)), name, `02:00:00:00:00:0${i}`, `192.0.2.${60 + i}`),
      vmi(name === "stray" ? NS : cp(name.slice(0, 2)), name, `02:00:00:00:00:0${i}`),
      vmi(name === "stray" ? NS : cp(name.slice(0, 2)), name, "02:00:00:00:00:09", `192.0.2.${70 + i}`),
      vmi(name === "stray" ? NS : cp(name.slice(0, 2)), name, `02:00:00:00:01:0${i}`, "198.51.100.77", {
        nad: `${NS}/vlan200`,
      }),
    ],
  })),
];

const INVALID: readonly (readonly InvalidObject[])[] = [
  [],
  [{ ref: { kind: "Infra", namespace: NS, name: "ghost" }, errors: [{ field: "spec.networkConfig", message: "bad" }] }],
  [{ ref: { kind: "InfraClusterAttachment", namespace: NS, name: "x9" }, errors: [{ field: "spec", message: "bad" }] }],
];

const HOUR = 3_600_000;
const NOWS = [1e12, 1e12 + HOUR / 2, 1e12 + 2 * HOUR, 1e12 + 5 * HOUR];

interface Step {
  /** Per slot: absent (-1) or a version, modulo the slot's versions. */
  readonly assign: readonly (number | null)[];
  readonly invalid: number;
  /** The incumbents: none, the previous build's claims (as the pipeline), or drawn from `holders`. */
  readonly incumbents: "none" | "fed" | "random";
  /** Per claim (by position), the incumbent a random draw names: an attachment x1–x4, or none. */
  readonly holders: readonly number[];
  readonly now: number;
}

const HOLDERS = ["x1", "x2", "x3", "x4"].map((name) => `${NS}/${name}`);
const holders = fc.array(fc.nat({ max: HOLDERS.length }), { minLength: 12, maxLength: 12 });

const step: fc.Arbitrary<Step> = fc.record({
  // Mostly null (unchanged from the previous step): a step changes two or three objects.
  assign: fc.array(
    fc.oneof({ arbitrary: fc.constant(null), weight: 12 }, { arbitrary: fc.integer({ min: -1, max: 6 }), weight: 1 }),
    {
      minLength: SLOTS.length,
      maxLength: SLOTS.length,
    },
  ),
  invalid: fc.nat({ max: INVALID.length - 1 }),
  incumbents: fc.constantFrom("none", "fed", "random"),
  holders,
  now: fc.nat({ max: NOWS.length - 1 }),
});

/** The first state: every slot drawn. */
const first: fc.Arbitrary<Step> = fc.record({
  assign: fc.array(fc.integer({ min: -1, max: 6 }), { minLength: SLOTS.length, maxLength: SLOTS.length }),
  invalid: fc.nat({ max: INVALID.length - 1 }),
  incumbents: fc.constantFrom("none", "random"),
  holders,
  now: fc.nat({ max: NOWS.length - 1 }),
});

function stateOf(assign: readonly number[], inputs: BuildInputs): ClusterState {
  const lists: Record<ListName, Obj[]> = {
    infras: [],
    attachments: [],
    hostedClusters: [],
    nodePools: [],
    machines: [],
    vmis: [],
    services: [],
    namespaces: [],
  };
  SLOTS.forEach((slot, i) => {
    const v = assign[i] ?? -1;
    if (v >= 0) lists[slot.list].push(slot.versions[v % slot.versions.length] as Obj);
  });
  return { ...(lists as unknown as ClusterState), ...(inputs as object) };
}

function tables(result: BuildResult): NonNullable<ClusterState["dhcpAllocations"]> {
  return new Map(result.topologies.flatMap((t) => (t.dhcp === undefined ? [] : [[t.dhcp.name, t.dhcp.allocations]])));
}

describe("incremental model build", () => {
  it("equals build() of the whole state after every step of a random change sequence", () => {
    fc.assert(
      fc.property(first, fc.array(step, { minLength: 1, maxLength: 25 }), (start, steps) => {
        let assign: number[] = SLOTS.map(() => -1);
        steps = [{ ...start, assign: start.assign }, ...steps];
        let previousState: ClusterState = EMPTY_STATE;
        let incremental: IncrementalBuild | undefined;
        for (const s of steps) {
          assign = assign.map((v, i) => s.assign[i] ?? v);
          const fed = incremental?.result;
          const inputs: BuildInputs = {
            invalid: INVALID[s.invalid],
            now: NOWS[s.now],
            ...(s.incumbents === "fed" && fed !== undefined
              ? { incumbents: fed.claims, dhcpAllocations: tables(fed) }
              : {}),
          };
          const drawn = stateOf(assign, inputs);
          const state =
            s.incumbents === "random" ? { ...drawn, incumbents: randomIncumbents(drawn, s.holders) } : drawn;
          incremental = buildIncremental(incremental, changesBetween(previousState, state), inputsOf(state));
          expect(plain(incremental.result)).toEqual(plain(build(state)));
          // Cold: new objects everywhere, so no part derived on an earlier step can be taken.
          expect(plain(incremental.result)).toEqual(plain(build(cold(state))));
          // The worker claims, kept per attachment, against the addresses each served attachment
          // reports (no memo on either side of this comparison shares the claims' maps).
          expect(workerClaimsOf(incremental.result)).toEqual(workerClaimsOf(build(cold(state))));
          expect(workerClaimsOf(incremental.result)).toEqual(claimsFromAttachments(incremental.result));
          previousState = state;
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe("the sub-state of a step that rebuilds the same Infras", () => {
  it("patched from the previous one and the changes, holds exactly the objects gathered again", () => {
    // Infra and attachment slots mostly left as they are, so most steps rebuild the Infras the
    // step before rebuilt (as a big VLAN's every change does) and the patch is taken.
    const frozen = new Set(
      SLOTS.flatMap((slot, i) => (slot.list === "infras" || slot.list === "attachments" ? [i] : [])),
    );
    let patched = 0;
    fc.assert(
      fc.property(first, fc.array(fc.tuple(step, fc.boolean()), { minLength: 1, maxLength: 25 }), (start, steps) => {
        let assign: number[] = start.assign.map((v) => v ?? -1);
        let previousState = stateOf(assign, {});
        let incremental = buildIncremental(undefined, changesBetween(EMPTY_STATE, previousState), {});
        for (const [s, keepScope] of steps) {
          assign = assign.map((v, i) => (keepScope && frozen.has(i) ? v : (s.assign[i] ?? v)));
          const drawn = stateOf(assign, { now: NOWS[s.now], invalid: INVALID[s.invalid] });
          // Incumbents come and go (an input the patch must take from this step, not the last).
          const state =
            s.incumbents === "random" ? { ...drawn, incumbents: randomIncumbents(drawn, s.holders) } : drawn;
          const changes = changesBetween(previousState, state);
          const next = buildIncremental(incremental, changes, inputsOf(state));
          const patch = patchGathered(incremental.gathered, next.rebuilt, changes, inputsOf(state));
          if (patch !== undefined) {
            patched += 1;
            expect(bySet(patch.state)).toEqual(bySet(subState(next.index, next.rebuilt, inputsOf(state))));
          }
          // What the step built from (patched or gathered) is what gathering gives.
          expect(bySet(next.gathered?.state ?? EMPTY_STATE)).toEqual(
            bySet(subState(next.index, next.rebuilt, inputsOf(state))),
          );
          incremental = next;
          previousState = state;
        }
      }),
      { numRuns: 100 },
    );
    // Not vacuous: many steps took the patch (a step rebuilding other Infras than the last cannot).
    expect(patched).toBeGreaterThan(50);
  });

  it("is not patched when an Infra or an attachment changed, or other Infras are rebuilt", () => {
    const assign = SLOTS.map((_, i) => i % 3);
    const state = stateOf(assign, {});
    const built = buildIncremental(undefined, changesBetween(EMPTY_STATE, state), {});
    const a = state.infras[0];
    const x = state.attachments[0];
    if (a === undefined || x === undefined) throw new Error("the universe has no Infra or attachment");
    const keys = built.rebuilt;
    expect(patchGathered(built.gathered, keys, [{ kind: "Infra", before: a, after: a }], {})).toBeUndefined();
    expect(
      patchGathered(built.gathered, keys, [{ kind: "InfraClusterAttachment", before: x, after: x }], {}),
    ).toBeUndefined();
    expect(patchGathered(built.gathered, new Set([...keys].slice(1)), [], {})).toBeUndefined();
    expect(patchGathered(undefined, keys, [], {})).toBeUndefined();
    expect(patchGathered(built.gathered, keys, [], {})).toBeDefined();
  });
});

describe("the sub-state patch, by key", () => {
  it("replaces an object the change names by a copy (not the object the index holds), and adds none twice", () => {
    const state = stateOf(
      SLOTS.map((_, i) => i % 2),
      {},
    );
    const built = buildIncremental(undefined, changesBetween(EMPTY_STATE, state), {});
    const gathered = built.gathered;
    const held = gathered?.state.machines.at(0);
    if (gathered === undefined || held === undefined) throw new Error("no Machine was gathered");
    const moved = { ...held, status: { addresses: [{ type: "InternalIP", address: "192.0.2.99" }] } } as typeof held;
    const copy = structuredClone(held);
    const index = buildIncremental(built, [{ kind: "Machine", before: held, after: moved }], {}).index;
    for (const change of [
      { kind: "Machine", before: copy, after: moved },
      { kind: "Machine", before: undefined, after: moved },
    ] as const) {
      const patch = patchGathered(gathered, built.rebuilt, [change], {});
      expect(patch?.state.machines).toContain(moved);
      expect(patch?.state.machines).not.toContain(held);
      expect(bySet(patch?.state ?? EMPTY_STATE)).toEqual(bySet(subState(index, built.rebuilt, {})));
    }
  });
});

/** Each list of a sub-state as the set of its objects (sorted by key; build() reads them as sets). */
function bySet(state: ClusterState): Record<string, unknown> {
  const key = (o: { metadata: { namespace?: string; name: string } }): string =>
    `${o.metadata.namespace ?? ""}/${o.metadata.name}`;
  const lists = [
    "infras",
    "attachments",
    "hostedClusters",
    "nodePools",
    "machines",
    "vmis",
    "services",
    "namespaces",
  ] as const;
  const out: Record<string, unknown> = {
    invalid: state.invalid,
    incumbents: state.incumbents,
    dhcpAllocations: state.dhcpAllocations,
    now: state.now,
  };
  for (const l of lists) {
    const objects: readonly { metadata: { namespace?: string; name: string } }[] = [...state[l]];
    // Identity, not content: the patch must hold the very objects the index holds.
    const sorted = [...objects].sort((p, q) => (key(p) < key(q) ? -1 : key(p) > key(q) ? 1 : 0));
    out[l] = sorted.map((o) => [key(o), o]);
    expect(new Set(objects).size).toBe(objects.length);
  }
  return out;
}

describe("incumbents", () => {
  it("building with a build's own winners as incumbents picks the same winners and says the same", () => {
    fc.assert(
      fc.property(first, (s) => {
        const drawn = stateOf(
          s.assign.map((v) => v ?? -1),
          { invalid: INVALID[s.invalid], now: NOWS[s.now] },
        );
        const state = s.incumbents === "random" ? { ...drawn, incumbents: randomIncumbents(drawn, s.holders) } : drawn;
        const once = build(state);
        const again = build({ ...state, incumbents: new Map(once.claims) });
        expect(plain(again)).toEqual(plain(once));
      }),
      { numRuns: 300 },
    );
  });
});

/**
 * Incumbents drawn for the claims the state makes (as a build without incumbents finds them) and
 * for every HostedCluster: each names one of the attachments x1–x4 (claimant or not) or none.
 */
function randomIncumbents(state: ClusterState, draw: readonly number[]): Map<string, string> {
  const keys = new Set([...build(state).claims.keys(), ...HCS.map((hc) => `hostedCluster:${NS}/${hc}`)]);
  const out = new Map<string, string>();
  [...keys].sort().forEach((key, i) => {
    const holder = HOLDERS[draw[i % draw.length] ?? HOLDERS.length];
    if (holder !== undefined) out.set(key, holder);
  });
  return out;
}

/** The worker claims of a build, sorted. */
function workerClaimsOf(result: BuildResult): [string, string][] {
  return [...result.claims].filter(([k]) => k.startsWith("worker:")).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** The worker claims the attachment models say: each served attachment holds its addresses. */
function claimsFromAttachments(result: BuildResult): [string, string][] {
  const out: [string, string][] = [];
  for (const t of result.topologies)
    for (const a of t.attachments)
      for (const addr of a.workerAddresses)
        out.push([`worker:${t.infra.namespace}/${t.infra.name}:${addr}`, `${a.ref.namespace}/${a.ref.name}`]);
  return out.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** A deep copy of the state (the claims view fed back as incumbents becomes a plain Map first). */
function cold(state: ClusterState): ClusterState {
  const incumbents = state.incumbents === undefined ? {} : { incumbents: new Map(state.incumbents) };
  return structuredClone({ ...state, ...incumbents });
}

/** The claims as a plain Map (the same entries; toEqual compares classes: a view, LayeredClaims). */
function plain(result: BuildResult): BuildResult {
  return { ...result, claims: new Map(result.claims) };
}
