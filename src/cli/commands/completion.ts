// `ivoai completion bash|zsh|fish`: prints a completion script generated from the command tree.
import type { CommandSpec, GroupSpec } from "../command.js";
import { completionScript, SHELLS, type Shell } from "../completion.js";

/** The command, given the tree it completes (a getter: the tree contains this command). */
export function completionCommand(tree: () => GroupSpec): CommandSpec {
  return {
    kind: "command",
    name: "completion",
    summary: "Print a shell completion script (bash, zsh or fish)",
    description:
      "bash:  source <(ivoai completion bash)    (add it to ~/.bashrc)\n" +
      "zsh:   source <(ivoai completion zsh)     (after compinit, in ~/.zshrc)\n" +
      "fish:  ivoai completion fish > ~/.config/fish/completions/ivoai.fish",
    positionals: [
      { name: "SHELL", description: "the shell to complete for", required: true, choices: SHELLS },
    ],
    async run(ctx) {
      ctx.out.line(completionScript(tree(), ctx.positionals[0] as Shell).trimEnd());
      return 0;
    },
  };
}
