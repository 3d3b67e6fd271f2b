// For command tests: runs argv in process against a tree of the given commands (built with fake deps), capturing
// what the command prints. Errors (a USAGE refusal, a command's own) are thrown as the CLI's runner would get them.
import type { CommandSpec, GroupSpec } from "./command.js";
import { invoke } from "./invoke.js";

export interface InProcessRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `argv` (words below "ivoai") against a tree of `children`, with `env` as the environment. */
export async function runInProcess(
  children: (CommandSpec | GroupSpec)[],
  argv: readonly string[],
  env: NodeJS.ProcessEnv = {},
): Promise<InProcessRun> {
  const root: GroupSpec = { kind: "group", name: "ivoai", summary: "commands under test", children };
  const printed = { stdout: "", stderr: "" };
  const code = await invoke(root, argv, {
    env,
    stdout: (text) => {
      printed.stdout += text;
    },
    stderr: (text) => {
      printed.stderr += text;
    },
    stopSignal: () => new Promise<NodeJS.Signals>(() => {}),
  });
  return { code, ...printed };
}

/** `commands` in a group named `name` (e.g. "server"), as the real tree nests them. */
export function group(name: string, children: (CommandSpec | GroupSpec)[]): GroupSpec {
  return { kind: "group", name, summary: name, children };
}
