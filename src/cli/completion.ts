// `oooi completion bash|zsh`: a completion script generated from the command tree itself, so it
// never lists a flag the CLI does not have. zsh runs the bash script through bashcompinit.
import type { Command, Option } from "commander";

/** One command of the tree as completion sees it. */
export interface CompletionCommand {
  /** Words from the root, e.g. ["debug", "nodes"]; [] for `oooi` itself. */
  readonly path: readonly string[];
  readonly commands: readonly string[];
  readonly flags: readonly CompletionFlag[];
}

export interface CompletionFlag {
  /** Long and short spellings. */
  readonly names: readonly string[];
  /** What follows it: nothing, one of `choices`, a file or folder, or anything else (not completed). */
  readonly value: "none" | "choice" | "file" | "other";
  readonly choices: readonly string[];
}

/** The tree under `root`, depth first, `root` first. */
export function completionTree(root: Command, path: readonly string[] = []): CompletionCommand[] {
  const commands = root.commands.map((c) => c.name());
  const flags: CompletionFlag[] = [
    ...root.options.map(flagOf),
    { names: ["--help", "-h"], value: "none", choices: [] },
  ];
  const here: CompletionCommand = { path, commands: path.length === 0 ? [...commands, "help"] : commands, flags };
  return [here, ...root.commands.flatMap((c) => completionTree(c, [...path, c.name()]))];
}

function flagOf(o: Option): CompletionFlag {
  const names = [o.long, o.short].filter((n): n is string => n !== undefined);
  if (!o.required && !o.optional) return { names, value: "none", choices: [] };
  if (o.argChoices !== undefined) return { names, value: "choice", choices: o.argChoices };
  // The value's placeholder says what it is: <file>, <dir>, <dir|file>, <path> are completed as paths.
  const placeholder = /<([^>]+)>/.exec(o.flags)?.[1] ?? "";
  const file = placeholder.split("|").some((p) => ["file", "dir", "path"].includes(p));
  return { names, value: file ? "file" : "other", choices: [] };
}

const quote = (words: readonly string[]): string => `"${words.join(" ")}"`;

/** The bash script: `source <(oooi completion bash)`. */
export function bashCompletion(tree: readonly CompletionCommand[], program = "oooi"): string {
  const fn = `_${program.replace(/[^A-Za-z0-9_]/g, "_")}`;
  const key = (c: CompletionCommand): string => quote(c.path);
  const commandCases = tree.map((c) => `    ${key(c)}) echo ${quote(c.commands)} ;;`);
  const flagCases = tree.map((c) => `    ${key(c)}) echo ${quote(c.flags.flatMap((f) => f.names))} ;;`);
  const valueCases = tree.flatMap((c) =>
    c.flags
      .filter((f) => f.value !== "none")
      .map((f) => {
        const pattern = f.names.map((n) => `"${c.path.join(" ")}|${n}"`).join("|");
        const answer = f.value === "choice" ? `choice ${f.choices.join(" ")}` : f.value;
        return `    ${pattern}) echo ${quote([answer])} ;;`;
      }),
  );
  return `# ${program} completion for bash. Load it with: source <(${program} completion bash)
${fn}_commands() {
  case "$1" in
${commandCases.join("\n")}
  esac
}
${fn}_flags() {
  case "$1" in
${flagCases.join("\n")}
  esac
}
# What follows a flag: "choice A B …", "file", "other"; nothing when it takes no value.
${fn}_value() {
  case "$1|$2" in
${valueCases.join("\n")}
  esac
}
${fn}() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" i w flag kind skip=0
  for (( i = 1; i < COMP_CWORD; i++ )); do
    w="\${COMP_WORDS[i]}"
    if (( skip )); then skip=0; continue; fi
    case "$w" in
      --*=*) ;;
      -*) [[ -n "$(${fn}_value "$path" "$w")" ]] && skip=1 ;;
      *) [[ " $(${fn}_commands "$path") " == *" $w "* ]] && path="\${path:+$path }$w" ;;
    esac
  done
  flag=""
  if [[ "$cur" == --*=* ]]; then flag="\${cur%%=*}"; cur="\${cur#*=}";
  elif (( COMP_CWORD > 1 )) && [[ "\${COMP_WORDS[COMP_CWORD-1]}" == -* ]]; then flag="\${COMP_WORDS[COMP_CWORD-1]}"; fi
  kind=""
  [[ -n "$flag" ]] && kind="$(${fn}_value "$path" "$flag")"
  case "$kind" in
    choice\\ *) COMPREPLY=( $(compgen -W "\${kind#choice }" -- "$cur") ); return ;;
    file) type compopt >/dev/null 2>&1 && compopt -o filenames; COMPREPLY=( $(compgen -f -- "$cur") ); return ;;
    other) COMPREPLY=(); return ;;
  esac
  if [[ "$cur" == -* ]]; then COMPREPLY=( $(compgen -W "$(${fn}_flags "$path")" -- "$cur") ); return; fi
  COMPREPLY=( $(compgen -W "$(${fn}_commands "$path")" -- "$cur") )
}
complete -F ${fn} ${program}
`;
}

/** The zsh script: zsh's bashcompinit runs the bash one. `source <(oooi completion zsh)`. */
export function zshCompletion(tree: readonly CompletionCommand[], program = "oooi"): string {
  return `# ${program} completion for zsh. Load it with: source <(${program} completion zsh)
autoload -U +X compinit && { (( $+functions[compdef] )) || compinit; }
autoload -U +X bashcompinit && bashcompinit
${bashCompletion(tree, program).split("\n").slice(1).join("\n")}`;
}
