// One invocation run in this process: argv resolved against a command tree, the command's run given a context
// made of what the caller passes (environment, where output goes, the stop signal). The CLI's entry passes the
// real process; a test passes its own tree, environment and capturing output (see flags.test.ts).
import { type GroupSpec, resolveInvocation } from "./command.js";
import { createOutput } from "./output.js";

/** The process around one invocation. */
export interface InvocationIo {
  env: NodeJS.ProcessEnv;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Called only when a command runs: resolves when the user asks it to stop. */
  stopSignal: () => Promise<NodeJS.Signals>;
}

/** Resolves `argv` under `root` and runs it: help is printed, a command's status returned; errors are thrown. */
export async function invoke(root: GroupSpec, argv: readonly string[], io: InvocationIo): Promise<number> {
  const invocation = resolveInvocation(root, argv);
  if (invocation.kind === "help") {
    io.stdout(`${invocation.text}\n`);
    return 0;
  }
  const { json, debug, options, positionals } = invocation;
  const out = createOutput({ json, stdout: io.stdout, stderr: io.stderr });
  const code = await invocation.command.run({
    options,
    positionals,
    json,
    debug,
    out,
    env: io.env,
    stopSignal: io.stopSignal(),
  });
  return code ?? 0;
}
