// `ivoai orchestrator-mcp`: the hidden command an AUTO supervisor injects into its primary agent's CLI.
import { ORCHESTRATOR_MCP_COMMAND, runOrchestratorMcp } from "../../client/auto/orchestrator/mcp.js";
import { defineCommand } from "../command.js";

export const orchestratorMcpCommand = defineCommand({
  name: ORCHESTRATOR_MCP_COMMAND,
  summary: "Internal: the ivoai-orchestrator MCP (stdio) that an AUTO supervisor gives its primary agent",
  async run(ctx) {
    await runOrchestratorMcp(ctx.env, { stopSignal: ctx.stopSignal });
    return 0;
  },
});
