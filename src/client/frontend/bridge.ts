// The private loopback OpenAI-compatible provider OpenCode talks to: it translates the selected model, effort,
// prompt, cancellation and completion into one AUTO engine turn. A UI transport, not a second agent.
import { createHash, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { readBody, sendJson } from "../../shared/http-json.js";
import { checkOrigin } from "../../shared/origin-policy.js";
import { withTimeout } from "../../shared/timeout.js";
import {
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

/** Starts the bridge on 127.0.0.1 with a fresh secret. */
export async function startBridge(options: BridgeOptions): Promise<Bridge> {
  const secret = `ivoai_bridge_${randomBytes(32).toString("base64url")}`;
  const secretHash = createHash("sha256").update(`Bearer ${secret}`).digest();
  const sessionHeader = (options.sessionHeader ?? DEFAULT_SESSION_HEADER).toLowerCase();
  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY;
  const heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
  const created = Math.floor(Date.now() / 1000);
  /** Engine turns still running, so that close() can let them finish recording. */
  const inflight = new Set<Promise<FrontendTurnResult>>();

  const authorised = (header: string | undefined): boolean =>
    header !== undefined && timingSafeEqual(createHash("sha256").update(header).digest(), secretHash);

  const effortError = (effort: string): string | undefined => {
    const ok = options.validEfforts ? options.validEfforts.includes(effort) : EFFORT.test(effort);
    if (ok) return undefined;
    const allowed = options.validEfforts ? `: expected one of ${options.validEfforts.join(", ")}` : "";
    return `reasoning effort "${effort.slice(0, 64)}" is not supported${allowed}`;
  };

  const chat = async (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer) => {
    let parsed: ChatRequest;
    try {
      const result = ChatRequest.safeParse(JSON.parse(body.toString("utf8")));
      if (!result.success) throw result.error;
      parsed = result.data;
    } catch {
      return sendJson(
        res,
        400,
        wireError("the body is not a chat-completions request", "invalid_request_error", "invalid_request"),
      );
    }
    const entry = options.catalogue().find((candidate) => candidate.id === parsed.model);
    if (!entry) {
      // Fail closed: an unknown or withdrawn id never falls back to another model.
      return sendJson(
        res,
        404,
        wireError(
          `model ${parsed.model.slice(0, 256)} is not in ivoai's catalogue`,
          "not_found_error",
          "model_not_found",
        ),
      );
    }
    const prompt = lastUserText(parsed);
    if (prompt === undefined || prompt.trim() === "") {
      return sendJson(res, 400, wireError("no user message to answer", "invalid_request_error", "no_prompt"));
    }
    const id = `chatcmpl-${randomUUID()}`;
    const model = parsed.model;

    if (isTitleRequest(parsed)) {
      // Titles cost no executor quota: derived here from the user's words.
      const title = titleFrom(prompt);
      if (!parsed.stream) return sendJson(res, 200, completion(id, created, model, title));
      startStream(res);
      res.write(chunk(id, created, model, { role: "assistant", content: title }, null));
      res.write(chunk(id, created, model, {}, "stop"));
      return res.end(DONE);
    }
    // After the title shortcut: OpenCode sends its lowest variant with titles, which need no effort at all.
    const effort = parsed.reasoning_effort ?? null;
    const badEffort = effort === null ? undefined : effortError(effort);
    if (badEffort) return sendJson(res, 400, wireError(badEffort, "invalid_request_error", "invalid_effort"));

    const aborter = new AbortController();
    let heartbeat: NodeJS.Timeout | undefined;
    res.on("close", () => {
      clearInterval(heartbeat);
      if (!res.writableFinished) aborter.abort();
    });
    let streamed = false;
    if (parsed.stream) {
      startStream(res);
      res.write(chunk(id, created, model, { role: "assistant" }, null));
      // OpenCode aborts a stream after 5 minutes without a byte (its chunkTimeout); a planned turn can be quiet longer.
      heartbeat = setInterval(() => res.write(HEARTBEAT), heartbeatMs);
    }
    let result: FrontendTurnResult;
    try {
      const turn = options.engine.turn({
        frontendSession: frontendSessionFrom(req.headers[sessionHeader]),
        prompt,
        selection: entry.selection,
        effort,
        signal: aborter.signal,
        onText(delta) {
          if (!parsed.stream || delta.length === 0 || res.writableEnded || aborter.signal.aborted) return;
          streamed = true;
          res.write(chunk(id, created, model, { content: delta }, null));
        },
      });
      inflight.add(turn);
      try {
        result = await turn;
      } finally {
        inflight.delete(turn);
      }
    } catch (error) {
      result = {
        finish: "error",
        text: "",
        error: (error as Error).message.split("\n")[0] ?? "engine failed",
      };
    } finally {
      clearInterval(heartbeat);
    }
    if (aborter.signal.aborted || res.writableEnded) return;
    const message = `ivoai: ${(result.error ?? "the turn failed").slice(0, MAX_ERROR_CHARS)}`;
    if (!parsed.stream) {
      if (result.finish === "error")
        return sendJson(res, 502, wireError(message, "ivoai_error", "engine_error"));
      return sendJson(res, 200, completion(id, created, model, result.text));
    }
    if (result.finish === "error") {
      res.write(errorEvent(message, "engine_error"));
      return res.end(DONE);
    }
    if (!streamed && result.text.length > 0)
      res.write(chunk(id, created, model, { content: result.text }, null));
    res.write(chunk(id, created, model, {}, "stop"));
    res.end(DONE);
  };

  let port = 0;
  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const verdict = checkOrigin(
      { host: req.headers.host, origin: req.headers.origin },
      { publicOrigin: `http://127.0.0.1:${port}`, loopback: { port } },
    );
    if (!verdict.ok)
      return sendJson(res, 403, wireError(verdict.message, "invalid_request_error", verdict.error));
    if (!authorised(req.headers.authorization)) {
      req.resume();
      return sendJson(
        res,
        401,
        wireError("a valid bridge secret is required", "authentication_error", "invalid_api_key"),
      );
    }
    const route = (req.url ?? "").split("?")[0];
    if (route === "/v1/models" && req.method === "GET") {
      const data = options
        .catalogue()
        .map((entry) => ({ id: entry.id, object: "model", created, owned_by: "ivoai" }));
      return sendJson(res, 200, { object: "list", data });
    }
    if (route === "/v1/chat/completions" && req.method === "POST") {
      const body = await readBody(req, maxBody);
      if (!body) {
        return sendJson(
          res,
          413,
          wireError(`the request exceeds ${maxBody} bytes`, "invalid_request_error", "request_too_large"),
        );
      }
      return chat(req, res, body);
    }
    req.resume();
    sendJson(res, 404, wireError("no such endpoint", "not_found_error", "not_found"));
  };

  const server = http.createServer({ headersTimeout: 10_000, requestTimeout: 60_000 }, (req, res) => {
    handle(req, res).catch((error: unknown) => {
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
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    secret,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      // Closed connections abort their turns; each still records its end (bounded wait).
      await withTimeout(Promise.allSettled([...inflight]), 15_000).catch(() => undefined);
    },
  };
}

function startStream(res: http.ServerResponse): void {
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-store",
    connection: "keep-alive",
  });
  res.flushHeaders();
}
