// `ivoai completion bash|zsh|fish`: prints a completion script generated from the command tree, or (--values)
// the run-time values the script asks for while completing.
import { type CommandSpec, DYNAMIC_VALUE_KINDS, defineCommand, type GroupSpec } from "../command.js";
import { completionScript, SHELLS, type Shell } from "../completion.js";

/** The command, given the tree it completes (a getter: the tree contains this command). */
export function completionCommand(tree: () => GroupSpec): CommandSpec {
  return defineCommand({
    name: "completion",
    summary: "Print a shell completion script (bash, zsh or fish)",
    description:
      "bash:  source <(ivoai completion bash)    (add it to ~/.bashrc)\n" +
      "zsh:   source <(ivoai completion zsh)     (after compinit, in ~/.zshrc)\n" +
      "fish:  ivoai completion fish > ~/.config/fish/completions/ivoai.fish\n" +
      "The scripts complete server aliases, knowledge sources and pending approval ids by running\n" +
      "'ivoai completion SHELL --values KIND' (read-only; prints nothing when it cannot tell).",
    positionals: [
      { name: "SHELL", description: "the shell to complete for", required: true, choices: SHELLS },
    ],
    options: {
      values: {
        type: "enum",
        value: "KIND",
        choices: DYNAMIC_VALUE_KINDS,
        description: "print the run-time values of KIND, one a line, instead of the script",
      },
      root: {
        type: "string",
        value: "DIR",
        description: "with --values approval-id: the server tree root (default: $IVOAI_SERVER_ROOT or /)",
      },
    },
    async run(ctx) {
      const shell = ctx.positionals[0] as Shell;
      const kind = ctx.options.values;
      if (!kind) {
        ctx.out.line(completionScript(tree(), shell).trimEnd());
        return 0;
      }
      // Loaded only here: the script's own output never needs the stores.
      const { completionValues } = await import("../completion-values.js");
      const text = await completionValues(kind, shell, {
        env: ctx.env,
        root: ctx.options.root,
      });
      if (text) ctx.out.line(text.trimEnd());
      return 0;
    },
  });
}
