// A stream's subscription costs what each request changes, and is capped (issue 25, row 9): one
// Delta stream adding one name per request must not re-sort or re-serialise its whole subscription
// per request, and past --xds-max-names-per-stream the stream ends with RESOURCE_EXHAUSTED naming
// the limit and the flag. Real gRPC streams on 127.0.0.1.
import { status as GrpcStatus } from "@grpc/grpc-js";
import { afterEach, expect, test, vi } from "vitest";
import { ENDPOINT_TYPE_URL } from "../../../src/xds/resource/type-urls.js";
import { openDelta, openSotw, type DeltaStream, type SotwStream } from "../../support/envoy/raw.js";
import { countWalks } from "../../support/walks.js";
import { GROUP, publish, rendered, startRig, type Rig } from "./fixtures.js";

let rig: Rig | undefined;
const streams: (DeltaStream | SotwStream)[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const s of streams.splice(0)) s.close();
  await rig?.close();
  rig = undefined;
});

const NODE = { id: "envoy-0", cluster: GROUP };

test("a Delta stream subscribing one more name per request never sorts or serialises the whole subscription", async () => {
  const r = (rig = await startRig());
  publish(r.cache, GROUP, rendered());
  const s = openDelta(r.address);
  streams.push(s);
  const big = { sorts: 0, serialised: 0 };
  const sort = Array.prototype.sort;
  vi.spyOn(Array.prototype, "sort").mockImplementation(function (this: unknown[], compare) {
    if (this.length > 100) big.sorts += 1;
    return sort.call(this, compare) as unknown[];
  });
  const stringify = JSON.stringify;
  vi.spyOn(JSON, "stringify").mockImplementation((...args: Parameters<typeof JSON.stringify>) => {
    const out = stringify(...args);
    if (out.length > 2000) big.serialised += 1;
    return out;
  });
  const requests = 300;
  let nonce = "";
  for (let i = 0; i < requests; i += 1) {
    s.send({
      ...(i === 0 ? { node: NODE } : {}),
      type_url: ENDPOINT_TYPE_URL,
      response_nonce: nonce,
      resource_names_subscribe: [`missing-${String(i)}`],
    });
    const res = await s.next();
    // Each answer tells only of the name just added: it does not exist.
    expect(res.removed).toEqual([`missing-${String(i)}`]);
    nonce = res.nonce;
  }
  expect(big).toEqual({ sorts: 0, serialised: 0 });
});

test("one more name per request on a stream of 1,000 walks nothing as large as the subscription", async () => {
  const r = (rig = await startRig());
  publish(r.cache, GROUP, rendered());
  const s = openDelta(r.address);
  streams.push(s);
  const preload = Array.from({ length: 1000 }, (_, i) => `missing-${String(i)}`);
  s.send({ node: NODE, type_url: ENDPOINT_TYPE_URL, resource_names_subscribe: preload });
  let nonce = (await s.next()).nonce;
  const add = async (i: number): Promise<void> => {
    s.send({ type_url: ENDPOINT_TYPE_URL, response_nonce: nonce, resource_names_subscribe: [`more-${String(i)}`] });
    const res = await s.next();
    expect(res.removed).toEqual([`more-${String(i)}`]);
    nonce = res.nonce;
  };
  // The first addition makes the held map one that is extended rather than copied.
  await add(0);
  const counted = countWalks(900);
  for (let i = 1; i <= 100; i += 1) await add(i);
  expect(counted.walks).toBe(0);
});

test("past --xds-max-names-per-stream a Delta stream ends with RESOURCE_EXHAUSTED naming the limit and the flag", async () => {
  const r = (rig = await startRig({ maxNamesPerStream: 50 }));
  publish(r.cache, GROUP, rendered());
  const s = openDelta(r.address);
  streams.push(s);
  for (let i = 0; i < 6; i += 1) {
    s.send({
      ...(i === 0 ? { node: NODE } : {}),
      type_url: ENDPOINT_TYPE_URL,
      resource_names_subscribe: Array.from({ length: 10 }, (_, j) => `n-${String(i * 10 + j)}`),
    });
  }
  expect(await s.ended()).toEqual({
    code: GrpcStatus.RESOURCE_EXHAUSTED,
    details:
      "this stream would subscribe to 60 resource names, more than the limit of 50 per stream (--xds-max-names-per-stream)",
  });
  expect(r.server.streamCount()).toBe(0);
});

test("a SotW request naming more than the limit ends the stream the same way; one at the limit is served", async () => {
  const r = (rig = await startRig({ maxNamesPerStream: 50 }));
  publish(r.cache, GROUP, rendered());
  const names = (n: number): string[] => Array.from({ length: n }, (_, j) => `n-${String(j)}`);
  const ok = openSotw(r.address);
  const over = openSotw(r.address);
  streams.push(ok, over);
  ok.send({ node: NODE, type_url: ENDPOINT_TYPE_URL, resource_names: names(50) });
  expect((await ok.next()).typeUrl).toBe(ENDPOINT_TYPE_URL);
  over.send({ node: { ...NODE, id: "envoy-1" }, type_url: ENDPOINT_TYPE_URL, resource_names: names(51) });
  const end = await over.ended();
  expect(end.code).toBe(GrpcStatus.RESOURCE_EXHAUSTED);
  expect(end.details).toContain("limit of 50 per stream (--xds-max-names-per-stream)");
});
