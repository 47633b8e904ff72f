// A client process of the xDS benchmark: opens the streams it is told to, each on its own HTTP/2
// connection like separate Envoy processes, and behaves like Envoy on ADS — wildcard CDS and LDS,
// EDS for the clusters it receives (subscribed before the CDS ACK), ACK of every response — while
// decoding only response heads. Every response is reported to the parent with its receive time.
// Run with child_process.fork; the parent drives it over IPC (see protocol.ts).
import { Client, credentials, Metadata, type ClientDuplexStream } from "@grpc/grpc-js";
import {
  CLUSTER_TYPE_URL,
  ENDPOINT_TYPE_URL,
  LISTENER_TYPE_URL,
  ROUTE_TYPE_URL,
} from "../../src/xds/resource/protos.js";
import { ENVOY_CHANNEL_OPTIONS, METHODS } from "../../test/support/envoy/raw.js";
import {
  encodeDeltaRequest,
  encodeSotwRequest,
  type DeltaRequestInit,
  type SotwRequestInit,
} from "../../test/support/envoy/wire.js";
import { BARE_METHOD } from "./bare.js";
import { decodeHead } from "./decode.js";
import { nowMs, TYPE_CODES, type FromClients, type Receipt, type StreamSpec, type ToClients } from "./protocol.js";

// Envoy's receive windows (256 MiB, see ENVOY_CHANNEL_OPTIONS): the server's push is measured
// against the flow control Envoy grants it, not grpc-js's 64 KiB default.
const CHANNEL_OPTIONS = {
  ...ENVOY_CHANNEL_OPTIONS,
  "grpc.max_receive_message_length": -1,
  "grpc.max_send_message_length": -1,
};

function typeCode(typeUrl: string): number {
  if (typeUrl === CLUSTER_TYPE_URL) return TYPE_CODES.cluster;
  if (typeUrl === ENDPOINT_TYPE_URL) return TYPE_CODES.endpoint;
  if (typeUrl === LISTENER_TYPE_URL) return TYPE_CODES.listener;
  if (typeUrl === ROUTE_TYPE_URL) return TYPE_CODES.route;
  return TYPE_CODES.other;
}

let pending: Receipt[] = [];
let flushing = false;

function send(msg: FromClients): void {
  process.send?.(msg);
}

// Receipts of one I/O turn go to the parent as one message.
function report(r: Receipt): void {
  pending.push(r);
  if (flushing) return;
  flushing = true;
  setImmediate(() => {
    flushing = false;
    const receipts = pending;
    pending = [];
    send({ op: "receipts", receipts });
  });
}

interface Open {
  readonly client: Client;
  readonly call: ClientDuplexStream<unknown, Buffer>;
}

const open = new Map<number, Open>();
const identity = (b: Buffer): Buffer => b;

function start(spec: StreamSpec): void {
  const client = new Client(spec.address, credentials.createInsecure(), CHANNEL_OPTIONS);
  const node = { id: spec.node, cluster: spec.group, user_agent_name: "oooi-bench" };
  if (spec.kind === "delta") {
    const call = client.makeBidiStreamRequest(METHODS.adsDelta, encodeDeltaRequest, identity, new Metadata());
    runDelta(spec, call, node);
    track(spec, client, call as ClientDuplexStream<unknown, Buffer>);
  } else {
    const method = spec.kind === "bare" ? BARE_METHOD : METHODS.adsSotw;
    const call = client.makeBidiStreamRequest(method, encodeSotwRequest, identity, new Metadata());
    if (spec.kind === "bare") runBare(spec, call);
    else runSotw(spec, call, node);
    track(spec, client, call as ClientDuplexStream<unknown, Buffer>);
  }
}

function track(spec: StreamSpec, client: Client, call: ClientDuplexStream<unknown, Buffer>): void {
  open.set(spec.id, { client, call });
  call.on("status", (s: { code: number; details: string }) => {
    if (open.delete(spec.id)) send({ op: "ended", id: spec.id, code: s.code, details: s.details });
  });
  call.on("error", () => {
    /* reported through "status" */
  });
}

function runSotw(
  spec: StreamSpec,
  call: ClientDuplexStream<SotwRequestInit, Buffer>,
  node: NonNullable<SotwRequestInit["node"]>,
): void {
  let edsNames: string[] = [];
  let edsVersion = "";
  let edsNonce = "";
  call.on("data", (bytes: Buffer) => {
    const at = nowMs();
    const head = decodeHead(bytes, false, /* cluster names for EDS */ true);
    report([spec.id, typeCode(head.typeUrl), head.version, at, bytes.length, head.count]);
    if (head.typeUrl === CLUSTER_TYPE_URL) {
      // Envoy asks for the new clusters' endpoints before it ACKs the clusters.
      const names = [...head.names].sort();
      if (names.join("\n") !== edsNames.join("\n")) {
        edsNames = names;
        call.write({
          type_url: ENDPOINT_TYPE_URL,
          resource_names: edsNames,
          version_info: edsVersion,
          response_nonce: edsNonce,
        });
      }
    }
    if (head.typeUrl === ENDPOINT_TYPE_URL) {
      edsVersion = head.version;
      edsNonce = head.nonce;
      call.write({
        type_url: ENDPOINT_TYPE_URL,
        resource_names: edsNames,
        version_info: head.version,
        response_nonce: head.nonce,
      });
    } else {
      call.write({ type_url: head.typeUrl, version_info: head.version, response_nonce: head.nonce });
    }
  });
  call.write({ node, type_url: CLUSTER_TYPE_URL });
  call.write({ type_url: LISTENER_TYPE_URL });
}

function runDelta(
  spec: StreamSpec,
  call: ClientDuplexStream<DeltaRequestInit, Buffer>,
  node: NonNullable<DeltaRequestInit["node"]>,
): void {
  call.on("data", (bytes: Buffer) => {
    const at = nowMs();
    const head = decodeHead(bytes, true, true);
    report([spec.id, typeCode(head.typeUrl), head.version, at, bytes.length, head.count]);
    if (head.typeUrl === CLUSTER_TYPE_URL && (head.names.length > 0 || head.removed.length > 0)) {
      call.write({
        type_url: ENDPOINT_TYPE_URL,
        resource_names_subscribe: [...head.names],
        resource_names_unsubscribe: [...head.removed],
      });
    }
    call.write({ type_url: head.typeUrl, response_nonce: head.nonce });
  });
  call.write({ node, type_url: CLUSTER_TYPE_URL });
  call.write({ type_url: LISTENER_TYPE_URL });
}

// The bare baseline: same decoding and the same kind of answer, no protocol state.
function runBare(spec: StreamSpec, call: ClientDuplexStream<SotwRequestInit, Buffer>): void {
  call.on("data", (bytes: Buffer) => {
    const at = nowMs();
    const head = decodeHead(bytes, false, false);
    report([spec.id, typeCode(head.typeUrl), head.version, at, bytes.length, head.count]);
    call.write({ type_url: head.typeUrl, version_info: head.version, response_nonce: head.nonce });
  });
  call.write({ type_url: LISTENER_TYPE_URL });
}

function closeAll(): void {
  for (const { client, call } of open.values()) {
    call.cancel();
    client.close();
  }
  open.clear();
}

process.on("message", (msg: ToClients) => {
  if (msg.op === "open") for (const s of msg.streams) start(s);
  else if (msg.op === "close") {
    closeAll();
    send({ op: "closed" });
  } else {
    closeAll();
    process.exit(0);
  }
});
process.on("disconnect", () => {
  closeAll();
  process.exit(0);
});
