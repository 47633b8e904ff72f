// The DNS responder's default limits, apart from it so the command line shows them in --help
// without loading the responder.

/** Default of maxTcpConnections (`serve --dns-max-tcp-connections`). */
export const DEFAULT_MAX_TCP_CONNECTIONS = 1024;
/** Default of maxTcpConnectionsPerClient (`serve --dns-max-tcp-per-client`). */
export const DEFAULT_MAX_TCP_CONNECTIONS_PER_CLIENT = 16;
/** The most processes answering UDP (`serve --dns-udp-processes`), the responder's own included. */
export const MAX_UDP_PROCESSES = 16;
