// Codex as an AUTO executor: one `codex exec --json` (or `exec resume`) turn with the sandbox, model,
// effort and MCP servers given per process through -c overrides, its JSONL events read into ExecutorEvents.
import path from "node:path";
import { writeFileAtomic } from "../../../shared/atomic-file.js";
import type { Executor, TurnOutcome, TurnRequest } from "../contracts.js";
import { assertServerName, endpointOf, KNOWLEDGE_SERVERS, readTools, userServersFor } from "./knowledge.js";
import { classifyLimit } from "./limits.js";
import { failedBeforeStart } from "./outcome.js";
import { runCliTurn, type StreamFormat, type TurnSink } from "./turn.js";

/** What the argv depends on: the request without its runtime parts. */
export type CodexArgvInput = Pick<
  TurnRequest,
  "role" | "cwd" | "model" | "effort" | "resumeThreadId" | "knowledge" | "extraMcp"
>;

const toml = (value: string) => JSON.stringify(value);
const tomlList = (values: readonly string[]) => `[${values.map(toml).join(",")}]`;

/**
 * The argv of one turn (after the executable). New turns: `--no-daemon exec …`; resumed ones: `--no-daemon
 * exec resume … ID -`, which has no -s/-C, so the sandbox is set with -c there. The prompt is read from stdin.
 */
export function buildCodexArgs(request: CodexArgvInput, outputSchemaPath: string | null): string[] {
  const worker = request.role === "worker";
  const sandbox = worker ? "read-only" : "workspace-write";
  // --no-daemon is a root option in 0.171: a shared app-server would not see the per-process overrides.
  const args = ["--no-daemon", "exec"];
  if (request.resumeThreadId !== null) args.push("resume");
  args.push("--json", "--skip-git-repo-check");
  if (request.resumeThreadId === null) args.push("-C", request.cwd, "-s", sandbox);
  else args.push("-c", `sandbox_mode=${toml(sandbox)}`);
  args.push("-c", `approval_policy=${toml("never")}`);
  // Workers see no MCP server but ivoai's: the user's config.toml (and its servers) is not loaded.
  if (worker) args.push("--ignore-user-config");
  if (request.model !== null) args.push("-m", request.model);
  if (request.effort !== null) args.push("-c", `model_reasoning_effort=${toml(request.effort)}`);
  if (outputSchemaPath !== null) args.push("--output-schema", outputSchemaPath);
  args.push(...codexMcpOverrides(request));
  if (request.resumeThreadId !== null) args.push(request.resumeThreadId);
  args.push("-");
  return args;
}

/** The -c overrides declaring this turn's MCP servers (knowledge; the orchestrator for the primary only). */
export function codexMcpOverrides(
  request: Pick<CodexArgvInput, "role" | "knowledge" | "extraMcp">,
): string[] {
  const args: string[] = [];
  const set = (server: string, key: string, value: string) =>
    args.push("-c", `mcp_servers.${server}.${key}=${value}`);
  if (request.knowledge) {
    for (const server of KNOWLEDGE_SERVERS) {
      set(server, "url", toml(endpointOf(server, request.knowledge.endpoints)));
      set(server, "bearer_token_env_var", toml(request.knowledge.tokenEnv));
      if (request.role === "worker") set(server, "enabled_tools", tomlList(readTools(server)));
    }
    for (const server of userServersFor(request.role, request.knowledge)) {
      assertServerName(server.name);
      set(server.name, "url", toml(server.url));
      set(server.name, "bearer_token_env_var", toml(request.knowledge.tokenEnv));
    }
  }
  if (request.role === "primary") {
    for (const server of request.extraMcp) {
      assertServerName(server.name);
      set(server.name, "command", toml(server.command));
      set(server.name, "args", tomlList(server.args));
      if (server.envVars.length > 0) set(server.name, "env_vars", tomlList(server.envVars));
    }
  }
  return args;
}

const TOP_LEVEL = new Set([
  "thread.started",
  "turn.started",
  "turn.completed",
  "turn.failed",
  "item.started",
  "item.updated",
  "item.completed",
  "error",
]);

/** Limits that end the turn as soon as an `error` event names them; rate limits wait for turn.failed. */
const FINAL_ON_ERROR = new Set(["usage_limit", "context_window", "unauthorized"]);

/** Reads `codex exec --json` events (exec_events.rs: thread.*, turn.*, item.*, error). */
export function createCodexFormat(): StreamFormat {
  let lastError: string | null = null;
  const toolName = (item: Record<string, unknown>) =>
    item.type === "mcp_tool_call" ? `${String(item.server)}/${String(item.tool)}` : String(item.type);
  const parse = (event: Record<string, unknown>, sink: TurnSink) => {
    const item = (event.item ?? {}) as Record<string, unknown>;
    switch (event.type) {
      case "thread.started":
        if (typeof event.thread_id === "string") sink.thread(event.thread_id);
        return;
      case "item.started":
        if (isToolItem(item)) sink.tool(toolName(item), "started");
        return;
      case "item.completed":
        if (item.type === "agent_message" && typeof item.text === "string") sink.text(item.text);
        else if (isToolItem(item)) sink.tool(toolName(item), toolFailed(item) ? "failed" : "completed");
        return;
      case "turn.completed": {
        const usage = (event.usage ?? {}) as Record<string, unknown>;
        sink.usage({
          inputTokens: count(usage.input_tokens),
          // Codex counts cached tokens inside input_tokens; it reports no price.
          cachedInputTokens: Math.min(count(usage.cached_input_tokens), count(usage.input_tokens)),
          outputTokens: count(usage.output_tokens),
          costUsd: null,
          contextTokens: null,
        });
        sink.completed(null);
        return;
      }
      case "error": {
        const message = String(event.message ?? "");
        // Stream retries ("Reconnecting... 2/5") are progress, not the turn's end.
        if (/^reconnecting/i.test(message)) return;
        lastError = message;
        const limit = classifyLimit(message);
        if (limit && FINAL_ON_ERROR.has(limit.kind)) sink.limit(limit);
        return;
      }
      case "turn.failed": {
        const message = String((event.error as { message?: unknown } | undefined)?.message ?? "turn failed");
        const limit = classifyLimit(message) ?? (lastError === null ? null : classifyLimit(lastError));
        if (limit) sink.limit(limit);
        else sink.failed(message);
        return;
      }
    }
  };
  return { parse, topLevelTypes: TOP_LEVEL };
}

const TOOL_ITEMS = new Set(["mcp_tool_call", "command_execution", "file_change", "web_search"]);
const isToolItem = (item: Record<string, unknown>) => TOOL_ITEMS.has(String(item.type));
const toolFailed = (item: Record<string, unknown>) =>
  item.status === "failed" ||
  (item.error !== null && item.error !== undefined) ||
  (typeof item.exit_code === "number" && item.exit_code !== 0);
const count = (value: unknown) => (typeof value === "number" && Number.isFinite(value) ? value : 0);

/** The Codex executor over the official CLI at `cliPath`. */
export function createCodexExecutor(cliPath: string): Executor {
  return {
    name: "codex",
    path: cliPath,
    async runTurn(request: TurnRequest): Promise<TurnOutcome> {
      let args: string[];
      try {
        let schemaPath: string | null = null;
        if (request.outputSchema) {
          schemaPath = path.join(request.runtimeDir, "output-schema.json");
          await writeFileAtomic(schemaPath, JSON.stringify(request.outputSchema), { durable: false });
        }
        args = buildCodexArgs(request, schemaPath);
      } catch (error) {
        return failedBeforeStart(request, error);
      }
      return runCliTurn(
        "codex",
        request,
        { command: cliPath, args, stdin: request.prompt },
        createCodexFormat(),
      );
    },
  };
}
