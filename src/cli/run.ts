// The command tree and the runner that maps errors to exit codes (0 ok, 1 failure, 2 usage).

import { isIvoaiError } from "../shared/errors.js";
import { redactText } from "../shared/redact.js";
import { terminalText } from "../shared/terminal-text.js";
import { IVOAI_VERSION } from "../shared/version.js";
import { type GroupSpec, resolveInvocation } from "./command.js";
import { agentCommands, hookCommand, sessionGroup } from "./commands/agents.js";
import { doctorCommand, projectGroup, routerGroup } from "./commands/client-tools.js";
import { connectGroup, disconnectGroup } from "./commands/connect.js";
import { demoCommand } from "./commands/demo.js";
import { installCommands } from "./commands/install.js";
import { serverActivationGroup } from "./commands/server-activation.js";
import { serverApprovalsGroup, serverAuditCommand } from "./commands/server-approvals.js";
import { serverBackupGroup, serverRestoreCommand } from "./commands/server-backup.js";
import { serverClientsGroup } from "./commands/server-clients.js";
import { serverConnectorGroup, serverIngestCommand, serverSearchCommand } from "./commands/server-context.js";
import { serverEnrollmentGroup } from "./commands/server-enrollment.js";
import { serverInitCommand } from "./commands/server-init.js";
import { serverStatusCommand, serverStopCommand, serverSystemdGroup } from "./commands/server-ops.js";
import { serverStartCommand } from "./commands/server-start.js";
import { createOutput } from "./output.js";

export const COMMAND_TREE: GroupSpec = {
  kind: "group",
  name: "ivoai",
  summary: `ivoai ${IVOAI_VERSION} — safe, shared access to your organisation's knowledge for coding agents`,
  children: [
    demoCommand,
    ...agentCommands,
    sessionGroup,
    connectGroup,
    disconnectGroup,
    doctorCommand,
    projectGroup,
    routerGroup,
    hookCommand,
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
  ],
};

/** Runs one invocation and returns the exit status: 0 ok, 1 failure, 2 usage. */
export async function runCli(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const debug = argv.includes("--debug");
  try {
    if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V")) {
      process.stdout.write(`${IVOAI_VERSION}\n`);
      return 0;
    }
    const invocation = resolveInvocation(COMMAND_TREE, argv);
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
    return reportError(error, debug);
  }
}

function reportError(error: unknown, debug: boolean): number {
  // A message may quote what a server, an agent or a file name said: redacted, control characters escaped.
  const write = (text: string) =>
    process.stderr.write(`${terminalText(redactText(text), { multiline: true })}\n`);
  if (isIvoaiError(error)) {
    write(`ivoai: ${error.message}`);
    if (debug && error.stack) write(error.stack);
    return error.code === "USAGE" ? 2 : 1;
  }
  const message = error instanceof Error ? error.message : String(error);
  write(`ivoai: unexpected error: ${message.split("\n")[0] ?? ""}`);
  if (debug && error instanceof Error && error.stack) write(error.stack);
  return 1;
}
