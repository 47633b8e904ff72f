#!/usr/bin/env node
// The `oooi` command line.
import { Command } from "commander";
import { renderCommand } from "./render.js";

const program = new Command()
  .name("oooi")
  .description(
    "DHCP (Kea), split-horizon DNS (CoreDNS) and a TLS-passthrough SNI proxy (Envoy over xDS) for\n" +
    "OpenShift Hosted Control Planes whose KubeVirt workers live on an isolated VLAN.",
  )
  .showHelpAfterError("(run with --help for usage)");

program
  .command("render")
  .description(
    "Render every Infra found in a manifest directory, once, and exit.\n\n" +
    "Writes, per generated child object:\n" +
    "  OUT/<namespace>/<infra>-proxy/envoy.json      Envoy listeners, clusters, endpoints, routes (proto3 JSON)\n" +
    "  OUT/<namespace>/<infra>-dns/Corefile + zones   CoreDNS ConfigMap data (VLAN view + pod-network view)\n" +
    "  OUT/<namespace>/<infra>-dhcp/kea-dhcp4.json    Kea DHCPv4 configuration\n" +
    "  OUT/status.json                                Ready condition and problems of every object\n\n" +
    "Exit status: 0 rendered (even when some objects have problems: see status.json),\n" +
    "2 a manifest cannot be read (the message names file and line), 1 the output cannot be written.",
  )
  .requiredOption("--manifests <dir>", "directory of YAML/JSON manifests: Infra, InfraClusterAttachment and the observed HostedCluster, NodePool, Machine, VirtualMachineInstance, Service, Namespace objects")
  .requiredOption("--out <dir>", "output directory (replaced)")
  .option("--kea-hooks-dir <dir>", "directory holding libdhcp_lease_cmds.so in the Kea image")
  .action(async (opts: { manifests: string; out: string; keaHooksDir?: string }) => {
    process.exitCode = await renderCommand(opts, (line) => process.stderr.write(`${line}\n`));
  });

await program.parseAsync(process.argv);
