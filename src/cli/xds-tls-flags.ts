// The TLS flags of every command that talks to a running xDS server (debug, verify, explain), so
// each reaches a server that requires TLS or mTLS (the operator's default) the same way.
import type { Command } from "commander";

/** What the flags give. */
export interface XdsTlsOptions {
  readonly tls?: boolean;
  readonly tlsCa?: string;
  readonly tlsCert?: string;
  readonly tlsKey?: string;
}

/** Adds --tls, --tls-ca, --tls-cert and --tls-key to `cmd`. */
export function withXdsTlsFlags(cmd: Command): Command {
  return cmd
    .option(
      "--tls",
      "connect to the xDS server with TLS, trusting the system's CA roots (implied by --tls-ca/--tls-cert)",
    )
    .option("--tls-ca <file>", "PEM CA that signs the xDS server's certificate")
    .option("--tls-cert <file>", "PEM client certificate, when the xDS server requires mTLS")
    .option("--tls-key <file>", "PEM key of --tls-cert");
}
