// The session engine on an in-process transport: write backpressure and stream maximum age, with
// an injected clock (no real time involved).
import { describe, expect, test } from "vitest";
import { SnapshotCache } from "../../../src/xds/cache/index.js";
import { decodeSotwRequest } from "../../../src/xds/server/codec.js";
import { XdsEngine } from "../../../src/xds/server/index.js";
import { ENDPOINT_TYPE_URL, LISTENER_TYPE_URL } from "../../../src/xds/resource/protos.js";
import { encodeSotwRequest, type SotwRequestInit, type SotwResponse } from "../../support/envoy/wire.js";
import { ALPHA, BETA, GROUP, publish, rendered } from "./fixtures.js";
import { FakeCall, FakeClock } from "./session-fixtures.js";
import { sampleEndpoints } from "../../envoy/proxy-fixture.js";
import { checkEnvoySnapshot } from "../../../src/envoy/snapshot.js";

/** What grpc-js would hand the session: requests decoded from real bytes. */
function request(init: SotwRequestInit) {
  return decodeSotwRequest(encodeSotwRequest(init));
}

const NODE = { id: "envoy-0", cluster: GROUP };

describe("session transport", () => {
  test("write backpressure: nothing is written until the transport drains, then only the newest state", () => {
    const cache = new SnapshotCache({ check: checkEnvoySnapshot });
    publish(cache, GROUP, rendered([ALPHA]));
    const engine = new XdsEngine({ cache, clock: new FakeClock(), maxStreamAgeMs: 0 });
    const call = new FakeCall();
    const session = engine.openSession(call, "sotw");
    call.accept = false;
    session.handleSotw(
      request({ node: NODE, type_url: ENDPOINT_TYPE_URL, resource_names: ["clusters-alpha/kube-apiserver:6443"] }),
    );
    expect(call.sotw.map((w) => w.typeUrl)).toEqual([ENDPOINT_TYPE_URL]);
    session.handleSotw(request({ type_url: LISTENER_TYPE_URL }));
    for (let i = 0; i < 5; i += 1)
      publish(cache, GROUP, rendered([{ ...ALPHA, workers: [`192.168.10.${String(60 + i)}/32`] }]));
    expect(call.sotw).toHaveLength(1);
    call.accept = true;
    session.drained();
    expect(call.sotw.map((w) => w.typeUrl)).toEqual([ENDPOINT_TYPE_URL, LISTENER_TYPE_URL]);
    expect(call.sotw[1]?.versionInfo).toBe(cache.getSnapshot(GROUP)?.types.get(LISTENER_TYPE_URL)?.version);
    engine.close();
  });

  test("stream maximum age: the stream ends cleanly (status OK) after the jittered age, and leaves status", () => {
    const cache = new SnapshotCache({ check: checkEnvoySnapshot });
    publish(cache, GROUP, rendered([ALPHA]));
    const clock = new FakeClock();
    const engine = new XdsEngine({ cache, clock, maxStreamAgeMs: 60_000, maxStreamAgeJitter: 0.1 });
    const call = new FakeCall();
    const session = engine.openSession(call, "sotw");
    session.handleSotw(request({ node: NODE, type_url: LISTENER_TYPE_URL }));
    expect(engine.status.streams()).toHaveLength(1);
    clock.advance(59_999);
    expect(call.ended).toBe(0);
    clock.advance(1);
    expect(call.ended).toBe(1);
    expect(call.failed).toEqual([]);
    expect(engine.status.streams()).toHaveLength(0);
    expect(engine.streamCount()).toBe(0);
    expect(engine.status.node(NODE.id)?.connectedStreams).toBe(0);
  });

  test("a maximum age of 0 never ends a stream", () => {
    const cache = new SnapshotCache({ check: checkEnvoySnapshot });
    const clock = new FakeClock();
    const engine = new XdsEngine({ cache, clock, maxStreamAgeMs: 0 });
    const call = new FakeCall();
    engine.openSession(call, "sotw").handleSotw(request({ node: NODE, type_url: LISTENER_TYPE_URL }));
    expect(clock.timers).toHaveLength(0);
    expect(engine.streamCount()).toBe(1);
  });
});

// docs/xds-protocol.md rule 5 on SotW: a request whose nonce is not the newest is ignored, its
// subscription included. Seen on the next push a configuration change causes, before any fresh
// request: a subscription taken from the stale request would add its names to that push.
describe("rule 5: a SotW request with a stale nonce changes no subscription", () => {
  const ALPHA_API = "clusters-alpha/kube-apiserver:6443";
  const BETA_API = "clusters-beta/kube-apiserver:6443";
  const moved = (address: string) => (name: string) =>
    name === ALPHA_API ? [{ address, port: 6443 }] : sampleEndpoints(name);
  const names = (r: SotwResponse | undefined) => (r?.resources ?? []).map((x) => x.name).sort();

  test("its added name is not served on the next configuration push; a fresh request adds it", () => {
    const cache = new SnapshotCache({ check: checkEnvoySnapshot });
    publish(cache, GROUP, rendered([ALPHA, BETA]));
    const engine = new XdsEngine({ cache, clock: new FakeClock(), maxStreamAgeMs: 0 });
    const call = new FakeCall();
    const session = engine.openSession(call, "sotw");
    const eds = (init: Omit<SotwRequestInit, "type_url">): void => {
      session.handleSotw(request({ ...init, type_url: ENDPOINT_TYPE_URL }));
    };

    eds({ node: NODE, resource_names: [ALPHA_API] });
    const r1 = call.sotw[0];
    expect(names(r1)).toEqual([ALPHA_API]);
    eds({ response_nonce: r1?.nonce ?? "", version_info: r1?.versionInfo ?? "", resource_names: [ALPHA_API] });
    publish(cache, GROUP, rendered([ALPHA, BETA], moved("10.128.1.98")));
    expect(call.sotw).toHaveLength(2);
    const r2 = call.sotw[1];
    eds({ response_nonce: r2?.nonce ?? "", version_info: r2?.versionInfo ?? "", resource_names: [ALPHA_API] });

    // Answers r1 although r2 is out (and ACKed): superseded, so nothing happens.
    eds({
      response_nonce: r1?.nonce ?? "",
      version_info: r1?.versionInfo ?? "",
      resource_names: [ALPHA_API, BETA_API],
    });
    expect(call.sotw).toHaveLength(2);
    const status = () => engine.status.streams()[0]?.types.find((t) => t.typeUrl === ENDPOINT_TYPE_URL);
    expect(status()?.lastAcked?.nonce).toBe(r2?.nonce);

    publish(cache, GROUP, rendered([ALPHA, BETA], moved("10.128.1.99")));
    expect(call.sotw).toHaveLength(3);
    const r3 = call.sotw[2];
    expect(names(r3)).toEqual([ALPHA_API]);

    eds({
      response_nonce: r3?.nonce ?? "",
      version_info: r3?.versionInfo ?? "",
      resource_names: [ALPHA_API, BETA_API],
    });
    expect(call.sotw).toHaveLength(4);
    expect(names(call.sotw[3])).toEqual([ALPHA_API, BETA_API]);
    engine.close();
  });
});
