// The change feed (issue 27 finding 4): one batch → one line naming what changed, the Infras it
// rebuilt and each group's new versions; then one line when the group's clients ACKed it, or when
// the timeout passed with who did not. The line builder is pure; the ACK side listens to a real
// XdsStatus driven as the ADS server drives it, on a manual clock.
import { describe, expect, it } from "vitest";
import type { Machine } from "../../src/api/external.js";
import type { InfraClusterAttachment } from "../../src/api/schema.js";
import type { ObjectChange } from "../../src/model/incremental/infras-read.js";
import { ChangeFeed } from "../../src/pipeline/change-feed.js";
import { changeLine, type GroupSnapshots, type VersionedGroup } from "../../src/pipeline/change-line.js";
import { SnapshotCache } from "../../src/xds/cache/index.js";
import { PROBE_USER_AGENT, XdsStatus } from "../../src/xds/client-status.js";
import { CLUSTER_TYPE_URL, ENDPOINT_TYPE_URL, LISTENER_TYPE_URL } from "../../src/xds/resource/type-urls.js";
import { ManualClock } from "../support/manual-clock.js";

const group = (versions: Record<string, string>): VersionedGroup => ({
  types: new Map(Object.entries(versions).map(([t, version]) => [t, { version }])),
});
const machine = (name: string): Machine => ({ metadata: { namespace: "clusters-alpha", name } }) as Machine;
const attachment = { metadata: { namespace: "clusters", name: "alpha" } } as InfraClusterAttachment;

describe("changeLine", () => {
  const proxyV1 = group({ [LISTENER_TYPE_URL]: "aaaaaaaa1111", [ENDPOINT_TYPE_URL]: "eeeeeeee1111" });
  const proxyV2 = group({ [LISTENER_TYPE_URL]: "bbbbbbbb2222", [ENDPOINT_TYPE_URL]: "ffffffff2222" });
  const before: GroupSnapshots = new Map([["clusters/x-proxy", proxyV1]]);
  const after: GroupSnapshots = new Map([["clusters/x-proxy", proxyV2]]);

  it("names the changed objects (with file:line when known), the rebuilt Infras and each group's versions", () => {
    const changes: ObjectChange[] = [
      { kind: "Machine", before: undefined, after: machine("w3") },
      { kind: "InfraClusterAttachment", before: attachment, after: attachment },
    ];
    const line = changeLine({
      seq: 4,
      changes,
      rebuilt: new Set(["clusters/x"]),
      before,
      after,
      locate: (ref) => (ref.kind === "InfraClusterAttachment" ? { file: "attachments.yaml", line: 1 } : undefined),
    });
    expect(line?.msg).toBe(
      "change 4: InfraClusterAttachment clusters/alpha changed (attachments.yaml:1), Machine clusters-alpha/w3 added" +
        " → rebuilt Infra clusters/x → clusters/x-proxy: EDS eeeeeeee→ffffffff, LDS aaaaaaaa→bbbbbbbb",
    );
    expect(line?.fields.objects.map((o) => [o.kind, o.name, o.op, o.file])).toEqual([
      ["InfraClusterAttachment", "alpha", "changed", "attachments.yaml"],
      ["Machine", "w3", "added", undefined],
    ]);
    expect(line?.fields.infras).toEqual(["clusters/x"]);
    expect(line?.fields.versions).toEqual({
      "clusters/x-proxy": { EDS: "eeeeeeee→ffffffff", LDS: "aaaaaaaa→bbbbbbbb" },
    });
  });

  it("caps the objects it names and counts the rest", () => {
    const changes: ObjectChange[] = Array.from({ length: 8 }, (_, i) => ({
      kind: "Machine" as const,
      before: machine(`w${String(i)}`),
      after: undefined,
    }));
    const asked: string[] = [];
    const locate = (ref: { name: string }) => {
      asked.push(ref.name);
      return { file: "m.yaml", line: 1 };
    };
    const line = changeLine({ seq: 1, changes: [...changes].reverse(), rebuilt: new Set(), before, after, locate });
    expect(line?.fields.objects).toHaveLength(5);
    expect(line?.fields.moreObjects).toBe(3);
    expect(line?.msg).toContain("Machine clusters-alpha/w4 removed (m.yaml:1) and 3 more → no Infra rebuilt");
    // Only the objects it names are located (a first rendering's batch holds every object).
    expect(asked).toEqual(["w0", "w1", "w2", "w3", "w4"]);
  });

  it("says which types a new group and a gone group got", () => {
    const line = changeLine({
      seq: 2,
      changes: [],
      rebuilt: new Set(),
      before,
      after: new Map([["clusters/y-proxy", group({ [CLUSTER_TYPE_URL]: "cccccccc" })]]),
    });
    expect(line?.fields.versions).toEqual({
      "clusters/x-proxy": { EDS: "eeeeeeee→none", LDS: "aaaaaaaa→none" },
      "clusters/y-proxy": { CDS: "none→cccccccc" },
    });
  });

  it("is silent for a batch that moved no version (the same snapshot, or equal versions)", () => {
    const changes: ObjectChange[] = [{ kind: "Machine", before: undefined, after: machine("w3") }];
    expect(changeLine({ seq: 1, changes, rebuilt: new Set(["clusters/x"]), before, after: before })).toBeUndefined();
    const same = new Map([
      ["clusters/x-proxy", group({ [LISTENER_TYPE_URL]: "aaaaaaaa1111", [ENDPOINT_TYPE_URL]: "eeeeeeee1111" })],
    ]);
    expect(changeLine({ seq: 1, changes, rebuilt: new Set(), before, after: same })).toBeUndefined();
  });
});

describe("ChangeFeed", () => {
  type Line = { level: string; fields: Record<string, unknown>; msg: string };
  function rig() {
    const clock = new ManualClock();
    const status = new XdsStatus();
    const cache = new SnapshotCache({ check: () => [], now: () => clock.now() });
    const lines: Line[] = [];
    const log = {
      info: (fields: object, msg: string) =>
        lines.push({ level: "info", fields: fields as Record<string, unknown>, msg }),
      warn: (fields: object, msg: string) =>
        lines.push({ level: "warn", fields: fields as Record<string, unknown>, msg }),
      error: (fields: object, msg: string) =>
        lines.push({ level: "error", fields: fields as Record<string, unknown>, msg }),
    };
    const feed = new ChangeFeed({ cache, log, clock, ackTimeoutMs: 10_000 });
    feed.attach(status);
    return { clock, status, cache, lines, feed };
  }
  /** A client of `group` that was sent and ACKed LDS version `v` (as the server records it). */
  function connected(r: ReturnType<typeof rig>, id: string, v: string, userAgent = "envoy") {
    r.status.recordOpen(
      {
        streamId: id,
        node: { id, cluster: "g", userAgent },
        peer: "",
        protocol: "sotw",
        service: "ads",
        connectedAt: 0,
      },
      () => undefined,
    );
    const push = r.status.recordSent(
      id,
      "g",
      LISTENER_TYPE_URL,
      { version: v, nonce: "1", at: 0, resources: 1, removed: 0, bytes: 1 },
      "change",
      0,
    );
    r.status.recordAck(id, push, { version: v, nonce: "1", at: 0 }, LISTENER_TYPE_URL);
  }
  function push(r: ReturnType<typeof rig>, id: string, nonce: string, ack: boolean) {
    const v = r.cache.getSnapshot("g")?.types.get(LISTENER_TYPE_URL)?.version ?? "";
    const p = r.status.recordSent(
      id,
      "g",
      LISTENER_TYPE_URL,
      { version: v, nonce, at: r.clock.now(), resources: 1, removed: 0, bytes: 1 },
      "change",
      0,
    );
    if (ack) r.status.recordAck(id, p, { version: v, nonce, at: r.clock.now() }, LISTENER_TYPE_URL);
  }
  // Not an Outputs: publishSnapshots reads only each Infra's proxy node and envoy resources.
  const out = (port: number) =>
    ({
      infras: [
        {
          topology: { proxy: { node: "g" } },
          envoy: {
            listeners: [{ name: "l", address: { socket_address: { address: "127.0.0.1", port_value: port } } }],
            clusters: [],
            endpoints: [],
            routes: [],
          },
        },
      ],
    }) as never;

  it("logs the change, then one line when every client of the group ACKed it", () => {
    const r = rig();
    r.feed.publish(out(1), { changes: undefined, rebuilt: new Set() });
    const v1 = r.cache.getSnapshot("g")?.types.get(LISTENER_TYPE_URL)?.version ?? "";
    connected(r, "e1", v1);
    connected(r, "e2", v1);
    r.feed.publish(out(2), { changes: [], rebuilt: new Set(["ns/x"]) });
    expect(r.lines.at(-1)?.msg).toMatch(
      /^change 2: no object changed → rebuilt Infra ns\/x → g: LDS .*waiting for 2 client/,
    );
    r.clock.advance(30);
    push(r, "e1", "2", true);
    expect(r.lines).toHaveLength(2);
    r.clock.advance(12);
    push(r, "e2", "2", true);
    expect(r.lines.at(-1)).toMatchObject({ level: "info", msg: "change 2: ACKed by 2 of 2 client(s) in 42 ms" });
    r.clock.advance(20_000);
    expect(r.lines).toHaveLength(3);
  });

  it("neither waits for nor counts oooi verify's probe", () => {
    const r = rig();
    r.feed.publish(out(1), { changes: undefined, rebuilt: new Set() });
    const v1 = r.cache.getSnapshot("g")?.types.get(LISTENER_TYPE_URL)?.version ?? "";
    connected(r, "e1", v1);
    connected(r, "probe", v1, PROBE_USER_AGENT);
    r.feed.publish(out(2), { changes: [], rebuilt: new Set() });
    expect(r.lines.at(-1)?.msg).toMatch(/waiting for 1 client\(s\)$/);
    push(r, "e1", "2", true);
    expect(r.lines.at(-1)).toMatchObject({ level: "info", msg: "change 2: ACKed by 1 of 1 client(s) in 0 ms" });
  });

  it("after the timeout, says how many clients did not ACK and which", () => {
    const r = rig();
    r.feed.publish(out(1), { changes: undefined, rebuilt: new Set() });
    const v1 = r.cache.getSnapshot("g")?.types.get(LISTENER_TYPE_URL)?.version ?? "";
    connected(r, "e1", v1);
    connected(r, "e2", v1);
    r.feed.publish(out(2), { changes: [], rebuilt: new Set() });
    push(r, "e1", "2", true);
    push(r, "e2", "2", false);
    r.clock.advance(9_999);
    expect(r.lines).toHaveLength(2);
    r.clock.advance(1);
    expect(r.lines.at(-1)).toMatchObject({ level: "warn", fields: { acked: 1, clients: 2, notAcked: ["g e2"] } });
    expect(r.lines.at(-1)?.msg).toMatch(
      /^change 2: ACKed by 1 of 2 client\(s\) within 10000 ms; 1 did not ACK \(g e2\)/,
    );
  });

  it("waits only on the moved group's clients, and counts one that disconnects instead of ACKing", () => {
    const r = rig();
    r.feed.publish(out(1), { changes: undefined, rebuilt: new Set() });
    const v1 = r.cache.getSnapshot("g")?.types.get(LISTENER_TYPE_URL)?.version ?? "";
    connected(r, "e1", v1);
    connected(r, "e2", v1);
    r.status.recordOpen(
      {
        streamId: "other",
        node: { id: "o", cluster: "h" },
        peer: "",
        protocol: "sotw",
        service: "ads",
        connectedAt: 0,
      } as never,
      () => undefined,
    );
    const sent = { version: "h1", nonce: "1", at: 0, resources: 1, removed: 0, bytes: 1 };
    r.status.recordSent("other", "h", LISTENER_TYPE_URL, sent, "change", 0);
    r.feed.publish(out(2), { changes: [], rebuilt: new Set() });
    expect(r.lines.at(-1)?.fields).toMatchObject({ clients: 2 });
    push(r, "e1", "2", true);
    r.status.recordClose("e2", r.clock.now());
    expect(r.lines.at(-1)).toMatchObject({ level: "warn", fields: { acked: 1, clients: 2, disconnected: ["e2"] } });
    expect(r.lines.at(-1)?.msg).toMatch(/^change 2: ACKed by 1 of 2 client\(s\) within 0 ms; 1 disconnected/);
  });

  it("logs nothing for a publish that moved no version", () => {
    const r = rig();
    r.feed.publish(out(1), { changes: undefined, rebuilt: new Set() });
    r.feed.publish(out(1), { changes: [], rebuilt: new Set(["ns/x"]) });
    expect(r.lines.map((l) => l.msg)).toHaveLength(1);
    expect(r.lines[0]?.msg).toMatch(
      /^change 1: full rendering → no Infra rebuilt → g: CDS none→.*LDS none→.*\(no client connected\)$/,
    );
  });
});
