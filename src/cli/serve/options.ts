// What `oooi serve` is given (its flags, parsed).
import type { TlsFiles } from "../../xds/server/tls.js";

export interface ServeOptions {
  readonly manifests: string;
  readonly out?: string;
  readonly debounceMs: number;
  /** Per-file size limit of the manifests (--max-manifest-bytes); default DEFAULT_MAX_MANIFEST_BYTES. */
  readonly maxManifestBytes?: number;
  /** Drive a local kea-dhcp4 through this control socket. */
  readonly keaSocket?: string;
  /** Interface the local Kea serves on, replacing the DHCPServer's. */
  readonly dhcpInterface?: string;
  /** DHCPServer ("namespace/name") the local Kea serves; default the first with DHCP enabled. */
  readonly dhcpServer?: string;
  readonly keaHooksDir?: string;
  readonly keaLeaseFile?: string;
  /** Render TLS listeners with filter_chain_matcher (--filter-chain-matcher). */
  readonly filterChainMatcher?: boolean;
  /** Answer DNS here (host:port) with the split-horizon views; undefined = no responder. */
  readonly dnsListen?: { readonly host: string; readonly port: number };
  /** DNSServer ("namespace/name") the responder serves; default the first with DNS enabled. */
  readonly dnsServer?: string;
  /** Serve ADS here ("host:port", port 0 picks one); undefined = no xDS server. */
  readonly xdsListen?: string;
  /** TLS (certificate and key) or mutual TLS (and a client CA) on the ADS port, read again as they change. */
  readonly xdsTls?: TlsFiles;
  /** Authorize xDS calls by the client certificate's identity (with mTLS credentials). */
  readonly xdsRequireIdentity?: boolean;
  /** --xds-max-connections and --xds-max-names-per-stream (the server's defaults when absent). */
  readonly xdsMaxConnections?: number;
  readonly xdsMaxNamesPerStream?: number;
  /** --dns-max-tcp-connections (the responder's default when absent). */
  readonly dnsMaxTcpConnections?: number;
  /** --dns-max-tcp-per-client (the responder's default when absent). */
  readonly dnsMaxTcpPerClient?: number;
  /** --dns-udp-processes: processes answering UDP, serve's own included (1 when absent). */
  readonly dnsUdpProcesses?: number;
  /** Serve /metrics (Prometheus) here; undefined = none. */
  readonly httpListen?: { readonly host: string; readonly port: number };
  /** Host names the HTTP port answers besides IP literals and localhost (DNS-rebinding defence). */
  readonly httpAllowHosts?: readonly string[];
  /** Live status pages served at once (default DEFAULT_MAX_EVENT_CLIENTS). */
  readonly httpMaxEventClients?: number;
}
