// `oooi version`: this client's version and, over the debug service, the server's. The client
// (../version.ts) is loaded when it runs.
import type { Command } from "commander";
import { DEFAULT_XDS_ADDRESS } from "../../envoy/xds-address.js";
import { outputOption, positiveInt } from "../options.js";
import type { VersionOptions } from "../version.js";
import { withXdsTlsFlags } from "../xds-tls-flags.js";

/** Adds `oooi version` to `program`. */
export function registerVersionCommand(program: Command): Command {
  return withXdsTlsFlags(
    program
      .command("version")
      .summary("print this client's version and the running xDS server's")
      .description(
        "Print the version of this oooi and of the oooi serving xDS at --xds (serve or operator), read over its " +
          "oooi.debug.v1 service: the command it runs and since when. Exit status: 0 both known (or --client), " +
          "1 the server did not answer (the client's version is printed anyway).",
      )
      .option("--xds <host:port>", "address of the xDS server", DEFAULT_XDS_ADDRESS)
      .option("--client", "only this client's version; do not contact a server"),
  )
    .option("--timeout <ms>", "give up on the server after this long", positiveInt, 5000)
    .addOption(outputOption("text"))
    .action(async (opts: VersionOptions) => {
      const { versionCommand } = await import("../version.js");
      process.exitCode = await versionCommand(opts, {
        out: (t) => process.stdout.write(t),
        err: (t) => process.stderr.write(t),
        now: () => Date.now(),
      });
    });
}
