// Public surface of the dhcp-agent: the ADS client that feeds one Kea its KeaConfig.
export { AGENT_BACKOFF, AGENT_USER_AGENT, DhcpAgent } from "./agent.js";
export type { AckKind, AgentApplier, AgentEvent, DhcpAgentOptions } from "./agent.js";
export { defaultNodeId } from "./node-id.js";
export { withLocalPaths } from "./local-paths.js";
export type { LocalKeaPaths } from "./local-paths.js";
export { ADS_SOTW_METHOD, INVALID_ARGUMENT, decodeDiscoveryResponse, encodeDiscoveryRequest } from "./ads-messages.js";
export type { DiscoveryRequestInit, DiscoveryResponseIn, NodeInit, PackedResource } from "./ads-messages.js";
