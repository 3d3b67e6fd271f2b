// AUTO's executors: one official CLI turn (Codex or Claude Code) behind the Executor contract.
import type { Executor, ExecutorName } from "../contracts.js";
import { createClaudeExecutor } from "./claude.js";
import { createCodexExecutor } from "./codex.js";

export {
  buildClaudeArgs,
  buildClaudeMcpConfig,
  CLAUDE_MUTATION_TOOLS,
  type ClaudeArgvInput,
  workerDisallowedTools,
} from "./claude.js";
export { buildCodexArgs, type CodexArgvInput, codexMcpOverrides } from "./codex.js";
export { KNOWLEDGE_SERVERS, mutationTools, readTools } from "./knowledge.js";
export { classifyLimit } from "./limits.js";

/** The executor for `name` over the official CLI at `cliPath` (absolute). */
export function createExecutor(name: ExecutorName, cliPath: string): Executor {
  return name === "codex" ? createCodexExecutor(cliPath) : createClaudeExecutor(cliPath);
}
