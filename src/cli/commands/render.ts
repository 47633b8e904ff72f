// `oooi render`: its flags and help. The render itself (../render.ts) is loaded when it runs.
import { Option, type Command } from "commander";
import { DEFAULT_XDS_ADDRESS, splitHostPort } from "../../envoy/xds-address.js";
import { dialHostPort, filterChainMatcherOption, maxManifestBytesOption } from "../options.js";

/** What `oooi render` is given. */
export interface RenderFlags {
  readonly manifests: string;
  readonly out: string;
  readonly keaHooksDir?: string;
  readonly force?: boolean;
  readonly strict?: boolean;
  readonly xdsAddress?: { host: string; port: number };
  readonly maxManifestBytes?: number;
  readonly filterChainMatcher?: boolean;
}

/** Adds `oooi render` to `program`. */
export function registerRenderCommand(program: Command): void {
  program
    .command("render")
    .summary("render every Infra of a manifest folder, file or stdin once, and exit")
    .description(
      "Render every Infra found in a manifest directory, once, and exit.\n\n" +
        "Writes, per generated child object, under OUT/<namespace>/:\n" +
        "  <infra>-proxy/envoy.json      Envoy listeners, clusters, endpoints, routes (proto3 JSON)\n" +
        "  <infra>-proxy/bootstrap.yaml  Envoy bootstrap for its node group (--xds-address)\n" +
        "  <infra>-dns/Corefile, zones   CoreDNS ConfigMap data (VLAN and pod-network views)\n" +
        "  <infra>-dhcp/kea-dhcp4.json   Kea DHCPv4 configuration\n\n" +
        "OUT/status.json holds the Ready condition and problems of every object.\n\n" +
        "Every problem is printed on stderr as FILE:LINE:COLUMN: OBJECT: FIELD: MESSAGE (Reason), typos with " +
        "the field they probably meant; status.json holds the same.\n\n" +
        "Exit status: 0 rendered (even when some objects have problems, unless --strict), " +
        "1 --strict and some object has an error, or the output cannot be written, " +
        "2 a manifest cannot be read (the message names file and line) or --out is refused.\n\n" +
        "--out may not be, contain or lie inside --manifests. oooi lists the files it writes in OUT/.oooi-index.json " +
        "and on the next render removes only those that are no longer rendered; your own files in OUT stay.\n\n" +
        "Each set is written whole into a new folder OUT/..<timestamp> and switched in at once through the symlink " +
        "OUT/..data (as Kubernetes updates ConfigMap volumes); OUT/<namespace>, OUT/status.json are symlinks into it, " +
        "so readers never see a mix of two renders. A write that fails (e.g. a full disk) names the file and leaves " +
        "the previous set as it was.",
    )
    .requiredOption(
      "--manifests <dir|file|->",
      "a folder of YAML/JSON manifests (read recursively), one file, or - for standard input: Infra, InfraClusterAttachment and the observed HostedCluster, NodePool, Machine, VirtualMachineInstance, Service, Namespace objects",
    )
    .requiredOption("--out <dir>", "output folder: new, empty, or one an earlier render wrote")
    .option("--force", "write into a non-empty folder that holds no earlier render (its other files are kept)")
    .option("--strict", "exit 1 when any object has a problem of severity error (for CI, like istioctl analyze)")
    .option("--kea-hooks-dir <dir>", "directory holding libdhcp_lease_cmds.so in the Kea image")
    .addOption(
      new Option("--xds-address <host:port>", "xDS server the bootstrap.yaml files point at")
        .argParser(dialHostPort)
        .default(splitHostPort(DEFAULT_XDS_ADDRESS), DEFAULT_XDS_ADDRESS),
    )
    .addOption(maxManifestBytesOption())
    .addOption(filterChainMatcherOption())
    .action(async (opts: RenderFlags) => {
      const { renderCommand } = await import("../render.js");
      process.exitCode = await renderCommand(opts, (line) => process.stderr.write(`${line}\n`));
    });
}
