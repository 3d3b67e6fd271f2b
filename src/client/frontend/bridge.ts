// The private loopback OpenAI-compatible provider OpenCode talks to: it translates the selected model, effort,
// prompt, cancellation and completion into one AUTO engine turn. A UI transport, not a second agent.
import { createHash, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { readBody, sendJson } from "../../shared/http-json.js";
import { checkOrigin } from "../../shared/origin-policy.js";
import { withTimeout } from "../../shared/timeout.js";
import {
  asTyped,
  ChatRequest,
  chunk,
  completion,
  DONE,
  errorEvent,
  frontendSessionFrom,
  isTitleRequest,
  lastUserText,
  titleFrom,
  wireError,
} from "./bridge-wire.js";
import type { CatalogueEntry, FrontendEngine, FrontendTurnResult } from "./contracts.js";

export interface BridgeOptions {
  engine: FrontendEngine;
  /** Read at every request, so the list follows the executor registry. */
  catalogue: () => CatalogueEntry[];
  /** Efforts OpenCode may send as `reasoning_effort`; when absent any short lowercase word passes. */
  validEfforts?: readonly string[];
  /** Header carrying OpenCode's non-secret session id (set by ivoai's server plugin). */
  sessionHeader?: string;
  /** Request body limit; 8 MiB unless given (a long conversation's history is resent every turn). */
  maxBodyBytes?: number;
  /** How often a streaming turn sends an SSE comment while the engine is quiet; 15 s unless given. */
  heartbeatMs?: number;
}

export interface Bridge {
  /** Base URL for OpenCode's provider config: http://127.0.0.1:PORT/v1 */
  url: string;
  /** Bearer secret (256 random bits); pass it to OpenCode by environment only. */
  secret: string;
  /** Stops listening; turns still running see a disconnect and are aborted. */
  close(): Promise<void>;
}

export const DEFAULT_SESSION_HEADER = "x-ivoai-frontend-session";
const DEFAULT_MAX_BODY = 8 * 1024 * 1024;
const DEFAULT_HEARTBEAT_MS = 15_000;
const MAX_ERROR_CHARS = 1_000;
/** An SSE comment: bytes that keep the stream alive, ignored by every SSE parser. */
const HEARTBEAT = ": keep-alive\n\n";
const EFFORT = /^[a-z][a-z_-]{0,31}$/;

/** One running bridge: its options resolved, the secret's digest, and the turns still running. */
interface BridgeState {
  readonly options: BridgeOptions;
  readonly secretHash: Buffer;
  readonly sessionHeader: string;
  readonly maxBody: number;
  readonly heartbeatMs: number;
  /** The `created` stamp of every model and completion this bridge answers. */
  readonly created: number;
  /** Engine turns still running, so that close() can let them finish recording. */
  readonly inflight: Set<Promise<FrontendTurnResult>>;
  /** Known once listening; the origin check needs it. */
  port: number;
}

/** A checked chat request: the catalogue entry it names and the prompt to answer. */
interface ChatTurn {
  parsed: ChatRequest;
  entry: CatalogueEntry;
  prompt: string;
}

/** Where one completion's answer goes, and the fields every chunk of it repeats. */
interface Reply {
  res: http.ServerResponse;
  id: string;
  created: number;
  model: string;
  stream: boolean;
}

/** Starts the bridge on 127.0.0.1 with a fresh secret. */
export async function startBridge(options: BridgeOptions): Promise<Bridge> {
  const secret = `ivoai_bridge_${randomBytes(32).toString("base64url")}`;
  const state: BridgeState = {
    options,
    secretHash: createHash("sha256").update(`Bearer ${secret}`).digest(),
    sessionHeader: (options.sessionHeader ?? DEFAULT_SESSION_HEADER).toLowerCase(),
    maxBody: options.maxBodyBytes ?? DEFAULT_MAX_BODY,
    heartbeatMs: options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS,
    created: Math.floor(Date.now() / 1000),
    inflight: new Set(),
    port: 0,
  };
  const server = http.createServer({ headersTimeout: 10_000, requestTimeout: 60_000 }, (req, res) => {
    handle(state, req, res).catch((error: unknown) => {
      if (!res.headersSent) {
        sendJson(
          res,
          500,
          wireError((error as Error).message.split("\n")[0] ?? "", "ivoai_error", "internal"),
        );
      } else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  state.port = (server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${state.port}/v1`, secret, close: () => closeBridge(state, server) };
}

async function closeBridge(state: BridgeState, server: http.Server): Promise<void> {
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
  // Closed connections abort their turns; each still records its end (bounded wait).
  await withTimeout(Promise.allSettled([...state.inflight]), 15_000).catch(() => undefined);
}

/** Origin and secret first, then the two routes OpenCode uses. */
async function handle(
  state: BridgeState,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  const { port } = state;
  const verdict = checkOrigin(
    { host: req.headers.host, origin: req.headers.origin },
    { publicOrigin: `http://127.0.0.1:${port}`, loopback: { port } },
  );
  if (!verdict.ok)
    return sendJson(res, 403, wireError(verdict.message, "invalid_request_error", verdict.error));
  if (!authorised(state, req.headers.authorization)) {
    req.resume();
    return sendJson(
      res,
      401,
      wireError("a valid bridge secret is required", "authentication_error", "invalid_api_key"),
    );
  }
  const route = (req.url ?? "").split("?")[0];
  if (route === "/v1/models" && req.method === "GET") {
    const data = state.options
      .catalogue()
      .map((entry) => ({ id: entry.id, object: "model", created: state.created, owned_by: "ivoai" }));
    return sendJson(res, 200, { object: "list", data });
  }
  if (route === "/v1/chat/completions" && req.method === "POST") {
    const body = await readBody(req, state.maxBody);
    if (!body) {
      return sendJson(
        res,
        413,
        wireError(`the request exceeds ${state.maxBody} bytes`, "invalid_request_error", "request_too_large"),
      );
    }
    return chat(state, req, res, body);
  }
  req.resume();
  sendJson(res, 404, wireError("no such endpoint", "not_found_error", "not_found"));
}

function authorised(state: BridgeState, header: string | undefined): boolean {
  return (
    header !== undefined && timingSafeEqual(createHash("sha256").update(header).digest(), state.secretHash)
  );
}

function effortError(options: BridgeOptions, effort: string): string | undefined {
  const ok = options.validEfforts ? options.validEfforts.includes(effort) : EFFORT.test(effort);
  if (ok) return undefined;
  const allowed = options.validEfforts ? `: expected one of ${options.validEfforts.join(", ")}` : "";
  return `reasoning effort "${effort.slice(0, 64)}" is not supported${allowed}`;
}

async function chat(
  state: BridgeState,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  body: Buffer,
): Promise<void> {
  const turn = checkedChat(state, res, body);
  if (!turn) return;
  const reply: Reply = {
    res,
    id: `chatcmpl-${randomUUID()}`,
    created: state.created,
    model: turn.parsed.model,
    stream: turn.parsed.stream === true,
  };
  if (isTitleRequest(turn.parsed)) return answerTitle(reply, turn.prompt);
  // After the title shortcut: OpenCode sends its lowest variant with titles, which need no effort at all.
  const effort = turn.parsed.reasoning_effort ?? null;
  const badEffort = effort === null ? undefined : effortError(state.options, effort);
  if (badEffort) return sendJson(res, 400, wireError(badEffort, "invalid_request_error", "invalid_effort"));
  const aborter = new AbortController();
  const { result, streamed } = await runEngineTurn(state, req, reply, turn, effort, aborter);
  if (aborter.signal.aborted || res.writableEnded) return;
  sendTurnResult(reply, result, streamed);
}

/** The parsed request, or undefined once an error answer was sent (bad body, unknown model, no prompt). */
function checkedChat(state: BridgeState, res: http.ServerResponse, body: Buffer): ChatTurn | undefined {
  let parsed: ChatRequest;
  try {
    const result = ChatRequest.safeParse(JSON.parse(body.toString("utf8")));
    if (!result.success) throw result.error;
    parsed = result.data;
  } catch {
    sendJson(
      res,
      400,
      wireError("the body is not a chat-completions request", "invalid_request_error", "invalid_request"),
    );
    return undefined;
  }
  const entry = state.options.catalogue().find((candidate) => candidate.id === parsed.model);
  if (!entry) {
    // Fail closed: an unknown or withdrawn id never falls back to another model.
    sendJson(
      res,
      404,
      wireError(
        `model ${parsed.model.slice(0, 256)} is not in ivoai's catalogue`,
        "not_found_error",
        "model_not_found",
      ),
    );
    return undefined;
  }
  const prompt = lastUserText(parsed);
  if (prompt === undefined || prompt.trim() === "") {
    sendJson(res, 400, wireError("no user message to answer", "invalid_request_error", "no_prompt"));
    return undefined;
  }
  // `opencode run "a question"` arrives quoted: routing must see the question as typed.
  return { parsed, entry, prompt: asTyped(prompt) };
}

/** Titles cost no executor quota: derived here from the user's words. */
function answerTitle(reply: Reply, prompt: string): void {
  const { res, id, created, model } = reply;
  const title = titleFrom(prompt);
  if (!reply.stream) {
    sendJson(res, 200, completion(id, created, model, title));
    return;
  }
  startStream(res);
  res.write(chunk(id, created, model, { role: "assistant", content: title }, null));
  res.write(chunk(id, created, model, {}, "stop"));
  res.end(DONE);
}

/**
 * One engine turn for the request. A closed connection aborts it; a streaming reply gets the text as it comes
 * and heartbeats while the engine is quiet. An engine that throws becomes an error result.
 */
async function runEngineTurn(
  state: BridgeState,
  req: http.IncomingMessage,
  reply: Reply,
  turn: ChatTurn,
  effort: string | null,
  aborter: AbortController,
): Promise<{ result: FrontendTurnResult; streamed: boolean }> {
  const { res, id, created, model } = reply;
  let heartbeat: NodeJS.Timeout | undefined;
  res.on("close", () => {
    clearInterval(heartbeat);
    if (!res.writableFinished) aborter.abort();
  });
  let streamed = false;
  if (reply.stream) {
    startStream(res);
    res.write(chunk(id, created, model, { role: "assistant" }, null));
    // OpenCode aborts a stream after 5 minutes without a byte (its chunkTimeout); a planned turn can be quiet longer.
    heartbeat = setInterval(() => res.write(HEARTBEAT), state.heartbeatMs);
  }
  try {
    const running = state.options.engine.turn({
      frontendSession: frontendSessionFrom(req.headers[state.sessionHeader]),
      prompt: turn.prompt,
      selection: turn.entry.selection,
      effort,
      signal: aborter.signal,
      onText(delta) {
        if (!reply.stream || delta.length === 0 || res.writableEnded || aborter.signal.aborted) return;
        streamed = true;
        res.write(chunk(id, created, model, { content: delta }, null));
      },
    });
    state.inflight.add(running);
    try {
      return { result: await running, streamed };
    } finally {
      state.inflight.delete(running);
    }
  } catch (error) {
    const message = (error as Error).message.split("\n")[0] ?? "engine failed";
    return { result: { finish: "error", text: "", error: message }, streamed };
  } finally {
    clearInterval(heartbeat);
  }
}

/** The turn's answer: a completion or a 502, or the rest of the stream (its text unless already streamed). */
function sendTurnResult(reply: Reply, result: FrontendTurnResult, streamed: boolean): void {
  const { res, id, created, model } = reply;
  const message = `ivoai: ${(result.error ?? "the turn failed").slice(0, MAX_ERROR_CHARS)}`;
  if (!reply.stream) {
    if (result.finish === "error") sendJson(res, 502, wireError(message, "ivoai_error", "engine_error"));
    else sendJson(res, 200, completion(id, created, model, result.text, result.usage));
    return;
  }
  if (result.finish === "error") {
    res.write(errorEvent(message, "engine_error"));
    res.end(DONE);
    return;
  }
  if (!streamed && result.text.length > 0)
    res.write(chunk(id, created, model, { content: result.text }, null));
  res.write(chunk(id, created, model, {}, "stop", result.usage));
  res.end(DONE);
}

function startStream(res: http.ServerResponse): void {
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-store",
    connection: "keep-alive",
  });
  res.flushHeaders();
}
