// `oooi completion bash|zsh`: prints a completion script for the shell, generated from this
// command tree (../completion.ts, loaded when it runs).
import { Argument, type Command } from "commander";

/** Adds `oooi completion` to `program`; call it last, so the script knows every command. */
export function registerCompletionCommand(program: Command): Command {
  return program
    .command("completion")
    .summary("print a shell completion script (bash or zsh)")
    .description(
      "Print a completion script for commands, subcommands, flags and flag values (-o formats, --log-format, " +
        "files for --manifests and the TLS files).\n\n" +
        "  bash:  source <(oooi completion bash)    or save it under /etc/bash_completion.d/oooi\n" +
        "  zsh:   source <(oooi completion zsh)     e.g. in ~/.zshrc",
    )
    .addArgument(new Argument("<shell>", "bash or zsh").choices(["bash", "zsh"]))
    .action(async (shell: "bash" | "zsh") => {
      const { bashCompletion, completionTree, zshCompletion } = await import("../completion.js");
      const tree = completionTree(program);
      process.stdout.write(shell === "bash" ? bashCompletion(tree) : zshCompletion(tree));
    });
}
