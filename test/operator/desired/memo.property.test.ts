// The desired state patched from the last one (DesiredMemo visits only the Infras whose inputs
// moved) against the desired state computed from nothing, after every step of random runs of the
// changes a watch brings: Infras declared, removed, edited and observed without their uid yet, NAD
// configs edited or deleted, workers moving, attachments terminating, model problems about an
// attachment, new operator settings (one refusing every proxy). Unchanged inputs keep their objects, as the watch keeps them.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Infra, InfraClusterAttachment } from "../../../src/api/schema.js";
import type { ClusterState, Problem } from "../../../src/model/types.js";
import {
  DesiredMemo,
  desiredInfrasByKey,
  desiredState,
  operatorSettings,
  type DesiredState,
} from "../../../src/operator/desired/index.js";
import { renderAll, type Outputs } from "../../../src/pipeline/outputs.js";
import { attachment, combine, hostedCluster, infra, NS } from "../../support/fixtures.js";

/**
 * Names and namespaces whose "<namespace>/<name>" keys sort otherwise than names or (namespace,
 * name) pairs do: "clusters-b/z" comes first ('-' sorts before '/').
 */
const NAMES: readonly string[] = ["v", "v-a", "va", "w", "z"];
const nameOf = (k: number): string => NAMES[k] ?? "v";
const namespaceOf = (k: number): string => (k === NAMES.length - 1 ? `${NS}-b` : NS);
const K = NAMES.length;
const SETTINGS = [
  operatorSettings({ namespace: "oooi-system" }),
  operatorSettings({ namespace: "oooi-system", images: { envoy: "example.com/envoy:2" } }),
  // Every proxy refused: a problem on each Infra.
  operatorSettings({ namespace: "oooi-system", xdsAddress: "no-port" }),
] as const;

interface World {
  present: boolean[];
  /** 0: no uid observed yet; otherwise the uid's generation (a re-created Infra has a new one). */
  uid: number[];
  /** Which proxy address the Infra's spec gives (an edit). */
  proxy: number[];
  /** The NAD's config variant; 2: the NAD is not observed. */
  nad: number[];
  /** Which address the hosted cluster's first worker has. */
  worker: number[];
  terminating: boolean[];
  /** A blocking model problem about the Infra's attachment. */
  problem: boolean[];
  settings: number;
}

type Op =
  | { readonly op: "present" | "terminating" | "problem"; readonly k: number }
  | { readonly op: "uid" | "proxy" | "nad" | "worker"; readonly k: number; readonly v: number }
  | { readonly op: "settings" };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constantFrom("present", "terminating", "problem"), k: fc.nat(K - 1) }),
  fc.record({ op: fc.constant("uid"), k: fc.nat(K - 1), v: fc.nat(2) }),
  fc.record({ op: fc.constantFrom("proxy", "worker"), k: fc.nat(K - 1), v: fc.nat(3) }),
  fc.record({ op: fc.constant("nad"), k: fc.nat(K - 1), v: fc.nat(2) }),
  fc.record({ op: fc.constant("settings") }),
);

function apply(w: World, o: Op): void {
  if (o.op === "settings") w.settings = (w.settings + 1) % SETTINGS.length;
  else if ("v" in o) w[o.op][o.k] = o.v;
  else w[o.op][o.k] = !w[o.op][o.k];
}

/** Each object built once per variant, so an unchanged part of the world keeps its identity. */
class Parts {
  readonly #made = new Map<string, unknown>();
  once<T>(key: string, make: () => T): T {
    if (!this.#made.has(key)) this.#made.set(key, make());
    return this.#made.get(key) as T;
  }

  infra(k: number, uid: number, proxy: number): Infra {
    return this.once(`infra ${k} ${uid} ${proxy}`, () => {
      const net = `10.${k}.0`;
      const i = infra(
        nameOf(k),
        {
          networkConfig: { cidr: `${net}.0/24`, gateway: `${net}.1`, networkAttachmentDefinition: `vlan${k}` },
          infraComponents: {
            dhcp: { serverIP: `${net}.2`, rangeStart: `${net}.100`, rangeEnd: `${net}.199` },
            dns: { serverIP: `${net}.3` },
            proxy: { serverIP: `${net}.${4 + proxy}` },
          },
        },
        namespaceOf(k),
      );
      return uid === 0 ? i : { ...i, metadata: { ...i.metadata, uid: `uid-${k}-${uid}` } };
    });
  }

  attachment(k: number, terminating: boolean): InfraClusterAttachment {
    return this.once(`attachment ${k} ${terminating}`, () => {
      const a = attachment(`hc${k}`, { infra: nameOf(k), namespace: namespaceOf(k) });
      const m = { ...a.metadata, uid: `att-${k}` };
      return {
        ...a,
        metadata: terminating
          ? { ...m, deletionTimestamp: "2026-12-01T00:00:00Z", finalizers: ["example.com/hold"] }
          : m,
      };
    });
  }

  cluster(k: number, worker: number): Partial<ClusterState> {
    return this.once(`cluster ${k} ${worker}`, () =>
      hostedCluster(`hc${k}`, k + 1, [`10.${k}.0.${150 + worker}`, `10.${k}.0.160`]),
    );
  }

  nads(w: World): ReadonlyMap<string, string> {
    const key = w.nad.join(",");
    return this.once(`nads ${key}`, () => {
      const m = new Map<string, string>();
      w.nad.forEach((v, k) => {
        if (v < 2)
          m.set(
            `${namespaceOf(k)}/vlan${k}`,
            JSON.stringify({ cniVersion: "0.3.1", type: "bridge", bridge: `br${k}-${v}` }),
          );
      });
      return m;
    });
  }

  state(w: World): ClusterState {
    const parts: Partial<ClusterState>[] = [];
    for (let k = 0; k < K; k++) {
      if (w.present[k]) parts.push({ infras: [this.infra(k, w.uid[k] ?? 0, w.proxy[k] ?? 0)] });
      parts.push({ attachments: [this.attachment(k, w.terminating[k] ?? false)] }, this.cluster(k, w.worker[k] ?? 0));
    }
    return combine(...parts);
  }

  /** The model's problems with the world's planted ones, the same list while neither moved. */
  problems(model: readonly Problem[], w: World): readonly Problem[] {
    const planted = w.problem.flatMap((p, k) => (p ? [k] : []));
    if (planted.length === 0) return model;
    const byModel = this.once(`problems ${planted.join(",")}`, () => new WeakMap<readonly Problem[], Problem[]>());
    let out = byModel.get(model);
    if (out === undefined) {
      out = [
        ...model,
        ...planted.map((k): Problem => ({
          object: { kind: "InfraClusterAttachment", namespace: namespaceOf(k), name: `hc${k}` },
          field: "spec",
          reason: "InvalidSpec",
          message: "planted",
          severity: "error",
        })),
      ];
      byModel.set(model, out);
    }
    return out;
  }
}

describe("DesiredMemo over random runs of changes", () => {
  it("equals the desired state from nothing after every step; a step that moved nothing gives the very answer", () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(opArb, { minLength: 0, maxLength: 3 }), { minLength: 1, maxLength: 12 }),
        (steps) => {
          const w: World = {
            present: NAMES.map(() => true),
            uid: NAMES.map(() => 1),
            proxy: NAMES.map(() => 0),
            nad: NAMES.map(() => 0),
            worker: NAMES.map(() => 0),
            terminating: NAMES.map(() => false),
            problem: NAMES.map(() => false),
            settings: 0,
          };
          const parts = new Parts();
          const memo = new DesiredMemo();
          let outputs: Outputs | undefined;
          let last: { key: string; answer: DesiredState } | undefined;
          for (const ops of [[], ...steps]) {
            for (const o of ops) apply(w, o);
            const state = parts.state(w);
            outputs = renderAll(state, outputs === undefined ? {} : { reuse: outputs, lastGood: outputs.lastGood });
            const input = {
              state: outputs.state,
              outputs: { ...outputs, model: { ...outputs.model, problems: parts.problems(outputs.model.problems, w) } },
              settings: SETTINGS[w.settings % 3 === 0 ? 0 : w.settings % 3 === 1 ? 1 : 2],
              networkAttachments: parts.nads(w),
            };
            const answer = desiredState(input, memo);
            expect(answer).toEqual(desiredState(input));
            // The map by key patched beside it holds exactly its Infras.
            const byKey = desiredInfrasByKey(answer);
            expect(byKey.size).toBe(answer.infras.length);
            for (const d of answer.infras) expect(byKey.get(`${d.infra.namespace}/${d.infra.name}`)).toBe(d);
            const key = JSON.stringify(w);
            if (last?.key === key && ops.length > 0) expect(answer).toBe(last.answer);
            last = { key, answer };
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});
