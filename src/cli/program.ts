// The `oooi` command tree. Each command's module here holds only its flags and help; what it runs is
// imported when it runs, so `oooi --help` loads commander and little else (npm run bench:cli).
import { Command, type CommanderError } from "commander";
import { registerCompletionCommand } from "./commands/completion.js";
import { registerDebugCommand } from "./commands/debug.js";
import { registerDhcpAgentCommand } from "./commands/dhcp-agent.js";
import { registerExplainCommand } from "./commands/explain.js";
import { registerOperatorCommand } from "./commands/operator.js";
import { registerRenderCommand } from "./commands/render.js";
import { registerServeCommand } from "./commands/serve.js";
import { registerVerifyCommand } from "./commands/verify.js";
import { registerVersionCommand } from "./commands/version.js";
import { packageVersion } from "./package-version.js";

/** Every command with its flags and help; nothing runs until it is parsed. */
export function buildProgram(): Command {
  const program = new Command()
    .name("oooi")
    .version(packageVersion(), "-v, --version", "print the version of oooi")
    .description(
      "DHCP (Kea), split-horizon DNS (CoreDNS) and a TLS-passthrough SNI proxy (Envoy over xDS) for " +
        "OpenShift Hosted Control Planes whose KubeVirt workers live on an isolated VLAN.",
    )
    .showHelpAfterError("(run with --help for usage)")
    .configureOutput({ getOutHelpWidth: () => helpWidth(process.env["COLUMNS"], process.stdout) })
    .exitOverride(usageExit);

  registerRenderCommand(program);
  registerServeCommand(program);
  registerDhcpAgentCommand(program);
  registerDebugCommand(program);
  registerOperatorCommand(program);
  registerVerifyCommand(program);
  registerExplainCommand(program);
  registerVersionCommand(program);
  registerCompletionCommand(program);
  return program;
}

/**
 * The exit contract of every command (docs/cli.md): 0 ok, 1 a finding, 2 usage or input. Commander
 * exits 1 on its own usage errors (unknown command or flag, missing option or argument, a value its
 * parser refused, a command group without its subcommand); those exit 2. `--help` and `--version`
 * stay 0, and a command's own `program.error(…, { exitCode })` keeps its code. Subcommands inherit
 * this override from `program` when created, so it is set before any of them.
 */
function usageExit(err: CommanderError): never {
  process.exit(err.exitCode === 0 || err.code === "commander.error" ? err.exitCode : 2);
}

/**
 * Columns `--help` wraps to: $COLUMNS when set (as less, ls and git honour it), else the terminal's
 * width, else (a pipe) 80.
 */
export function helpWidth(columns: string | undefined, out: { isTTY?: boolean; columns?: number }): number {
  const asked = Number(columns);
  if (Number.isInteger(asked) && asked > 0) return asked;
  return out.isTTY === true && out.columns !== undefined ? out.columns : 80;
}
