// Audit events for tests: a successful context_search tool call, changed only where a test says.
import type { ToolCallEvent } from "./store.js";

export function toolCall(over: Partial<ToolCallEvent> = {}): ToolCallEvent {
  return {
    kind: "tool_call",
    tool: "context_search",
    endpoint: "ivoai-context",
    credential_id: "cli_a",
    session_id: "s1",
    tier: "read",
    status: "SUCCESS",
    latency_ms: 10,
    tokens_consumed: 5,
    guardrail_checked: true,
    ...over,
  };
}
