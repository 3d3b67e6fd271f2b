// The command tree and the runner that maps errors to exit codes (0 ok, 1 failure, 2 usage).

import { redactText } from "../shared/redact.js";
import { terminalJson, terminalText } from "../shared/terminal-text.js";
import { IVOAI_VERSION } from "../shared/version.js";
import { type GroupSpec, resolveInvocation } from "./command.js";
import { agentCommands, hookCommand, sessionGroup } from "./commands/agents.js";
import { autoCommand } from "./commands/auto.js";
import { doctorCommand, projectGroup, routerGroup } from "./commands/client-tools.js";
import { completionCommand } from "./commands/completion.js";
import { connectGroup, disconnectGroup } from "./commands/connect.js";
import { demoCommand } from "./commands/demo.js";
import { executorsCommand } from "./commands/executors.js";
import { installCommands } from "./commands/install.js";
import { orchestratorMcpCommand } from "./commands/orchestrator.js";
import { serverActivationGroup } from "./commands/server-activation.js";
import { serverApprovalsGroup, serverAuditCommand } from "./commands/server-approvals.js";
import { serverBackupGroup, serverRestoreCommand } from "./commands/server-backup.js";
import { serverClientsGroup } from "./commands/server-clients.js";
import { serverConsoleGroup } from "./commands/server-console.js";
import { serverConnectorGroup, serverIngestCommand, serverSearchCommand } from "./commands/server-context.js";
import { serverEnrollmentGroup } from "./commands/server-enrollment.js";
import { serverInitCommand } from "./commands/server-init.js";
import { serverStatusCommand, serverStopCommand, serverSystemdGroup } from "./commands/server-ops.js";
import { serverStartCommand } from "./commands/server-start.js";
import { versionCommand } from "./commands/version.js";
import { describeError } from "./error-text.js";
import { createOutput } from "./output.js";

export const COMMAND_TREE: GroupSpec = {
  kind: "group",
  name: "ivoai",
  summary: `ivoai ${IVOAI_VERSION} — safe, shared access to your organisation's knowledge for coding agents`,
  children: [
    demoCommand,
    ...agentCommands,
    autoCommand,
    sessionGroup,
    connectGroup,
    disconnectGroup,
    doctorCommand,
    executorsCommand,
    projectGroup,
    routerGroup,
    hookCommand,
    orchestratorMcpCommand,
    ...installCommands,
    {
      kind: "group",
      name: "server",
      summary: "Run and administer an ivoai knowledge server",
      children: [
        serverInitCommand,
        serverStartCommand,
        serverStatusCommand,
        serverStopCommand,
        serverSystemdGroup,
        serverEnrollmentGroup,
        serverClientsGroup,
        serverConsoleGroup,
        serverConnectorGroup,
        serverIngestCommand,
        serverSearchCommand,
        serverApprovalsGroup,
        serverAuditCommand,
        serverActivationGroup,
        serverBackupGroup,
        serverRestoreCommand,
      ],
    },
    versionCommand,
    completionCommand(() => COMMAND_TREE),
  ],
};

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
    const invocation = resolveInvocation(COMMAND_TREE, versionFlag ? ["version", ...modifiers] : argv);
    if (invocation.kind === "help") {
      process.stdout.write(`${invocation.text}\n`);
      return 0;
    }
    const stopSignal = new Promise<NodeJS.Signals>((resolve) => {
      process.once("SIGINT", () => resolve("SIGINT"));
      process.once("SIGTERM", () => resolve("SIGTERM"));
    });
    return (
      (await invocation.command.run({
        options: invocation.options,
        positionals: invocation.positionals,
        json: invocation.json,
        debug: invocation.debug,
        out: createOutput({ json: invocation.json }),
        env,
        stopSignal,
      })) ?? 0
    );
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
