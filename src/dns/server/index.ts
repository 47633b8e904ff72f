// The embedded split-horizon DNS responder: serves a DnsModel exactly as the CoreDNS
// renderer renders it, over UDP and TCP, forwarding every other name upstream.
export { DEFAULT_MAX_TCP_CONNECTIONS, DEFAULT_MAX_TCP_CONNECTIONS_PER_CLIENT, MAX_UDP_PROCESSES } from "./limits.js";
export {
  startDnsResponder,
  type DnsResponder,
  type DnsResponderAddress,
  type DnsResponderOptions,
  type DnsResponderStats,
  UDP_BUFFER_BYTES,
} from "./responder.js";
export { startDnsResponderThread, type ThreadedDnsResponder } from "./thread.js";
