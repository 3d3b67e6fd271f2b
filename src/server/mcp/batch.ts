// JSON-RPC batches on the MCP endpoints: refused under protocol versions that have none (2025-06-18 removed
// batching), and run one message at a time within a budget of requests and answer bytes under older ones, so
// that one small HTTP request cannot hold the gateway's memory or event loop (issue 27).
import { setImmediate as nextTurn } from "node:timers/promises";
import { MAX_BATCH_SIZE } from "@modelcontextprotocol/sdk/server/requestBody.js";
import {
  DEFAULT_NEGOTIATED_PROTOCOL_VERSION,
  isInitializeRequest,
  isJSONRPCRequest,
  type JSONRPCMessage,
  JSONRPCMessageSchema,
} from "@modelcontextprotocol/sdk/types.js";

/** The first protocol version without JSON-RPC batching (its changelog: "Remove support for JSON-RPC batching"). */
export const FIRST_VERSION_WITHOUT_BATCHES = "2025-06-18";

/** What one HTTP request carrying a batch may cost under a protocol version that still has batches. */
export interface BatchBudget {
  /** Messages run per batch; later requests are answered with an error and not run. */
  maxMessages: number;
  /** Bytes of JSON answers per batch; an answer that would pass it is replaced with an error, as are later ones. */
  maxAnswerBytes: number;
}

export const DEFAULT_BATCH_BUDGET: BatchBudget = { maxMessages: 20, maxAnswerBytes: 32 * 1024 * 1024 };

/** JSON-RPC code of an answer left out because its batch spent its budget (implementation-defined range). */
export const BATCH_BUDGET_ERROR_CODE = -32000;

/**
 * The protocol version a batch is sent under: the one its initialize request asks for, otherwise the
 * MCP-Protocol-Version header, otherwise the SDK's default for a request without one (2025-03-26).
 */
export function batchProtocolVersion(batch: readonly unknown[], header: string | null): string {
  for (const item of batch) {
    const requested = isInitializeRequest(item) ? item.params.protocolVersion : undefined;
    if (typeof requested === "string") return requested;
  }
  return header ?? DEFAULT_NEGOTIATED_PROTOCOL_VERSION;
}

/** True when the version has no batching (dates compare as strings; unknown later versions included). */
export function refusesBatches(version: string): boolean {
  return version >= FIRST_VERSION_WITHOUT_BATCHES;
}

/** The answer to a batch sent under a version without batching: HTTP 400, JSON-RPC Invalid Request. */
export function batchRefusal(version: string): Response {
  const message =
    `Invalid Request: JSON-RPC batches are not part of MCP protocol version ${version} ` +
    "(removed in 2025-06-18); send one message per request";
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code: -32600, message }, id: null }), {
    status: 400,
    headers: { "Content-Type": "application/json" },
  });
}

/**
 * The batch's messages when this endpoint should run them itself, or undefined when the SDK's transport refuses
 * the whole batch anyway (empty, too long, a malformed member, initialize beside other messages): the SDK then
 * answers it as it always did, running nothing.
 */
export function runnableBatch(batch: readonly unknown[]): JSONRPCMessage[] | undefined {
  if (batch.length === 0 || batch.length > MAX_BATCH_SIZE) return undefined;
  const messages: JSONRPCMessage[] = [];
  for (const item of batch) {
    const parsed = JSONRPCMessageSchema.safeParse(item);
    if (!parsed.success) return undefined;
    messages.push(parsed.data);
  }
  if (messages.length > 1 && messages.some(isInitializeRequest)) return undefined;
  return messages;
}

/** Answers one message as if it came alone: a JSON answer (HTTP 200) or 202 for a notification or response. */
export type AnswerOne = (message: JSONRPCMessage) => Promise<Response>;

/**
 * Runs a batch one message at a time, yielding to other requests between messages, within `budget`; the
 * answers come back as the SDK's transport sends them (one answer bare, several as an array, none as 202).
 * Requests past the budget are answered with an error naming it; notifications past it are dropped.
 */
export async function answerBatch(
  messages: readonly JSONRPCMessage[],
  answerOne: AnswerOne,
  budget: BatchBudget,
  signal?: AbortSignal,
): Promise<Response> {
  const answers: string[] = [];
  let answerBytes = 0;
  let spent = false;
  for (const [index, message] of messages.entries()) {
    if (signal?.aborted) break;
    if (index >= budget.maxMessages) spent = true;
    if (spent) {
      if (isJSONRPCRequest(message)) answers.push(budgetError(message.id, budget));
      continue;
    }
    if (index > 0) await nextTurn();
    const text = await answerText(await answerOne(message), message);
    if (text === undefined) continue;
    const bytes = Buffer.byteLength(text);
    if (answerBytes + bytes > budget.maxAnswerBytes) {
      spent = true;
      answers.push(budgetError((message as { id: string | number }).id, budget));
      continue;
    }
    answerBytes += bytes;
    answers.push(text);
  }
  if (answers.length === 0) return new Response(null, { status: 202 });
  const body = answers.length === 1 ? (answers[0] as string) : `[${answers.join(",")}]`;
  return new Response(body, { status: 200, headers: { "Content-Type": "application/json" } });
}

/** The JSON text answering one message, or undefined when it has none (a notification or a response). */
async function answerText(response: Response, message: JSONRPCMessage): Promise<string | undefined> {
  const text = response.body ? await response.text() : "";
  if (!isJSONRPCRequest(message)) return undefined;
  if (response.status === 200 && text !== "") return text;
  // Not expected for a message the transport's schema accepted: answered as an internal error with its id.
  return JSON.stringify({
    jsonrpc: "2.0",
    id: message.id,
    error: { code: -32603, message: `Internal error (HTTP ${response.status})` },
  });
}

function budgetError(id: string | number, budget: BatchBudget): string {
  const message =
    `Batch budget exceeded: one HTTP request runs at most ${budget.maxMessages} messages and answers at most ` +
    `${budget.maxAnswerBytes} bytes; send this request again on its own`;
  return JSON.stringify({
    jsonrpc: "2.0",
    id,
    error: {
      code: BATCH_BUDGET_ERROR_CODE,
      message,
      data: { max_messages: budget.maxMessages, max_answer_bytes: budget.maxAnswerBytes },
    },
  });
}
