// The session on an in-process transport, checked against the xDS protocol's rules and what
// session.ts promises: the connect / disconnect lines, how a stream ends, type_url and node checks,
// push order, ACK / NACK records, push causes, the per-stream name limit and CSDS config dumps.
import { describe, expect, test } from "vitest";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { SnapshotCache } from "../../../src/xds/cache/index.js";
import { XdsEngine } from "../../../src/xds/server/index.js";
import {
  CLUSTER_TYPE_URL,
  ENDPOINT_TYPE_URL,
  LISTENER_TYPE_URL,
  ROUTE_TYPE_URL,
} from "../../../src/xds/resource/protos.js";
import { type SotwResponse } from "../../support/envoy/wire.js";
import { ALPHA, BETA, GROUP, publish, rendered } from "./fixtures.js";
import {
  ALPHA_API,
  BETA_API,
  delta,
  FakeCall,
  FakeClock,
  NODE,
  recordingLogger,
  sessionRig,
  sotw,
  type Line,
} from "./session-fixtures.js";
import { sampleEndpoints } from "../../envoy/proxy-fixture.js";
import { checkEnvoySnapshot } from "../../../src/envoy/snapshot.js";

describe("connect and disconnect lines", () => {
  test("an identified ADS stream logs who connected and, on the client's close, how long it lasted", () => {
    const { engine, clock, find } = sessionRig();
    const call = new FakeCall("spiffe://cluster.local/ns/oooi/sa/envoy");
    const session = engine.openSession(call, "sotw");
    session.handleSotw(sotw({ node: NODE, type_url: CLUSTER_TYPE_URL }));
    const described = {
      stream: session.id,
      node: NODE.id,
      group: GROUP,
      identity: "spiffe://cluster.local/ns/oooi/sa/envoy",
      kind: "ADS",
      peer: call.peer,
    };
    expect(find("xDS stream connected")).toEqual([{ level: "info", obj: described, msg: "xDS stream connected" }]);
    expect(engine.status.streams()[0]?.identity).toBe("spiffe://cluster.local/ns/oooi/sa/envoy");
    clock.advance(5_000);
    session.clientEnded();
    expect(call.ended).toBe(1);
    expect(call.failed).toEqual([]);
    expect(find("xDS stream disconnected")).toEqual([
      {
        level: "info",
        obj: { ...described, durationMs: 5_000, reason: "client closed the stream" },
        msg: "xDS stream disconnected",
      },
    ]);
    expect(engine.status.streams()).toEqual([]);
    expect(engine.streamCount()).toBe(0);
  });

  test("without a verified identity the lines name none; a Delta per-type stream is 'Delta CDS'", () => {
    const { engine, find } = sessionRig();
    const call = new FakeCall();
    const session = engine.openSession(call, "delta", "cds");
    session.handleDelta(delta({ node: NODE, type_url: CLUSTER_TYPE_URL }));
    const [connected] = find("xDS stream connected");
    expect(connected?.obj).toEqual({
      stream: session.id,
      node: NODE.id,
      group: GROUP,
      kind: "Delta CDS",
      peer: call.peer,
    });
    expect(engine.status.streams()[0]?.identity).toBe("none");
    expect(call.delta.map((r) => r.typeUrl)).toEqual([CLUSTER_TYPE_URL]);
  });

  test("a SotW per-type stream is its service in capitals, a Delta ADS stream 'Delta ADS'", () => {
    const { engine, find } = sessionRig();
    engine.openSession(new FakeCall(), "sotw", "lds").handleSotw(sotw({ node: NODE, type_url: LISTENER_TYPE_URL }));
    engine.openSession(new FakeCall(), "delta").handleDelta(delta({ node: NODE, type_url: CLUSTER_TYPE_URL }));
    expect(find("xDS stream connected").map((l) => l.obj.kind)).toEqual(["LDS", "Delta ADS"]);
  });

  test("a stream ended before its first request logs that at debug and no disconnect; it ends once", () => {
    const { engine, lines } = sessionRig();
    const call = new FakeCall();
    const session = engine.openSession(call, "sotw");
    session.end("server shutting down");
    expect(lines).toEqual([
      {
        level: "debug",
        obj: { stream: session.id, reason: "server shutting down" },
        msg: "ending xDS stream before its first request",
      },
    ]);
    session.end("again");
    session.fail(GrpcStatus.UNAVAILABLE, "again");
    session.handleSotw(sotw({ node: NODE, type_url: CLUSTER_TYPE_URL }));
    expect(call.ended).toBe(1);
    expect(call.failed).toEqual([]);
    expect(call.raw).toEqual([]);
    expect(lines).toHaveLength(1);
  });

  test("a stream failed before its first request says so at warn; one failed later logs its disconnect at warn", () => {
    const { engine, find, clock } = sessionRig();
    const early = engine.openSession(new FakeCall(), "sotw");
    early.fail(GrpcStatus.UNAVAILABLE, "going away");
    expect(find("failing xDS stream")).toEqual([
      {
        level: "warn",
        obj: { stream: early.id, code: GrpcStatus.UNAVAILABLE, details: "going away" },
        msg: "failing xDS stream",
      },
    ]);
    expect(find("xDS stream disconnected")).toEqual([]);

    const call = new FakeCall();
    const late = engine.openSession(call, "sotw");
    late.handleSotw(sotw({ node: NODE, type_url: CLUSTER_TYPE_URL }));
    clock.advance(250);
    late.fail(GrpcStatus.UNAVAILABLE, "going away");
    late.fail(GrpcStatus.INTERNAL, "twice");
    late.end("thrice");
    expect(call.failed).toEqual([{ code: GrpcStatus.UNAVAILABLE, details: "going away" }]);
    expect(call.ended).toBe(0);
    expect(find("failing xDS stream")).toHaveLength(1);
    const [gone] = find("xDS stream disconnected");
    expect(gone?.level).toBe("warn");
    expect(gone?.obj).toMatchObject({
      stream: late.id,
      durationMs: 250,
      reason: "UNAVAILABLE: going away",
      code: GrpcStatus.UNAVAILABLE,
    });
  });

  test("a transport that went away: the stream is forgotten, says why, and nothing more is written", () => {
    const { engine, cache, find } = sessionRig();
    const call = new FakeCall();
    const session = engine.openSession(call, "delta");
    session.handleDelta(delta({ node: NODE, type_url: CLUSTER_TYPE_URL }));
    expect(call.raw).toHaveLength(1);
    session.transportClosed();
    expect(find("xDS stream disconnected")[0]?.obj.reason).toBe("the connection closed");
    expect(engine.streamCount()).toBe(0);
    expect(engine.status.streams()).toEqual([]);
    session.transportClosed("twice");
    expect(find("xDS stream disconnected")).toHaveLength(1);
    session.handleDelta(delta({ type_url: LISTENER_TYPE_URL }));
    session.drained();
    publish(cache, GROUP, rendered([ALPHA]));
    session.pump();
    expect(call.raw).toHaveLength(1);
    expect(call.ended).toBe(0);
  });
});

describe("stream maximum age", () => {
  test("the age is jittered by ± the fraction: the highest draw ends the stream at age × (1 + jitter)", () => {
    const { engine, clock, find } = sessionRig({ maxStreamAgeMs: 60_000, jitter: 0.1 });
    clock.rnd = 1;
    const call = new FakeCall();
    engine.openSession(call, "sotw").handleSotw(sotw({ node: NODE, type_url: CLUSTER_TYPE_URL }));
    clock.advance(65_999);
    expect(call.ended).toBe(0);
    clock.advance(1);
    expect(call.ended).toBe(1);
    expect(find("xDS stream disconnected")[0]?.obj.reason).toBe("maximum stream age reached");
  });

  test("the lowest draw ends it at age × (1 - jitter); ending earlier cancels the timer", () => {
    const { engine, clock } = sessionRig({ maxStreamAgeMs: 60_000, jitter: 0.1 });
    clock.rnd = 0;
    const call = new FakeCall();
    const session = engine.openSession(call, "sotw");
    session.handleSotw(sotw({ node: NODE, type_url: CLUSTER_TYPE_URL }));
    expect(clock.timers.map((t) => t.at - 1_000)).toEqual([54_000]);
    session.end("done");
    expect(clock.timers[0]?.cleared).toBe(true);
  });
});

describe("the first request and type_url checks", () => {
  test.each([
    ["no node.id", { id: "", cluster: GROUP }],
    ["no node.cluster", { id: "envoy-0", cluster: "" }],
  ])("a first request with %s fails the stream INVALID_ARGUMENT and records nothing", (_, node) => {
    const { engine } = sessionRig();
    const call = new FakeCall();
    engine.openSession(call, "sotw").handleSotw(sotw({ node, type_url: CLUSTER_TYPE_URL }));
    expect(call.failed).toEqual([
      {
        code: GrpcStatus.INVALID_ARGUMENT,
        details: "the first request must carry node.id and node.cluster (the node group, <namespace>/<ProxyServer>)",
      },
    ]);
    expect(call.raw).toEqual([]);
    expect(engine.status.streams()).toEqual([]);
  });

  test("a per-type service serves its type for an empty type_url, and fails another type", () => {
    const { engine } = sessionRig();
    const lds = new FakeCall();
    engine.openSession(lds, "sotw", "lds").handleSotw(sotw({ node: NODE, type_url: "" }));
    expect(lds.sotw.map((r) => r.typeUrl)).toEqual([LISTENER_TYPE_URL]);
    const wrong = new FakeCall();
    engine.openSession(wrong, "delta", "lds").handleDelta(delta({ node: NODE, type_url: CLUSTER_TYPE_URL }));
    expect(wrong.failed).toEqual([
      {
        code: GrpcStatus.INVALID_ARGUMENT,
        details: `type_url ${CLUSTER_TYPE_URL} is not served by this service (expected ${LISTENER_TYPE_URL})`,
      },
    ]);
    expect(wrong.raw).toEqual([]);
  });

  test.each(["sotw", "delta"] as const)("%s ADS fails a request without type_url", (protocol) => {
    const { engine } = sessionRig();
    const call = new FakeCall();
    const s = engine.openSession(call, protocol);
    if (protocol === "sotw") s.handleSotw(sotw({ node: NODE, type_url: "" }));
    else s.handleDelta(delta({ node: NODE, type_url: "" }));
    expect(call.failed).toEqual([
      { code: GrpcStatus.INVALID_ARGUMENT, details: "type_url is required on an aggregated (ADS) stream" },
    ]);
    expect(call.raw).toEqual([]);
  });
});

describe("push order on one ADS stream", () => {
  const OTHER_A = "type.googleapis.com/zz.A";
  const OTHER_B = "type.googleapis.com/aa.B";

  test("requests that arrive together are answered CDS, EDS first, then other types by type URL", () => {
    const { engine, clock } = sessionRig();
    clock.queue = true;
    const call = new FakeCall();
    const s = engine.openSession(call, "delta");
    s.handleDelta(delta({ node: NODE, type_url: OTHER_A, resource_names_subscribe: ["x"] }));
    s.handleDelta(delta({ type_url: OTHER_B, resource_names_subscribe: ["x"] }));
    s.handleDelta(delta({ type_url: ENDPOINT_TYPE_URL, resource_names_subscribe: [ALPHA_API] }));
    s.handleDelta(delta({ type_url: CLUSTER_TYPE_URL }));
    expect(call.raw).toEqual([]);
    clock.flush();
    clock.flush();
    expect(call.delta.map((r) => r.typeUrl)).toEqual([CLUSTER_TYPE_URL, ENDPOINT_TYPE_URL, OTHER_B, OTHER_A]);
  });

  test("one pump answers a batch: a second schedule before it runs adds nothing", () => {
    const { engine, clock } = sessionRig();
    clock.queue = true;
    const call = new FakeCall();
    const s = engine.openSession(call, "sotw");
    s.handleSotw(sotw({ node: NODE, type_url: CLUSTER_TYPE_URL }));
    s.schedule();
    expect(clock.deferred).toHaveLength(1);
    clock.flush();
    expect(call.raw).toHaveLength(1);
    clock.flush();
    s.end("done");
    s.schedule();
    expect(clock.deferred).toHaveLength(0);
  });
});

describe("ACK and NACK (rules 3 to 6)", () => {
  test("SotW: an ACK is recorded with its version; a NACK with its error_detail, and nothing is resent", () => {
    const { engine, cache, clock } = sessionRig();
    const call = new FakeCall();
    const s = engine.openSession(call, "sotw");
    s.handleSotw(sotw({ node: NODE, type_url: CLUSTER_TYPE_URL }));
    const r1 = call.sotw[0];
    clock.advance(10);
    s.handleSotw(
      sotw({ type_url: CLUSTER_TYPE_URL, version_info: r1?.versionInfo ?? "", response_nonce: r1?.nonce ?? "" }),
    );
    const type = () => engine.status.streams()[0]?.types.find((t) => t.typeUrl === CLUSTER_TYPE_URL);
    expect(type()?.lastAcked).toEqual({ version: r1?.versionInfo, nonce: r1?.nonce, at: 1_010 });
    publish(cache, GROUP, rendered([ALPHA]));
    const r2 = call.sotw[1];
    expect(r2?.versionInfo).not.toBe(r1?.versionInfo);
    clock.advance(10);
    s.handleSotw(
      sotw({
        type_url: CLUSTER_TYPE_URL,
        version_info: r1?.versionInfo ?? "",
        response_nonce: r2?.nonce ?? "",
        error_detail: { code: 3, message: "bad cluster" },
      }),
    );
    expect(type()?.lastNack).toMatchObject({
      version: r2?.versionInfo,
      nonce: r2?.nonce,
      at: 1_020,
      code: 3,
      message: "bad cluster",
    });
    expect(type()?.lastAcked?.nonce).toBe(r1?.nonce);
    expect(call.raw).toHaveLength(2);
    const config = engine.status.streamConfig(s.id, CLUSTER_TYPE_URL);
    expect(config?.acked.map((r) => r.name)).toEqual([...(r1?.resources ?? [])].map((r) => r.name).sort());
  });

  test("Delta: a request without a nonce ACKs nothing; a stale nonce still applies its subscription", () => {
    const { engine, find } = sessionRig();
    const call = new FakeCall();
    const s = engine.openSession(call, "delta");
    s.handleDelta(delta({ node: NODE, type_url: ENDPOINT_TYPE_URL, resource_names_subscribe: [ALPHA_API] }));
    const r1 = call.delta[0];
    expect(r1?.resources.map((r) => r.name)).toEqual([ALPHA_API]);
    const type = () => engine.status.streams()[0]?.types.find((t) => t.typeUrl === ENDPOINT_TYPE_URL);
    s.handleDelta(delta({ type_url: ENDPOINT_TYPE_URL }));
    expect(type()?.lastAcked).toBeUndefined();
    s.handleDelta(delta({ type_url: ENDPOINT_TYPE_URL, response_nonce: r1?.nonce ?? "" }));
    expect(type()?.lastAcked?.nonce).toBe(r1?.nonce);
    expect(find("Delta request with a stale nonce: applying its subscription changes only")).toEqual([]);
    // The nonce of a response already ACKed is stale: not an ACK, but its subscription counts.
    s.handleDelta(
      delta({ type_url: ENDPOINT_TYPE_URL, response_nonce: "not-ours", resource_names_subscribe: [BETA_API] }),
    );
    expect(find("Delta request with a stale nonce: applying its subscription changes only")).toEqual([
      {
        level: "debug",
        obj: { stream: s.id, typeUrl: ENDPOINT_TYPE_URL, nonce: "not-ours" },
        msg: "Delta request with a stale nonce: applying its subscription changes only",
      },
    ]);
    const r2 = call.delta[1];
    expect(r2?.resources.map((r) => r.name)).toEqual([BETA_API]);
    s.handleDelta(delta({ type_url: ENDPOINT_TYPE_URL, response_nonce: r1?.nonce ?? "" }));
    expect(type()?.lastAcked?.nonce).toBe(r1?.nonce);
    expect(type()?.lastSent?.nonce).toBe(r2?.nonce);
  });

  test("SotW: a stale nonce is logged and ignored", () => {
    const { engine, find } = sessionRig();
    const call = new FakeCall();
    const s = engine.openSession(call, "sotw");
    s.handleSotw(sotw({ node: NODE, type_url: ENDPOINT_TYPE_URL, resource_names: [ALPHA_API] }));
    const r1 = call.sotw[0];
    s.handleSotw(sotw({ type_url: ENDPOINT_TYPE_URL, response_nonce: "old", resource_names: [ALPHA_API, BETA_API] }));
    expect(call.raw).toHaveLength(1);
    expect(find("ignoring SotW request with a stale nonce")).toEqual([
      {
        level: "debug",
        obj: { stream: s.id, typeUrl: ENDPOINT_TYPE_URL, nonce: "old", latest: r1?.nonce },
        msg: "ignoring SotW request with a stale nonce",
      },
    ]);
  });
});

describe("push records", () => {
  test("a push a request caused is 'subscription' at the request's time; one a snapshot change caused is 'change'", () => {
    const { engine, cache, clock } = sessionRig();
    const call = new FakeCall();
    const s = engine.openSession(call, "sotw");
    clock.advance(100);
    s.handleSotw(sotw({ node: NODE, type_url: ENDPOINT_TYPE_URL, resource_names: [ALPHA_API] }));
    const r1 = call.sotw[0];
    clock.advance(100);
    s.handleSotw(
      sotw({
        type_url: ENDPOINT_TYPE_URL,
        version_info: r1?.versionInfo ?? "",
        response_nonce: r1?.nonce ?? "",
        resource_names: [ALPHA_API],
      }),
    );
    publish(
      cache,
      GROUP,
      rendered([ALPHA, BETA], (n) => (n === ALPHA_API ? [{ address: "10.1.2.3", port: 6443 }] : [])),
    );
    const changedAt = cache.getSnapshot(GROUP)?.types.get(ENDPOINT_TYPE_URL)?.changedAt;
    const r2 = call.sotw[1];
    clock.advance(100);
    s.handleSotw(
      sotw({
        type_url: ENDPOINT_TYPE_URL,
        version_info: r2?.versionInfo ?? "",
        response_nonce: r2?.nonce ?? "",
        resource_names: [ALPHA_API, BETA_API],
      }),
    );
    expect(call.raw).toHaveLength(3);
    const history = engine.status.history().filter((p) => p.typeUrl === ENDPOINT_TYPE_URL);
    expect(history.map((p) => [p.cause, p.changeAt])).toEqual([
      ["subscription", 1_100],
      ["change", changedAt],
      ["subscription", 1_300],
    ]);
  });
});

describe("names per stream (--xds-max-names-per-stream)", () => {
  test("the limit counts the names of all the stream's types", () => {
    const { engine } = sessionRig({ maxNamesPerStream: 3 });
    const call = new FakeCall();
    const s = engine.openSession(call, "delta");
    s.handleDelta(delta({ node: NODE, type_url: ENDPOINT_TYPE_URL, resource_names_subscribe: [ALPHA_API, BETA_API] }));
    s.handleDelta(delta({ type_url: ROUTE_TYPE_URL, resource_names_subscribe: ["r1"] }));
    expect(call.failed).toEqual([]);
    s.handleDelta(delta({ type_url: ROUTE_TYPE_URL, resource_names_subscribe: ["r2"] }));
    expect(call.failed).toEqual([
      {
        code: GrpcStatus.RESOURCE_EXHAUSTED,
        details:
          "this stream would subscribe to 4 resource names, more than the limit of 3 per stream (--xds-max-names-per-stream)",
      },
    ]);
  });
});

describe("CSDS config dump (streamConfig)", () => {
  test("a Delta reconnect's initial_resource_versions are what its client holds, by name; known versions carry the resource", () => {
    const { engine, cache } = sessionRig();
    const current = cache.getSnapshot(GROUP)?.types.get(ENDPOINT_TYPE_URL)?.resources.get(ALPHA_API);
    const call = new FakeCall();
    const s = engine.openSession(call, "delta");
    s.handleDelta(
      delta({
        node: NODE,
        type_url: ENDPOINT_TYPE_URL,
        resource_names_subscribe: [BETA_API, ALPHA_API],
        initial_resource_versions: { [BETA_API]: "stale", [ALPHA_API]: current?.version ?? "" },
      }),
    );
    const config = engine.status.streamConfig(s.id, ENDPOINT_TYPE_URL);
    expect(config?.acked.map((r) => [r.name, r.version, r.resource !== undefined])).toEqual([
      [ALPHA_API, current?.version, true],
      [BETA_API, "stale", false],
    ]);
    expect(engine.status.streamConfig(s.id, LISTENER_TYPE_URL)).toBeUndefined();
  });
});

describe("what a reconnecting client holds (rule 17, and SotW version_info)", () => {
  const moved = (address: string) => (name: string) =>
    name === ALPHA_API ? [{ address, port: 6443 }] : [{ address: "10.9.9.9", port: 6443 }];
  const heldOf = (engine: XdsEngine, id: string, typeUrl: string) =>
    engine.status.streamConfig(id, typeUrl)?.acked.map((r) => [r.name, r.version, r.resource !== undefined]);
  /** A new Delta stream of `node` subscribing ALPHA_API's endpoints, saying it holds `version`. */
  const reconnect = (engine: XdsEngine, version: string, node = NODE) => {
    const s = engine.openSession(new FakeCall(), "delta");
    s.handleDelta(
      delta({
        node,
        type_url: ENDPOINT_TYPE_URL,
        resource_names_subscribe: [ALPHA_API],
        initial_resource_versions: { [ALPHA_API]: version },
      }),
    );
    return s;
  };

  test("Delta: a version this client was sent but never ACKed is known on its next stream", () => {
    const { engine, cache } = sessionRig();
    const first = new FakeCall();
    const s1 = engine.openSession(first, "delta");
    s1.handleDelta(delta({ node: NODE, type_url: ENDPOINT_TYPE_URL, resource_names_subscribe: [ALPHA_API] }));
    const v1 = first.delta[0]?.resources[0]?.version ?? "";
    s1.transportClosed();
    publish(cache, GROUP, rendered([ALPHA, BETA], moved("10.1.1.1")));
    expect(cache.getSnapshot(GROUP)?.types.get(ENDPOINT_TYPE_URL)?.resources.get(ALPHA_API)?.version).not.toBe(v1);
    const s2 = reconnect(engine, v1);
    expect(heldOf(engine, s2.id, ENDPOINT_TYPE_URL)).toEqual([[ALPHA_API, v1, true]]);
    // Another node never got it.
    const other = reconnect(engine, v1, { id: "envoy-1", cluster: GROUP });
    expect(heldOf(engine, other.id, ENDPOINT_TYPE_URL)).toEqual([[ALPHA_API, v1, false]]);
  });

  test("Delta: the last ACKed version is known on the next stream even after a newer one was sent", () => {
    const { engine, cache } = sessionRig();
    const first = new FakeCall();
    const s1 = engine.openSession(first, "delta");
    s1.handleDelta(delta({ node: NODE, type_url: ENDPOINT_TYPE_URL, resource_names_subscribe: [ALPHA_API] }));
    const r1 = first.delta[0];
    const v1 = r1?.resources[0]?.version ?? "";
    s1.handleDelta(delta({ type_url: ENDPOINT_TYPE_URL, response_nonce: r1?.nonce ?? "" }));
    publish(cache, GROUP, rendered([ALPHA, BETA], moved("10.1.1.1")));
    expect(first.delta).toHaveLength(2);
    s1.transportClosed();
    publish(cache, GROUP, rendered([ALPHA, BETA], moved("10.1.1.2")));
    const s2 = reconnect(engine, v1);
    expect(heldOf(engine, s2.id, ENDPOINT_TYPE_URL)).toEqual([[ALPHA_API, v1, true]]);
  });

  test("SotW: a new stream naming the version its node last ACKed holds that version's resources", () => {
    const { engine } = sessionRig();
    const first = new FakeCall();
    const s1 = engine.openSession(first, "sotw");
    s1.handleSotw(sotw({ node: NODE, type_url: CLUSTER_TYPE_URL }));
    const r1 = first.sotw[0];
    s1.handleSotw(
      sotw({ type_url: CLUSTER_TYPE_URL, version_info: r1?.versionInfo ?? "", response_nonce: r1?.nonce ?? "" }),
    );
    const acked = heldOf(engine, s1.id, CLUSTER_TYPE_URL);
    expect(acked?.length).toBe(r1?.resources.length);
    s1.transportClosed();
    const s2 = engine.openSession(new FakeCall(), "sotw");
    s2.handleSotw(sotw({ node: NODE, type_url: CLUSTER_TYPE_URL, version_info: r1?.versionInfo ?? "" }));
    expect(heldOf(engine, s2.id, CLUSTER_TYPE_URL)).toEqual(acked);
    // One that names no version holds nothing yet.
    const s3 = engine.openSession(new FakeCall(), "sotw");
    s3.handleSotw(sotw({ node: NODE, type_url: CLUSTER_TYPE_URL }));
    expect(heldOf(engine, s3.id, CLUSTER_TYPE_URL)).toEqual([]);
  });
});

describe("a SotW request with a stale nonce still says what the client dropped", () => {
  test("names it leaves out are no longer listed as held; a wildcard or empty list drops nothing", () => {
    const { engine, cache } = sessionRig();
    const call = new FakeCall();
    const s = engine.openSession(call, "sotw");
    const names = () => engine.status.streamConfig(s.id, ENDPOINT_TYPE_URL);
    s.handleSotw(sotw({ node: NODE, type_url: ENDPOINT_TYPE_URL, resource_names: [ALPHA_API, BETA_API] }));
    const r1 = call.sotw[0];
    s.handleSotw(
      sotw({
        type_url: ENDPOINT_TYPE_URL,
        version_info: r1?.versionInfo ?? "",
        response_nonce: r1?.nonce ?? "",
        resource_names: [ALPHA_API, BETA_API],
      }),
    );
    publish(
      cache,
      GROUP,
      rendered([ALPHA, BETA], () => [{ address: "10.3.3.3", port: 6443 }]),
    );
    expect(call.raw).toHaveLength(2);
    const both = [ALPHA_API, BETA_API];
    expect(names()?.acked.map((r) => r.name)).toEqual(both);
    for (const stale of [[], ["*"]]) {
      s.handleSotw(sotw({ type_url: ENDPOINT_TYPE_URL, response_nonce: r1?.nonce ?? "", resource_names: stale }));
      expect(names()?.acked.map((r) => r.name)).toEqual(both);
      expect(names()?.sent.map((r) => r.name)).toEqual(both);
    }
    s.handleSotw(
      sotw({ type_url: ENDPOINT_TYPE_URL, response_nonce: r1?.nonce ?? "", resource_names: [ALPHA_API, "other"] }),
    );
    expect(call.raw).toHaveLength(2);
    expect(names()?.acked.map((r) => r.name)).toEqual([ALPHA_API]);
    expect(names()?.sent.map((r) => r.name)).toEqual([ALPHA_API]);
  });
});

describe("config dump and removals", () => {
  test("a Delta name the server told absent (rule 18) is not listed as held", () => {
    const { engine } = sessionRig();
    const call = new FakeCall();
    const s = engine.openSession(call, "delta");
    s.handleDelta(
      delta({ node: NODE, type_url: ENDPOINT_TYPE_URL, resource_names_subscribe: ["no-such-cluster", ALPHA_API] }),
    );
    expect(call.delta[0]?.removed).toEqual(["no-such-cluster"]);
    expect(engine.status.streamConfig(s.id, ENDPOINT_TYPE_URL)?.sent.map((r) => r.name)).toEqual([ALPHA_API]);
  });
});

describe("streams woken by one change share its response (rule 1)", () => {
  test("SotW streams subscribed alike get one response, nonce included", () => {
    const { engine, cache, clock } = sessionRig();
    const calls = [new FakeCall(), new FakeCall()];
    const sessions = calls.map((c, i) => {
      const s = engine.openSession(c, "sotw");
      s.handleSotw(sotw({ node: { id: `envoy-${String(i)}`, cluster: GROUP }, type_url: CLUSTER_TYPE_URL }));
      const r = c.sotw[0];
      s.handleSotw(
        sotw({ type_url: CLUSTER_TYPE_URL, version_info: r?.versionInfo ?? "", response_nonce: r?.nonce ?? "" }),
      );
      return s;
    });
    expect(sessions).toHaveLength(2);
    clock.queue = true;
    publish(cache, GROUP, rendered([ALPHA]));
    clock.flush();
    const [a, b] = calls.map((c) => c.sotw[1]);
    expect(a?.nonce).toBeDefined();
    expect(b?.nonce).toBe(a?.nonce);
  });

  test("Delta streams holding different versions get what each lacks, never the other's", () => {
    const { engine, cache, clock } = sessionRig();
    const alpha = cache.getSnapshot(GROUP)?.types.get(ENDPOINT_TYPE_URL)?.resources.get(ALPHA_API)?.version ?? "";
    clock.queue = true;
    const holding = new FakeCall();
    const fresh = new FakeCall();
    engine.openSession(holding, "delta").handleDelta(
      delta({
        node: { id: "envoy-0", cluster: GROUP },
        type_url: ENDPOINT_TYPE_URL,
        resource_names_subscribe: [ALPHA_API, BETA_API],
        initial_resource_versions: { [ALPHA_API]: alpha },
      }),
    );
    engine.openSession(fresh, "delta").handleDelta(
      delta({
        node: { id: "envoy-1", cluster: GROUP },
        type_url: ENDPOINT_TYPE_URL,
        resource_names_subscribe: [ALPHA_API, BETA_API],
      }),
    );
    clock.flush();
    expect(holding.delta.map((r) => r.resources.map((x) => x.name))).toEqual([[BETA_API]]);
    expect(fresh.delta.map((r) => r.resources.map((x) => x.name).sort())).toEqual([[ALPHA_API, BETA_API]]);
  });
});

describe("when nothing is due, nothing is sent (rules 7 and 17)", () => {
  test("a Delta reconnect that already holds every current version gets no response", () => {
    const { engine, cache } = sessionRig();
    const clusters = cache.getSnapshot(GROUP)?.types.get(CLUSTER_TYPE_URL)?.resources;
    const versions: Record<string, string> = {};
    for (const [n, r] of clusters ?? []) versions[n] = r.version;
    expect(Object.keys(versions).length).toBeGreaterThan(0);
    const call = new FakeCall();
    engine
      .openSession(call, "delta")
      .handleDelta(delta({ node: NODE, type_url: CLUSTER_TYPE_URL, initial_resource_versions: versions }));
    expect(call.raw).toEqual([]);
    // A fresh Delta stream is answered even when there is nothing to give it.
    const fresh = new FakeCall();
    engine
      .openSession(fresh, "delta")
      .handleDelta(delta({ node: NODE, type_url: ENDPOINT_TYPE_URL, resource_names_subscribe: ["no-such-cluster"] }));
    expect(fresh.delta).toHaveLength(1);
  });

  test("SotW: a request that only repeats the subscription is not answered; one that narrows it is, at the current version", () => {
    const { engine, cache } = sessionRig();
    const call = new FakeCall();
    const s = engine.openSession(call, "sotw");
    const eds = (nonce: string, version: string, names: string[]) => {
      s.handleSotw(
        sotw({ type_url: ENDPOINT_TYPE_URL, response_nonce: nonce, version_info: version, resource_names: names }),
      );
    };
    s.handleSotw(sotw({ node: NODE, type_url: ENDPOINT_TYPE_URL, resource_names: [ALPHA_API, "no-such-cluster"] }));
    const r1 = call.sotw[0];
    eds(r1?.nonce ?? "", r1?.versionInfo ?? "", [ALPHA_API, "no-such-cluster"]);
    // Only BETA's endpoints change: nothing this client subscribes to.
    publish(
      cache,
      GROUP,
      rendered([ALPHA, BETA], (n) => (n === BETA_API ? [{ address: "10.7.7.7", port: 6443 }] : sampleEndpoints(n))),
    );
    const current = cache.getSnapshot(GROUP)?.types.get(ENDPOINT_TYPE_URL)?.version;
    expect(current).not.toBe(r1?.versionInfo);
    expect(call.raw).toHaveLength(1);
    eds(r1?.nonce ?? "", r1?.versionInfo ?? "", [ALPHA_API, "no-such-cluster"]);
    expect(call.raw).toHaveLength(1);
    eds(r1?.nonce ?? "", r1?.versionInfo ?? "", [ALPHA_API]);
    expect(call.sotw.map((r) => [r.versionInfo, r.resources.map((x) => x.name)])).toEqual([
      [r1?.versionInfo, [ALPHA_API]],
      [current, [ALPHA_API]],
    ]);
  });
});

describe("one round of pumps", () => {
  test.each([false, true])(
    "a stream of a type the snapshot lacks and one of a type it has are both answered (lacking first: %s)",
    (lackingFirst) => {
      const { engine, clock } = sessionRig();
      clock.queue = true;
      const unknown = new FakeCall();
      const clusters = new FakeCall();
      const lacking = () => {
        engine
          .openSession(unknown, "sotw")
          .handleSotw(sotw({ node: NODE, type_url: "type.googleapis.com/aa.B", resource_names: ["x"] }));
      };
      const having = () => {
        engine
          .openSession(clusters, "sotw")
          .handleSotw(sotw({ node: { id: "envoy-1", cluster: GROUP }, type_url: CLUSTER_TYPE_URL }));
      };
      for (const open of lackingFirst ? [lacking, having] : [having, lacking]) open();
      clock.flush();
      expect(unknown.sotw.map((r) => [r.typeUrl, r.resources.length])).toEqual([["type.googleapis.com/aa.B", 0]]);
      expect(clusters.sotw.map((r) => r.typeUrl)).toEqual([CLUSTER_TYPE_URL]);
      expect([...unknown.failed, ...clusters.failed]).toEqual([]);
    },
  );

  test("a push that throws is logged and fails the stream INTERNAL", () => {
    const lines: Line[] = [];
    // The cache is the one collaborator that can be made to throw without reaching into the session.
    class BrokenCache extends SnapshotCache {
      override getSnapshot(): never {
        throw new Error("broken cache");
      }
    }
    const engine = new XdsEngine({
      cache: new BrokenCache({ check: checkEnvoySnapshot }),
      clock: new FakeClock(),
      logger: recordingLogger(lines),
      maxStreamAgeMs: 0,
    });
    const call = new FakeCall();
    const s = engine.openSession(call, "sotw");
    s.handleSotw(sotw({ node: NODE, type_url: CLUSTER_TYPE_URL }));
    expect(call.failed).toEqual([{ code: GrpcStatus.INTERNAL, details: "internal error" }]);
    const failed = lines.filter((l) => l.msg === "xDS push failed");
    expect(failed.map((l) => [l.level, l.obj.stream, (l.obj.err as Error).message])).toEqual([
      ["error", s.id, "broken cache"],
    ]);
  });
});

describe("resource warming on ADS (Envoy: a cluster warms until its ClusterLoadAssignment arrives)", () => {
  /** The same configuration with one cluster's connect_timeout changed; its endpoints unchanged. */
  function withTimeout(timeout: string) {
    const base = rendered([ALPHA, BETA]);
    const clusters = base.clusters.map((c) =>
      (c as { name?: string }).name === ALPHA_API ? { ...c, connect_timeout: timeout } : c,
    );
    return { ...base, clusters };
  }

  test.each(["sotw", "delta"] as const)(
    "%s: a changed cluster is followed by its endpoints though they did not change",
    (protocol) => {
      const { engine, cache } = sessionRig();
      const call = new FakeCall();
      const s = engine.openSession(call, protocol);
      const ack = (typeUrl: string, names: string[] | undefined, i: number) => {
        const r = protocol === "sotw" ? call.sotw[i] : call.delta[i];
        const nonce = r?.nonce ?? "";
        if (protocol === "sotw")
          s.handleSotw(
            sotw({
              type_url: typeUrl,
              response_nonce: nonce,
              version_info: (r as SotwResponse | undefined)?.versionInfo ?? "",
              ...(names === undefined ? {} : { resource_names: names }),
            }),
          );
        else s.handleDelta(delta({ type_url: typeUrl, response_nonce: nonce }));
      };
      if (protocol === "sotw") {
        s.handleSotw(sotw({ node: NODE, type_url: CLUSTER_TYPE_URL }));
        ack(CLUSTER_TYPE_URL, undefined, 0);
        s.handleSotw(sotw({ type_url: ENDPOINT_TYPE_URL, resource_names: [ALPHA_API] }));
      } else {
        s.handleDelta(delta({ node: NODE, type_url: CLUSTER_TYPE_URL }));
        ack(CLUSTER_TYPE_URL, undefined, 0);
        s.handleDelta(delta({ type_url: ENDPOINT_TYPE_URL, resource_names_subscribe: [ALPHA_API] }));
      }
      ack(ENDPOINT_TYPE_URL, [ALPHA_API], 1);
      expect(call.raw).toHaveLength(2);
      publish(cache, GROUP, withTimeout("7s"));
      const after = (protocol === "sotw" ? call.sotw : call.delta).slice(2);
      expect(after.map((r) => [r.typeUrl, r.resources.map((x) => x.name)])).toEqual([
        [CLUSTER_TYPE_URL, expect.arrayContaining([ALPHA_API]) as unknown],
        [ENDPOINT_TYPE_URL, [ALPHA_API]],
      ]);
    },
  );
});

describe("backpressure within one pump (rule 21)", () => {
  test("a write the transport refuses stops the pump before the next due type, until drained()", () => {
    const { engine, clock } = sessionRig();
    clock.queue = true;
    const call = new FakeCall();
    call.accept = false;
    const s = engine.openSession(call, "delta");
    s.handleDelta(delta({ node: NODE, type_url: CLUSTER_TYPE_URL }));
    s.handleDelta(delta({ type_url: ENDPOINT_TYPE_URL, resource_names_subscribe: [ALPHA_API] }));
    clock.flush();
    expect(call.delta.map((r) => r.typeUrl)).toEqual([CLUSTER_TYPE_URL]);
    call.accept = true;
    s.drained();
    clock.flush();
    expect(call.delta.map((r) => r.typeUrl)).toEqual([CLUSTER_TYPE_URL, ENDPOINT_TYPE_URL]);
  });
});

describe("Delta names added while a response is in flight (rule 10)", () => {
  test("every name added before the ACK is answered once the ACK comes", () => {
    const { engine } = sessionRig();
    const call = new FakeCall();
    const s = engine.openSession(call, "delta");
    s.handleDelta(delta({ node: NODE, type_url: ENDPOINT_TYPE_URL, resource_names_subscribe: [ALPHA_API] }));
    const r1 = call.delta[0];
    s.handleDelta(delta({ type_url: ENDPOINT_TYPE_URL, resource_names_subscribe: [BETA_API] }));
    s.handleDelta(delta({ type_url: ENDPOINT_TYPE_URL, resource_names_subscribe: ["no-such-cluster"] }));
    expect(call.raw).toHaveLength(1);
    s.handleDelta(delta({ type_url: ENDPOINT_TYPE_URL, response_nonce: r1?.nonce ?? "" }));
    expect(call.delta.slice(1).map((r) => [r.resources.map((x) => x.name), r.removed])).toEqual([
      [[BETA_API], ["no-such-cluster"]],
    ]);
  });
});

describe("a delayed push dates from its type's change", () => {
  test("changeAt is when the type changed, not when a later snapshot changed other types", () => {
    const clock = new FakeClock();
    const cache = new SnapshotCache({ check: checkEnvoySnapshot, now: () => clock.t });
    const movedAlpha = (n: string) => (n === ALPHA_API ? [{ address: "10.4.4.4", port: 6443 }] : sampleEndpoints(n));
    publish(cache, GROUP, rendered([ALPHA, BETA]));
    const engine = new XdsEngine({ cache, clock, maxStreamAgeMs: 0 });
    const call = new FakeCall();
    const s = engine.openSession(call, "sotw");
    s.handleSotw(sotw({ node: NODE, type_url: ENDPOINT_TYPE_URL, resource_names: [ALPHA_API] }));
    const r1 = call.sotw[0];
    clock.t = 2_000;
    publish(cache, GROUP, rendered([ALPHA, BETA], movedAlpha));
    clock.t = 3_000;
    const base = rendered([ALPHA, BETA], movedAlpha);
    const clusters = base.clusters.map((c) =>
      (c as { name?: string }).name === ALPHA_API ? { ...c, connect_timeout: "9s" } : c,
    );
    publish(cache, GROUP, { ...base, clusters });
    expect(cache.getSnapshot(GROUP)?.createdAt).toBe(3_000);
    clock.t = 4_000;
    expect(call.raw).toHaveLength(1);
    s.handleSotw(
      sotw({
        type_url: ENDPOINT_TYPE_URL,
        version_info: r1?.versionInfo ?? "",
        response_nonce: r1?.nonce ?? "",
        resource_names: [ALPHA_API],
      }),
    );
    expect(call.raw).toHaveLength(2);
    const pushes = engine.status.history().filter((p) => p.typeUrl === ENDPOINT_TYPE_URL);
    expect(pushes.map((p) => [p.cause, p.changeAt, p.sentAt])).toEqual([
      ["subscription", 1_000, 1_000],
      ["change", 2_000, 4_000],
    ]);
  });
});
