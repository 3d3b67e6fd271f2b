// What one MCP endpoint holds between requests, as plain data: its options with defaults applied, the tools
// offered per scope set and their tools/list answers. The fast path, the SDK path and the tool calls take it.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Scope } from "../../protocol/scopes.js";
import { SESSION_ID_PATTERN } from "../../protocol/tool-envelope.js";
import type { Logger } from "../../shared/logger.js";
import type { ApprovalGate } from "../approvals/gate.js";
import type { AuditLog } from "../audit/store.js";
import type { AuthenticatedClient } from "../enrollment/service.js";
import { type BatchBudget, DEFAULT_BATCH_BUDGET } from "./batch.js";
import { createLogLevelStore, type LogLevelStore } from "./logging.js";
import type { PromptSpec } from "./prompts.js";
import type { ResourceSpec } from "./resources.js";
import type { ToolContext, ToolSpec } from "./tool-spec.js";

export interface McpEndpointOptions {
  name: string;
  instructions: string;
  tools: readonly ToolSpec[];
  logger: Logger;
  /** Where write-tier proposals go; required when any tool is not read-only. */
  gate?: ApprovalGate;
  /** Every call is recorded here (tool, credential, session, tier, status, latency, tokens, guardrail). */
  audit?: AuditLog;
  /** Results larger than this (characters of text) fail instead of flooding a model's context. */
  maxResultChars?: number;
  /** Tool arguments larger than this (bytes of JSON) are refused by the guardrail. */
  maxInputBytes?: number;
  /** Adds resources or extension methods to each request's server (e.g. the skills of Web MCP). */
  extend?: (server: McpServer) => void;
  /** Extra server capabilities to announce. */
  capabilities?: Record<string, unknown>;
  /** Resource templates (documents, pages): listed, read and completed for credentials with their scope. */
  resources?: readonly ResourceSpec[];
  /** MCP prompts, each offered to callers offered the tools it uses. */
  prompts?: readonly PromptSpec[];
  /** Where callers' logging levels are kept between requests (default: one bounded store per endpoint). */
  logLevels?: LogLevelStore;
  /** A read tool slower than this is reported to a caller that set a log level (notice). */
  slowCallMs?: number;
  /** What one JSON-RPC batch may cost under protocol versions before 2025-06-18 (later ones refuse batches). */
  batchBudget?: BatchBudget;
  /**
   * Answer tools/call and tools/list without a per-request SDK server (default true). False sends every request
   * through the SDK: the reference the fast path's answers are compared with.
   */
  fastPath?: boolean;
}

/** Tools offered to one scope set, by name. */
export type OfferedTools = ReadonlyMap<string, ToolSpec>;

export interface EndpointState {
  options: McpEndpointOptions;
  maxResultChars: number;
  maxInputBytes: number;
  slowCallMs: number;
  logLevels: LogLevelStore;
  batchBudget: BatchBudget;
  fastPath: boolean;
  /** The tools a scope set may use, built once per distinct set. */
  offeredByScopes: Map<string, OfferedTools>;
  /** The tools/list result for each offered set (its JSON text), built once by the SDK itself. */
  toolLists: Map<OfferedTools, Promise<string>>;
}

export function createEndpointState(options: McpEndpointOptions): EndpointState {
  if (!options.gate && options.tools.some((tool) => tool.tier !== "read")) {
    throw new Error(`MCP endpoint ${options.name} has write tools but no approval gate`);
  }
  return {
    options,
    maxResultChars: options.maxResultChars ?? 16 * 1024 * 1024,
    maxInputBytes: options.maxInputBytes ?? 1024 * 1024,
    slowCallMs: options.slowCallMs ?? 2000,
    logLevels: options.logLevels ?? createLogLevelStore(),
    batchBudget: options.batchBudget ?? DEFAULT_BATCH_BUDGET,
    fastPath: options.fastPath ?? true,
    offeredByScopes: new Map(),
    toolLists: new Map(),
  };
}

/** The tools a credential with these scopes may use (tools it may not use are not offered at all). */
export function offeredTools(state: EndpointState, scopes: readonly Scope[]): OfferedTools {
  const key = [...scopes].sort().join(" ");
  let offered = state.offeredByScopes.get(key);
  if (!offered) {
    offered = new Map(
      state.options.tools.filter((tool) => scopes.includes(tool.scope)).map((tool) => [tool.name, tool]),
    );
    state.offeredByScopes.set(key, offered);
  }
  return offered;
}

/** Who calls, from the request's headers and the gateway's authentication. */
export function toolContext(request: Request, client: AuthenticatedClient, requestId?: string): ToolContext {
  return {
    client,
    sessionId: headerValue(request, "x-ivoai-session-id"),
    project: headerValue(request, "x-ivoai-project"),
    ...(requestId ? { requestId } : {}),
  };
}

function headerValue(request: Request, name: string): string | null {
  const value = request.headers.get(name)?.trim();
  return value && SESSION_ID_PATTERN.test(value) ? value : null;
}
