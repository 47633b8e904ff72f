// The snapshot a running xDS server (serve / operator) serves to one node group, fetched the way
// an Envoy gets it: one ADS SotW stream as node `oooi-verify` of that group — listeners and
// clusters by wildcard, then the EDS clusters' assignments — ACKed, then closed. What `verify`
// and `explain` read is therefore what a connecting Envoy would be sent, not a local rendering.
import { Client, Metadata, credentials as grpcCredentials, type ChannelCredentials } from "@grpc/grpc-js";
import {
  ADS_SOTW_METHOD,
  decodeDiscoveryResponse,
  encodeDiscoveryRequest,
  type DiscoveryRequestInit,
  type DiscoveryResponseIn,
} from "../dhcp/agent/ads-messages.js";
import { CLUSTER_TYPE_URL, ENDPOINT_TYPE_URL, LISTENER_TYPE_URL, decodeResource } from "../xds/resource/protos.js";
import { asString, get } from "../xds/resource/json.js";
import { PROBE_USER_AGENT } from "../xds/client-status.js";

/** The Envoy resources of one node group, as proto3 JSON, with the version of each type. */
export interface FetchedSnapshot {
  readonly listeners: readonly Record<string, unknown>[];
  readonly clusters: readonly Record<string, unknown>[];
  readonly endpoints: readonly Record<string, unknown>[];
  /** Type URL → version_info of the response. */
  readonly versions: ReadonlyMap<string, string>;
}

export interface FetchOptions {
  readonly address: string;
  readonly group: string;
  readonly credentials?: ChannelCredentials;
  readonly timeoutMs: number;
}

/** Node id the fetch declares; `oooi debug nodes` shows it while the fetch runs. */
export const FETCH_NODE_ID = "oooi-verify";

/** Fetches LDS, CDS and the EDS of every EDS cluster; rejects on a stream error or timeout. */
export function fetchSnapshot(options: FetchOptions): Promise<FetchedSnapshot> {
  const client = new Client(options.address, options.credentials ?? grpcCredentials.createInsecure());
  const call = client.makeBidiStreamRequest(
    ADS_SOTW_METHOD,
    encodeDiscoveryRequest,
    decodeDiscoveryResponse,
    new Metadata(),
  );
  const got = new Map<string, DiscoveryResponseIn>();
  const node = { id: FETCH_NODE_ID, cluster: options.group, user_agent_name: PROBE_USER_AGENT };
  const request = (typeUrl: string, names: readonly string[], ack?: DiscoveryResponseIn): void => {
    const req: DiscoveryRequestInit = {
      version_info: ack?.versionInfo ?? "",
      node,
      resource_names: names,
      type_url: typeUrl,
      response_nonce: ack?.nonce ?? "",
    };
    call.write(req);
  };
  return new Promise<FetchedSnapshot>((resolve, reject) => {
    let edsNames: string[] | undefined;
    const finish = (f: () => void): void => {
      clearTimeout(timer);
      call.removeAllListeners();
      call.on("error", () => undefined);
      call.cancel();
      client.close();
      f();
    };
    const timer = setTimeout(() => {
      finish(() => {
        const missing = [LISTENER_TYPE_URL, CLUSTER_TYPE_URL].filter((t) => !got.has(t));
        reject(
          new Error(
            `no ${missing.length > 0 ? "listeners/clusters" : "endpoints"} for node group ${options.group} from ${options.address} ` +
              `within ${String(options.timeoutMs)} ms (is the group's snapshot published?)`,
          ),
        );
      });
    }, options.timeoutMs);
    const maybeDone = (): void => {
      if (!got.has(LISTENER_TYPE_URL) || edsNames === undefined) return;
      if (edsNames.length > 0 && !got.has(ENDPOINT_TYPE_URL)) return;
      finish(() => {
        resolve(snapshotOf(got));
      });
    };
    call.on("data", (res: DiscoveryResponseIn) => {
      got.set(res.typeUrl, res);
      request(res.typeUrl, res.typeUrl === ENDPOINT_TYPE_URL ? (edsNames ?? []) : [], res);
      if (res.typeUrl === CLUSTER_TYPE_URL && edsNames === undefined) {
        edsNames = res.resources
          .map((r) => decodeResource(r.typeUrl, r.value))
          .filter((c) => get(c, "type") === "EDS" || get(c, "eds_cluster_config") !== undefined)
          .map((c) => asString(get(c, "name")) ?? "")
          .sort();
        if (edsNames.length > 0) request(ENDPOINT_TYPE_URL, edsNames);
      }
      maybeDone();
    });
    call.on("error", (e: Error) => {
      finish(() => {
        reject(new Error(`xDS stream to ${options.address} failed: ${e.message}`));
      });
    });
    request(CLUSTER_TYPE_URL, []);
    request(LISTENER_TYPE_URL, []);
  });
}

function snapshotOf(got: ReadonlyMap<string, DiscoveryResponseIn>): FetchedSnapshot {
  const decode = (typeUrl: string): Record<string, unknown>[] =>
    (got.get(typeUrl)?.resources ?? []).map((r) => decodeResource(r.typeUrl, r.value));
  return {
    listeners: decode(LISTENER_TYPE_URL),
    clusters: decode(CLUSTER_TYPE_URL),
    endpoints: decode(ENDPOINT_TYPE_URL),
    versions: new Map([...got].map(([t, r]) => [t, r.versionInfo])),
  };
}
