// The full command tree, every command module imported: the source the build extracts the command manifest
// from (see manifest.ts). The CLI itself never imports this in the bundle; it runs from the manifest.
import { IVOAI_VERSION } from "../shared/version.js";
import type { GroupSpec } from "./command.js";
import { agentCommands, sessionGroup } from "./commands/agents.js";
import { autoCommand } from "./commands/auto.js";
import { doctorCommand, projectGroup, routerGroup } from "./commands/client-tools.js";
import { completionCommand } from "./commands/completion.js";
import { componentsCommand } from "./commands/components.js";
import { connectGroup, disconnectGroup } from "./commands/connect.js";
import { demoCommand } from "./commands/demo.js";
import { executorsCommand } from "./commands/executors.js";
import { hookCommand } from "./commands/hook.js";
import { installCommands } from "./commands/install.js";
import { mcpGroup } from "./commands/mcp.js";
import { orchestratorMcpCommand } from "./commands/orchestrator.js";
import { serverActivationGroup } from "./commands/server-activation.js";
import { serverApprovalsGroup, serverAuditCommand } from "./commands/server-approvals.js";
import { serverBackupGroup, serverRestoreCommand } from "./commands/server-backup.js";
import { serverClientsGroup } from "./commands/server-clients.js";
import { serverConsoleGroup } from "./commands/server-console.js";
import { serverConnectorGroup, serverIngestCommand, serverSearchCommand } from "./commands/server-context.js";
import { serverEnrollmentGroup } from "./commands/server-enrollment.js";
import { serverEvalCommand } from "./commands/server-eval.js";
import { serverInitCommand } from "./commands/server-init.js";
import { serverStatusCommand, serverStopCommand, serverSystemdGroup } from "./commands/server-ops.js";
import { serverStartCommand } from "./commands/server-start.js";
import { serverStoreGroup } from "./commands/server-store.js";
import { usageCommand } from "./commands/usage.js";
import { versionCommand } from "./commands/version.js";

export const COMMAND_TREE: GroupSpec = {
  kind: "group",
  name: "ivoai",
  summary: `ivoai ${IVOAI_VERSION} — safe, shared access to your organisation's knowledge for coding agents`,
  children: [
    demoCommand,
    ...agentCommands,
    autoCommand,
    sessionGroup,
    usageCommand,
    connectGroup,
    disconnectGroup,
    doctorCommand,
    componentsCommand,
    executorsCommand,
    mcpGroup,
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
        serverEvalCommand,
        serverApprovalsGroup,
        serverAuditCommand,
        serverActivationGroup,
        serverBackupGroup,
        serverRestoreCommand,
        serverStoreGroup,
      ],
    },
    versionCommand,
    completionCommand(() => COMMAND_TREE),
  ],
};
