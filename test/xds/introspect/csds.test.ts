// CSDS (envoy.service.status.v3.ClientStatusDiscoveryService) over a real gRPC connection: the
// per-resource verdict follows the nonces sent, ACKed and NACKed; the config is the cache's bytes.
import { credentials, makeClientConstructor, status as GrpcStatus, type ClientDuplexStream } from "@grpc/grpc-js";
import { afterEach, describe, expect, test } from "vitest";
import { splitAny } from "../../../src/xds/introspect/csds.js";
import { CSDS_SERVICE, introspectionProtos } from "../../../src/xds/introspect/protos.js";
import { CLUSTER_TYPE_URL, ENDPOINT_TYPE_URL, LISTENER_TYPE_URL } from "../../../src/xds/resource/protos.js";
import { openSotw, type SotwStream } from "../../support/envoy/raw.js";
import { ALPHA, BETA, GAMMA, GROUP, publish, rendered, versionsOf } from "../server/fixtures.js";
import {
  closeAll,
  envoy,
  eventually,
  fetchClientStatus,
  openGrpc,
  startIntrospectRig,
  type CsdsClientConfig,
  type CsdsEntry,
  type IntrospectRig,
} from "./fixtures.js";

let rig: IntrospectRig | undefined;
const raws: SotwStream[] = [];
afterEach(async () => {
  closeAll();
  for (const r of raws.splice(0)) r.close();
  await rig?.close();
  rig = undefined;
});

function entries(configs: readonly CsdsClientConfig[], nodeId: string, typeUrl?: string): CsdsEntry[] {
  const c = configs.find((x) => x.node.id === nodeId);
  return (c?.generic_xds_configs ?? []).filter((e) => typeUrl === undefined || e.type_url === typeUrl);
}

/** Resolves with the node's entries once every entry of `typeUrl` has `status`. */
async function whenStatus(address: string, nodeId: string, typeUrl: string, status: string): Promise<CsdsEntry[]> {
  return eventually(async () => {
    const es = entries(await fetchClientStatus(address), nodeId, typeUrl);
    return es.length > 0 && es.every((e) => e.config_status === status) ? es : undefined;
  }, `${nodeId} ${typeUrl} ${status}`);
}

describe("CSDS", () => {
  test("SYNCED and ACKED after the client ACKs, with the cache's bytes as the config", async () => {
    rig = await startIntrospectRig();
    publish(rig.cache, GROUP, rendered([ALPHA, BETA]));
    const c = envoy(rig.address, "envoy-0", GROUP);
    await c.waitForVersions(versionsOf(rig.cache, GROUP));
    const snap = rig.cache.getSnapshot(GROUP);
    for (const typeUrl of [CLUSTER_TYPE_URL, ENDPOINT_TYPE_URL, LISTENER_TYPE_URL]) {
      const es = await whenStatus(rig.address, "envoy-0", typeUrl, "SYNCED");
      const ts = snap?.types.get(typeUrl);
      expect(es.map((e) => e.name)).toEqual([...(ts?.resources.keys() ?? [])]);
      for (const e of es) {
        expect(e.client_status).toBe("ACKED");
        expect(e.version_info).toBe(ts?.version);
        const cached = ts?.resources.get(e.name);
        expect(cached).toBeDefined();
        expect(e.xds_config?.type_url).toBe(typeUrl);
        expect(Buffer.from(e.xds_config?.value ?? [])).toEqual(
          Buffer.from(splitAny(cached?.any ?? new Uint8Array()).value),
        );
      }
    }
    const [config] = await fetchClientStatus(rig.address);
    expect(config?.node).toMatchObject({ id: "envoy-0", cluster: GROUP });
  });

  test("STALE while a push awaits its ACK, SYNCED once it comes", async () => {
    rig = await startIntrospectRig();
    publish(rig.cache, GROUP, rendered([ALPHA]));
    // A CDS-only client whose ACKs the test sends by hand.
    const raw = openSotw(rig.address);
    raws.push(raw);
    raw.send({ node: { id: "slow-0", cluster: GROUP }, type_url: CLUSTER_TYPE_URL, resource_names: [] });
    const first = await raw.next();
    raw.send({
      type_url: CLUSTER_TYPE_URL,
      version_info: first.versionInfo,
      resource_names: [],
      response_nonce: first.nonce,
    });
    const before = await whenStatus(rig.address, "slow-0", CLUSTER_TYPE_URL, "SYNCED");

    publish(rig.cache, GROUP, rendered([ALPHA, BETA]));
    const second = await raw.next();
    expect(second.typeUrl).toBe(CLUSTER_TYPE_URL);
    const stale = await whenStatus(rig.address, "slow-0", CLUSTER_TYPE_URL, "STALE");
    const oldNames = new Set(before.map((e) => e.name));
    const added = stale.filter((e) => !oldNames.has(e.name));
    expect(added.length).toBeGreaterThan(0);
    for (const e of added) {
      expect(e.client_status).toBe("UNKNOWN");
      expect(e.version_info).toBe(second.versionInfo);
    }
    // What the client acknowledged earlier and still holds unchanged stays ACKED.
    for (const e of stale.filter((x) => oldNames.has(x.name) && second.resources.some((r) => r.name === x.name))) {
      expect(e.client_status).toBe("ACKED");
    }

    raw.send({
      type_url: CLUSTER_TYPE_URL,
      version_info: second.versionInfo,
      resource_names: [],
      response_nonce: second.nonce,
    });
    const synced = await whenStatus(rig.address, "slow-0", CLUSTER_TYPE_URL, "SYNCED");
    expect(synced.every((e) => e.client_status === "ACKED" && e.version_info === second.versionInfo)).toBe(true);
  });

  test("ERROR with the client's NACK text, the rejected resource as failed_configuration", async () => {
    rig = await startIntrospectRig();
    publish(rig.cache, GROUP, rendered([ALPHA]));
    const c = envoy(rig.address, "envoy-0", GROUP);
    await c.waitForVersions(versionsOf(rig.cache, GROUP));
    await whenStatus(rig.address, "envoy-0", LISTENER_TYPE_URL, "SYNCED");
    const ackedLds = rig.cache.getSnapshot(GROUP)?.types.get(LISTENER_TYPE_URL)?.version;

    const reason = "Error adding/updating listener(s) kube-6443: filter chain match overlaps (test)";
    c.validate = (typeUrl) => (typeUrl === LISTENER_TYPE_URL ? reason : undefined);
    publish(rig.cache, GROUP, rendered([ALPHA, BETA]));
    const newLds = rig.cache.getSnapshot(GROUP)?.types.get(LISTENER_TYPE_URL)?.version;
    const es = await whenStatus(rig.address, "envoy-0", LISTENER_TYPE_URL, "ERROR");
    const nacked = es.filter((e) => e.client_status === "NACKED");
    expect(nacked.length).toBeGreaterThan(0);
    for (const e of nacked) {
      expect(e.error_state?.details).toBe(reason);
      expect(e.error_state?.version_info).toBe(newLds);
      expect(e.error_state?.failed_configuration?.type_url).toBe(LISTENER_TYPE_URL);
    }
    for (const e of es.filter((x) => x.client_status === "ACKED")) expect(e.version_info).toBe(ackedLds);
    // Clusters of the same change were accepted.
    await whenStatus(rig.address, "envoy-0", CLUSTER_TYPE_URL, "SYNCED");
  });

  test("NOT_SENT for a subscribed type the server has nothing for", async () => {
    rig = await startIntrospectRig();
    envoy(rig.address, "lonely-0", "nowhere/no-proxy");
    const es = await eventually(async () => {
      const all = entries(await fetchClientStatus(rig?.address ?? ""), "lonely-0");
      return all.some((e) => e.type_url === LISTENER_TYPE_URL) && all.some((e) => e.type_url === CLUSTER_TYPE_URL)
        ? all
        : undefined;
    }, "CDS and LDS subscriptions");
    for (const e of es) {
      expect(e.config_status).toBe("NOT_SENT");
      expect(e.name).toBe("");
      expect(e.xds_config).toBeUndefined();
    }
  });

  test("node_matchers select by node id and by cluster; exclude_resource_contents drops configs", async () => {
    rig = await startIntrospectRig();
    const other = "tenant-x/other-proxy";
    publish(rig.cache, GROUP, rendered([ALPHA]));
    publish(rig.cache, other, rendered([GAMMA]));
    const a = envoy(rig.address, "a-0", GROUP);
    const b = envoy(rig.address, "b-0", other, { protocol: "delta" });
    await a.waitForVersions(versionsOf(rig.cache, GROUP));
    await b.waitForVersions(versionsOf(rig.cache, other));
    const address = rig.address;
    const ids = async (req: object): Promise<string[]> => (await fetchClientStatus(address, req)).map((c) => c.node.id);

    await eventually(async () => ((await ids({})).length === 2 ? true : undefined), "two nodes");
    expect(await ids({ node_matchers: [{ node_id: { exact: "a-0" } }] })).toEqual(["a-0"]);
    expect(await ids({ node_matchers: [{ node_id: { safe_regex: { regex: "[ab]-\\d" } } }] })).toEqual(["a-0", "b-0"]);
    expect(await ids({ node_matchers: [{ node_id: { prefix: "B-", ignore_case: true } }] })).toEqual(["b-0"]);
    const byCluster = {
      node_metadatas: [{ path: [{ key: "cluster" }], value: { string_match: { prefix: "tenant-x/" } } }],
    };
    expect(await ids({ node_matchers: [byCluster] })).toEqual(["b-0"]);
    // OR across matchers.
    expect(await ids({ node_matchers: [byCluster, { node_id: { exact: "a-0" } }] })).toEqual(["a-0", "b-0"]);

    const lean = await fetchClientStatus(address, { exclude_resource_contents: true });
    const all = lean.flatMap((c) => c.generic_xds_configs ?? []);
    expect(all.length).toBeGreaterThan(0);
    expect(all.every((e) => e.xds_config === undefined)).toBe(true);

    await expect(
      fetchClientStatus(address, { node_matchers: [{ node_id: { safe_regex: { regex: "(" } } }] }),
    ).rejects.toMatchObject({ code: GrpcStatus.INVALID_ARGUMENT });
  });

  test("StreamClientStatus answers every request on the stream", async () => {
    rig = await startIntrospectRig();
    publish(rig.cache, GROUP, rendered([ALPHA]));
    const c = envoy(rig.address, "envoy-0", GROUP);
    await c.waitForVersions(versionsOf(rig.cache, GROUP));
    const Ctor = makeClientConstructor(introspectionProtos().csds, CSDS_SERVICE);
    const client = new Ctor(rig.address, credentials.createInsecure());
    openGrpc.push(client);
    const call = (
      client as unknown as { StreamClientStatus: () => ClientDuplexStream<object, { config?: CsdsClientConfig[] }> }
    ).StreamClientStatus();
    const responses: { config?: CsdsClientConfig[] }[] = [];
    const got = (n: number): Promise<void> =>
      new Promise((resolve) => {
        const check = (): void => {
          if (responses.length >= n) resolve();
          else setTimeout(check, 10);
        };
        check();
      });
    call.on("data", (r: { config?: CsdsClientConfig[] }) => {
      responses.push(r);
    });
    // The stream must not fail while the test reads it; the rig's teardown then drops it.
    const errors: unknown[] = [];
    call.on("error", (e: unknown) => errors.push(e));
    call.write({});
    await got(1);
    call.write({ node_matchers: [{ node_id: { exact: "nobody" } }] });
    await got(2);
    expect(errors).toEqual([]);
    call.end();
    expect(responses[0]?.config?.map((x) => x.node.id)).toEqual(["envoy-0"]);
    expect(responses[1]?.config ?? []).toEqual([]);
  });
});
