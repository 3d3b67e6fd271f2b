// The runner: resolves argv against the command tree (loading a command's module only to run it) and maps
// errors to exit codes (0 ok, 1 failure, 2 usage).

import { redactText } from "../shared/redact.js";
import { terminalJson, terminalText } from "../shared/terminal-text.js";
import { IVOAI_VERSION } from "../shared/version.js";
import { BUNDLED_COMMAND_MANIFEST } from "./bundled-manifest.js";
import type { GroupSpec } from "./command.js";
import { completionCommand } from "./commands/completion.js";
import { describeError } from "./error-text.js";
import { invoke } from "./invoke.js";
import { type BuiltinCommand, extractManifest, hydrateManifest, type ManifestGroup } from "./manifest.js";

/** Commands the CLI makes itself (by their words below the root): completion needs the tree it completes. */
const BUILTIN_COMMANDS: Record<string, BuiltinCommand> = { completion: completionCommand };

/** The manifest of the full tree in src/cli/tree.ts, every command module loaded (what the build embeds). */
export async function sourceManifest(): Promise<ManifestGroup> {
  const { COMMAND_TREE } = await import("./tree.js");
  return extractManifest(COMMAND_TREE, Object.keys(BUILTIN_COMMANDS));
}

let tree: Promise<GroupSpec> | undefined;

/** The command tree: from the manifest embedded by the build, else (from source) extracted now. */
export function commandTree(): Promise<GroupSpec> {
  tree ??= (async () =>
    hydrateManifest(BUNDLED_COMMAND_MANIFEST ?? (await sourceManifest()), BUILTIN_COMMANDS))();
  return tree;
}

const VERSION_FLAGS = ["--version", "-V", "-v"];

/** --json anywhere before a "--" (even on a command line that fails to parse) asks for JSON errors too. */
function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf("--");
  return (end === -1 ? argv : argv.slice(0, end)).includes("--json");
}

/** Runs one invocation and returns the exit status: 0 ok, 1 failure, 2 usage. */
export async function runCli(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const debug = argv.includes("--debug");
  const json = wantsJson(argv);
  try {
    const modifiers = argv.filter((arg) => arg === "--json" || arg === "--debug");
    const versionFlag =
      argv.length === modifiers.length + 1 && argv.some((arg) => VERSION_FLAGS.includes(arg));
    if (versionFlag && modifiers.length === 0) {
      process.stdout.write(`${IVOAI_VERSION}\n`);
      return 0;
    }
    // `--version --json` is `version --json`.
    return await invoke(await commandTree(), versionFlag ? ["version", ...modifiers] : argv, {
      env,
      stdout: (text) => process.stdout.write(text),
      stderr: (text) => process.stderr.write(text),
      stopSignal: () =>
        new Promise<NodeJS.Signals>((resolve) => {
          process.once("SIGINT", () => resolve("SIGINT"));
          process.once("SIGTERM", () => resolve("SIGTERM"));
        }),
    });
  } catch (error) {
    return reportError(error, { debug, json, server: argv[0] === "server" });
  }
}

function reportError(error: unknown, how: { debug: boolean; json: boolean; server: boolean }): number {
  const report = describeError(error, { server: how.server });
  // A message may quote what a server, an agent or a file name said: redacted, control characters escaped.
  const write = (text: string) =>
    process.stderr.write(`${terminalText(redactText(text), { multiline: true })}\n`);
  if (how.json) {
    const body = { error: { code: report.code, message: redactText(report.message) } };
    process.stderr.write(`${terminalJson(JSON.stringify(body))}\n`);
  } else {
    write(`ivoai: ${report.message}`);
  }
  if (how.debug && error instanceof Error && error.stack) write(error.stack);
  return report.exitCode;
}
