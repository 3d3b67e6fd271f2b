// Claude Code as an AUTO executor: one `claude -p --output-format stream-json --verbose` turn with a strict
// per-turn MCP config, a permission mode by role and mutation tools denied to workers; stream-json read
// into ExecutorEvents, including the quota the stream reports (rate_limit_event).
import path from "node:path";
import { writeFileAtomic } from "../../../shared/atomic-file.js";
import type { Executor, LimitInfo, QuotaSnapshot, TurnOutcome, TurnRequest } from "../contracts.js";
import {
  assertServerName,
  endpointOf,
  KNOWLEDGE_SERVERS,
  mutationTools,
  userServersFor,
} from "./knowledge.js";
import { classifyLimit, isoFrom, safeLine } from "./limits.js";
import { failedBeforeStart } from "./outcome.js";
import { runCliTurn, type StreamFormat, type TurnSink } from "./turn.js";

export type ClaudeArgvInput = Pick<
  TurnRequest,
  "role" | "model" | "effort" | "resumeThreadId" | "knowledge" | "extraMcp" | "outputSchema"
>;

/** Claude Code's built-in tools that change files or run commands: never offered to a worker. */
export const CLAUDE_MUTATION_TOOLS = ["Edit", "Write", "MultiEdit", "NotebookEdit", "Bash"] as const;

/** The tools a worker is denied: built-in mutations and ivoai's write tools, by their MCP names. */
export function workerDisallowedTools(): string[] {
  return [
    ...CLAUDE_MUTATION_TOOLS,
    ...KNOWLEDGE_SERVERS.flatMap((server) => mutationTools(server).map((tool) => `mcp__${server}__${tool}`)),
  ];
}

/**
 * The argv of one turn (after the executable); the prompt goes on stdin. `--fallback-model` is never
 * passed: the scheduler, not the CLI, decides which model runs.
 */
export function buildClaudeArgs(request: ClaudeArgvInput, mcpConfigPath: string): string[] {
  const worker = request.role === "worker";
  const args = ["-p", "--output-format", "stream-json", "--verbose"];
  args.push("--strict-mcp-config", "--mcp-config", mcpConfigPath);
  args.push("--permission-mode", worker ? "plan" : "acceptEdits");
  if (worker) args.push("--disallowedTools", workerDisallowedTools().join(","));
  if (request.model !== null) args.push("--model", request.model);
  if (request.effort !== null) args.push("--effort", request.effort);
  if (request.outputSchema) args.push("--json-schema", JSON.stringify(request.outputSchema));
  if (request.resumeThreadId !== null) args.push("--resume", request.resumeThreadId);
  return args;
}

/** The per-turn MCP config: knowledge over HTTP (token expanded by claude from the environment), plus the
 * primary's stdio servers. No secret is written: only `${VAR}` references. */
export function buildClaudeMcpConfig(request: Pick<ClaudeArgvInput, "role" | "knowledge" | "extraMcp">): {
  mcpServers: Record<string, unknown>;
} {
  const mcpServers: Record<string, unknown> = {};
  if (request.knowledge) {
    for (const server of KNOWLEDGE_SERVERS) {
      mcpServers[server] = {
        type: "http",
        url: endpointOf(server, request.knowledge.endpoints),
        headers: { Authorization: `Bearer \${${request.knowledge.tokenEnv}}` },
      };
    }
    for (const server of userServersFor(request.role, request.knowledge)) {
      assertServerName(server.name);
      mcpServers[server.name] = {
        type: "http",
        url: server.url,
        headers: { Authorization: `Bearer \${${request.knowledge.tokenEnv}}` },
      };
    }
  }
  if (request.role === "primary") {
    for (const server of request.extraMcp) {
      assertServerName(server.name);
      mcpServers[server.name] = {
        type: "stdio",
        command: server.command,
        args: server.args,
        env: Object.fromEntries(server.envVars.map((name) => [name, `\${${name}}`])),
      };
    }
  }
  return { mcpServers };
}

const TOP_LEVEL = new Set(["system", "assistant", "user", "result", "rate_limit_event", "stream_event"]);

/** Reads stream-json events (system init, assistant, user tool results, rate_limit_event, result). */
export function createClaudeFormat(now: () => Date = () => new Date()): StreamFormat {
  const toolNames = new Map<string, string>();
  let contextTokens: number | null = null;
  const parse = (event: Record<string, unknown>, sink: TurnSink) => {
    switch (event.type) {
      case "system":
        if (event.subtype === "init" && typeof event.session_id === "string") sink.thread(event.session_id);
        return;
      case "assistant":
        return assistant(event, sink);
      case "user":
        for (const block of blocks(event.message)) {
          if (block.type !== "tool_result") continue;
          const name = toolNames.get(String(block.tool_use_id)) ?? "tool";
          sink.tool(name, block.is_error === true ? "failed" : "completed");
        }
        return;
      case "rate_limit_event":
        return rateLimit(event, sink, now());
      case "result":
        return result(event, sink);
    }
  };

  const assistant = (event: Record<string, unknown>, sink: TurnSink) => {
    const message = (event.message ?? {}) as Record<string, unknown>;
    let said = "";
    for (const block of blocks(message)) {
      if (block.type === "text" && typeof block.text === "string") {
        said += block.text;
        sink.text(block.text);
      } else if (block.type === "tool_use") {
        const name = neutralToolName(String(block.name ?? "tool"));
        toolNames.set(String(block.id), name);
        sink.tool(name, "started");
      }
    }
    const usage = message.usage as Record<string, unknown> | undefined;
    if (usage && message.model !== "<synthetic>")
      contextTokens = promptTokens(usage) + num(usage.output_tokens);
    // A stop the CLI writes itself ("You've hit your limit · resets …") arrives as a synthetic turn.
    if (typeof event.error === "string" || message.model === "<synthetic>") {
      const limit = limitOf(said, event.error, event.api_error_status);
      if (limit) sink.limit(limit);
    }
  };

  const result = (event: Record<string, unknown>, sink: TurnSink) => {
    const usage = event.usage as Record<string, unknown> | undefined;
    if (usage)
      sink.usage({
        inputTokens: promptTokens(usage),
        cachedInputTokens: num(usage.cache_read_input_tokens),
        outputTokens: num(usage.output_tokens),
        costUsd:
          typeof event.total_cost_usd === "number" && event.total_cost_usd >= 0 ? event.total_cost_usd : null,
        contextTokens,
      });
    const text = typeof event.result === "string" ? event.result : null;
    if (event.is_error === true) {
      const said = text ?? (Array.isArray(event.errors) ? event.errors.join("; ") : String(event.subtype));
      const limit = limitOf(said, undefined, event.api_error_status);
      if (limit) sink.limit(limit);
      else sink.failed(said);
      return;
    }
    const structured = event.structured_output;
    if (structured === undefined) sink.completed(text);
    else sink.completed(text === null || text === "" ? JSON.stringify(structured) : text, structured);
  };
  return { parse, topLevelTypes: TOP_LEVEL };
}

/** `mcp__server__tool` as `server/tool`, the name codex events give the same call. */
function neutralToolName(name: string): string {
  const mcp = /^mcp__(.+?)__(.+)$/.exec(name);
  return mcp ? `${mcp[1]}/${mcp[2]}` : name;
}

function limitOf(text: string, error: unknown, status: unknown): LimitInfo | null {
  const classified = classifyLimit(text);
  if (classified) return classified;
  if (error === "rate_limit" || status === 429)
    return { kind: "rate_limit", message: safeLine(text), resetsAt: null };
  if (error === "authentication_failed" || status === 401)
    return { kind: "unauthorized", message: safeLine(text), resetsAt: null };
  return null;
}

const STATUS: Record<string, QuotaSnapshot["status"]> = {
  allowed: "allowed",
  allowed_warning: "warning",
  throttled: "warning",
  rejected: "rejected",
};

/** One quota snapshot per rate_limit_event; `rejected` (or a rejected overage in use) is a hard limit. */
function rateLimit(event: Record<string, unknown>, sink: TurnSink, now: Date) {
  const info = (event.rate_limit_info ?? {}) as Record<string, unknown>;
  const window = String(info.rateLimitType ?? "unknown").slice(0, 40);
  const overageRejected = info.isUsingOverage === true && info.overageStatus === "rejected";
  const rejected = info.status === "rejected" || overageRejected;
  const resetsAt = isoFrom(info.resetsAt);
  const utilization = typeof info.utilization === "number" ? info.utilization : null;
  const snapshot: QuotaSnapshot = {
    executor: "claude",
    window,
    used_percent:
      utilization === null
        ? null
        : Math.min(100, Math.max(0, utilization <= 1 ? utilization * 100 : utilization)),
    status: rejected ? "rejected" : (STATUS[String(info.status)] ?? null),
    resets_at: resetsAt,
    observed_at: now.toISOString(),
    source: "stream",
  };
  sink.emit({ type: "quota", snapshots: [snapshot] });
  if (rejected)
    sink.limit({
      kind: "usage_limit",
      message: safeLine(
        `claude ${window} limit reached (${overageRejected ? "overage rejected" : "rejected"})`,
      ),
      resetsAt,
    });
}

function blocks(message: unknown): Record<string, unknown>[] {
  const content = (message as { content?: unknown } | undefined)?.content;
  return Array.isArray(content)
    ? (content.filter((block) => block && typeof block === "object") as never)
    : [];
}

const num = (value: unknown) => (typeof value === "number" && Number.isFinite(value) ? value : 0);
const promptTokens = (usage: Record<string, unknown>) =>
  num(usage.input_tokens) + num(usage.cache_read_input_tokens) + num(usage.cache_creation_input_tokens);

/** The Claude Code executor over the official CLI at `cliPath`. */
export function createClaudeExecutor(cliPath: string): Executor {
  return {
    name: "claude",
    path: cliPath,
    async runTurn(request: TurnRequest): Promise<TurnOutcome> {
      let args: string[];
      try {
        const configPath = path.join(request.runtimeDir, "claude-mcp.json");
        await writeFileAtomic(configPath, JSON.stringify(buildClaudeMcpConfig(request)), { durable: false });
        args = buildClaudeArgs(request, configPath);
      } catch (error) {
        return failedBeforeStart(request, error);
      }
      return runCliTurn(
        "claude",
        request,
        { command: cliPath, args, stdin: request.prompt },
        createClaudeFormat(),
      );
    },
  };
}
