// The private control channel between the ivoai-orchestrator MCP process and the supervisor: HTTP on a Unix
// socket (0600, in a 0700 directory) behind a random 256-bit bearer token, one route per operation, bounded
// JSON bodies, every handler failure a JSON error. The MCP process is the only client (controlClient).
import { createHash, timingSafeEqual } from "node:crypto";
import { promises as fs } from "node:fs";
import http from "node:http";
import net from "node:net";
import path from "node:path";
import type { z } from "zod";
import {
  errnoCode,
  IVOAI_ERROR_CODES,
  IvoaiError,
  type IvoaiErrorCode,
  isIvoaiError,
} from "../../../shared/errors.js";
import { readBody, sendJson } from "../../../shared/http-json.js";
import { newSecret } from "../../../shared/tokens.js";
import { ensurePrivateDir } from "../private-dir.js";
import {
  artifactRangeSchema,
  CONTROL_ROUTES,
  type ControlHandlers,
  delegateInputSchema,
  delegateOutcomeSchema,
  MAX_CONTROL_BODY_BYTES,
  MAX_CONTROL_RESPONSE_BYTES,
  readArtifactInputSchema,
  statusInputSchema,
  statusOutcomeSchema,
} from "./protocol.js";

/** Linux's sun_path holds 108 bytes, the terminating NUL included. */
const MAX_SOCKET_PATH_BYTES = 107;
const DEFAULT_HANDLER_TIMEOUT_MS = 30_000;
const DEFAULT_CLIENT_TIMEOUT_MS = 45_000;

export interface ControlServerOptions {
  /** Where to listen; its directory is created 0700 (or must already be private). */
  socketPath: string;
  handlers: ControlHandlers;
  /** Bound on one handler call (default 30 s); a slower one answers 504. */
  handlerTimeoutMs?: number;
  /** Told about unexpected (non-IvoaiError) handler failures, which answer a generic 500. */
  onError?: (error: unknown) => void;
}

export interface ControlServer {
  /** The bearer token the MCP process must present (pass it through the environment, never argv). */
  token: string;
  socketPath: string;
  /** Stops listening, drops open connections and removes the socket file. */
  close(): Promise<void>;
}

/** Wire errors are `{ error: { code, message } }`; code is an IvoaiErrorCode or one of these. */
type WireCode = IvoaiErrorCode | "UNAUTHORIZED" | "PAYLOAD_TOO_LARGE" | "TIMEOUT";

const HTTP_STATUS: Partial<Record<WireCode, number>> = {
  USAGE: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  STATE_CORRUPT: 422,
  UNSAFE_PATH: 422,
  LOCK_TIMEOUT: 503,
  TIMEOUT: 504,
};

/** One listening control server: where it listens, the token's digest and the operations it answers. */
interface ControlState {
  readonly options: ControlServerOptions;
  readonly socketPath: string;
  readonly tokenHash: Buffer;
  readonly handlerTimeoutMs: number;
  readonly operations: Record<string, (body: unknown) => Promise<unknown>>;
  /** Once closed, no token is accepted any more. */
  closed: boolean;
}

export async function startControlServer(options: ControlServerOptions): Promise<ControlServer> {
  const socketPath = checkedSocketPath(options.socketPath);
  await ensurePrivateDir(path.dirname(socketPath));
  await removeStaleSocket(socketPath);
  const token = newSecret("ivoai_orc_");
  const state: ControlState = {
    options,
    socketPath,
    tokenHash: createHash("sha256").update(token).digest(),
    handlerTimeoutMs: options.handlerTimeoutMs ?? DEFAULT_HANDLER_TIMEOUT_MS,
    operations: controlOperations(options.handlers),
    closed: false,
  };
  const server = http.createServer({ headersTimeout: 10_000, requestTimeout: 60_000 }, (req, res) => {
    handle(state, req, res).catch((error: unknown) => {
      options.onError?.(error);
      if (!res.headersSent) sendError(res, "INTERNAL", "internal error");
      else res.destroy();
    });
  });
  const ino = await listenPrivately(server, socketPath);
  return { token, socketPath, close: () => closeControl(state, server, ino) };
}

function checkedSocketPath(requested: string): string {
  const socketPath = path.resolve(requested);
  if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH_BYTES) {
    throw new IvoaiError(
      "USAGE",
      `control socket path is ${Buffer.byteLength(socketPath)} bytes; Unix sockets allow ${MAX_SOCKET_PATH_BYTES}`,
    );
  }
  return socketPath;
}

/** Each route's operation: its input parsed by the protocol's schema, then the supervisor's handler. */
function controlOperations(
  handlers: ControlServerOptions["handlers"],
): Record<string, (body: unknown) => Promise<unknown>> {
  return {
    [CONTROL_ROUTES.delegate]: (body) => handlers.delegate(parse(delegateInputSchema, body)),
    [CONTROL_ROUTES.status]: (body) => handlers.status(parse(statusInputSchema, body).task_id),
    [CONTROL_ROUTES.readArtifact]: (body) => {
      const input = parse(readArtifactInputSchema, body);
      return handlers.readArtifact(input.ref, input.offset, input.length);
    },
  };
}

/** Listens on the socket, makes it 0600 and returns its inode (close removes only that socket). */
async function listenPrivately(server: http.Server, socketPath: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => {
      server.off("error", reject);
      resolve();
    });
  });
  await fs.chmod(socketPath, 0o600);
  return (await fs.lstat(socketPath)).ino;
}

async function closeControl(state: ControlState, server: http.Server, ino: number): Promise<void> {
  if (state.closed) return;
  state.closed = true;
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
  // Node unlinks its socket on close; remove it only if it is still ours.
  const stat = await fs.lstat(state.socketPath).catch(() => null);
  if (stat?.isSocket() && stat.ino === ino) await fs.rm(state.socketPath, { force: true });
}

function authorised(state: ControlState, header: string | undefined): boolean {
  if (state.closed) return false;
  const presented = /^Bearer (\S+)$/i.exec(header ?? "")?.[1] ?? "";
  return timingSafeEqual(createHash("sha256").update(presented).digest(), state.tokenHash);
}

/** Token, route and method first, then the JSON body, then the operation within the handler timeout. */
async function handle(
  state: ControlState,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  if (!authorised(state, req.headers.authorization)) {
    req.resume();
    return sendError(res, "UNAUTHORIZED", "a valid control token is required");
  }
  const route = (req.url ?? "").split("?")[0] ?? "";
  const operation = state.operations[route];
  if (!operation) {
    req.resume();
    return sendError(res, "NOT_FOUND", `no control route ${route.slice(0, 100)}`);
  }
  if (req.method !== "POST") {
    req.resume();
    return sendJson(res, 405, { error: { code: "USAGE", message: "control routes take POST" } });
  }
  const raw = await readBody(req, MAX_CONTROL_BODY_BYTES);
  if (raw === undefined) {
    return sendError(
      res,
      "PAYLOAD_TOO_LARGE",
      `request bodies are limited to ${MAX_CONTROL_BODY_BYTES} bytes`,
    );
  }
  let body: unknown;
  try {
    body = raw.length === 0 ? {} : JSON.parse(raw.toString("utf8"));
  } catch {
    return sendError(res, "USAGE", "the request body is not JSON");
  }
  return answer(state, res, () => operation(body));
}

/** Runs the operation within the handler timeout and answers with its result or its error's code. */
async function answer(
  state: ControlState,
  res: http.ServerResponse,
  run: () => Promise<unknown>,
): Promise<void> {
  const { handlerTimeoutMs } = state;
  let timer: NodeJS.Timeout | undefined;
  try {
    const result = await Promise.race([
      run(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new ControlTimeout(`the supervisor did not answer within ${handlerTimeoutMs} ms`)),
          handlerTimeoutMs,
        );
      }),
    ]);
    sendJson(res, 200, result);
  } catch (error) {
    if (error instanceof ControlTimeout) return sendError(res, "TIMEOUT", error.message);
    if (isIvoaiError(error)) return sendError(res, error.code, firstLine(error.message));
    state.options.onError?.(error);
    sendError(res, "INTERNAL", `internal error: ${firstLine((error as Error)?.message ?? String(error))}`);
  } finally {
    clearTimeout(timer);
  }
}

/** The supervisor's control operations, over the socket; failures are IvoaiErrors carrying the server's code. */
export function controlClient(
  socketPath: string,
  token: string,
  options: { timeoutMs?: number } = {},
): ControlHandlers {
  const timeoutMs = options.timeoutMs ?? DEFAULT_CLIENT_TIMEOUT_MS;
  const call = async <T>(route: string, body: unknown, schema: z.ZodType<T>): Promise<T> => {
    const { status, json } = await post(socketPath, token, route, body, timeoutMs);
    if (status !== 200) {
      const error = (json as { error?: { code?: unknown; message?: unknown } } | null)?.error;
      const message =
        typeof error?.message === "string" ? error.message : `control channel answered ${status}`;
      throw new IvoaiError(wireToIvoaiCode(error?.code), message, { data: { status } });
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      throw new IvoaiError(
        "INTERNAL",
        `the supervisor answered an unexpected shape: ${issuesText(parsed.error)}`,
      );
    }
    return parsed.data;
  };
  return {
    delegate: (input) => call(CONTROL_ROUTES.delegate, input, delegateOutcomeSchema),
    status: (taskId) =>
      call(CONTROL_ROUTES.status, taskId === undefined ? {} : { task_id: taskId }, statusOutcomeSchema),
    readArtifact: (ref, offset, length) =>
      call(
        CONTROL_ROUTES.readArtifact,
        { ref, ...(offset === undefined ? {} : { offset }), ...(length === undefined ? {} : { length }) },
        artifactRangeSchema,
      ),
  };
}

class ControlTimeout extends Error {}

function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new IvoaiError("USAGE", `invalid arguments: ${issuesText(parsed.error)}`);
  return parsed.data;
}

/** A zod error in one line: `path: message; …`. */
export function issuesText(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => (issue.path.length ? `${issue.path.join(".")}: ${issue.message}` : issue.message))
    .join("; ");
}

const IVOAI_CODES = new Set<string>(IVOAI_ERROR_CODES);

function wireToIvoaiCode(code: unknown): IvoaiErrorCode {
  if (typeof code === "string" && IVOAI_CODES.has(code)) return code as IvoaiErrorCode;
  if (code === "UNAUTHORIZED") return "PERMISSION_DENIED";
  if (code === "PAYLOAD_TOO_LARGE") return "USAGE";
  if (code === "TIMEOUT") return "NETWORK";
  return "INTERNAL";
}

function firstLine(text: string): string {
  return (text.split("\n")[0] ?? "").slice(0, 500);
}

function sendError(res: http.ServerResponse, code: WireCode, message: string): void {
  sendJson(res, HTTP_STATUS[code] ?? 500, { error: { code, message } });
}

/**
 * Clears the way for a new socket: nothing there is fine; a socket nobody listens on (left by a crashed
 * supervisor) is removed; a live socket, a non-socket or another user's file is refused.
 */
async function removeStaleSocket(socketPath: string): Promise<void> {
  let stat: Awaited<ReturnType<typeof fs.lstat>>;
  try {
    stat = await fs.lstat(socketPath);
  } catch (error) {
    if (errnoCode(error) === "ENOENT") return;
    throw error;
  }
  if (!stat.isSocket()) {
    throw new IvoaiError("UNSAFE_PATH", `refusing to replace ${socketPath}: not a socket`);
  }
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid) {
    throw new IvoaiError("UNSAFE_PATH", `refusing to replace ${socketPath}: owned by uid ${stat.uid}`);
  }
  if (await isListening(socketPath)) {
    throw new IvoaiError("CONFLICT", `another process is listening on ${socketPath}`);
  }
  await fs.rm(socketPath, { force: true });
}

function isListening(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ path: socketPath });
    const done = (listening: boolean) => {
      socket.destroy();
      resolve(listening);
    };
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
    // Something that accepts but never completes a connection is still someone's: do not steal it.
    socket.setTimeout(2_000, () => done(true));
  });
}

/** One POST over the socket, bounded in time and answer size. */
function post(
  socketPath: string,
  token: string,
  route: string,
  body: unknown,
  timeoutMs: number,
): Promise<{ status: number; json: unknown }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        socketPath,
        path: route,
        method: "POST",
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
          "content-length": Buffer.byteLength(payload),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let total = 0;
        res.on("data", (chunk: Buffer) => {
          total += chunk.length;
          if (total > MAX_CONTROL_RESPONSE_BYTES) {
            req.destroy(
              new IvoaiError(
                "INTERNAL",
                `the supervisor's answer exceeded ${MAX_CONTROL_RESPONSE_BYTES} bytes`,
              ),
            );
          } else chunks.push(chunk);
        });
        res.on("error", (error) => req.destroy(error));
        res.on("end", () => {
          clearTimeout(timer);
          try {
            resolve({
              status: res.statusCode ?? 0,
              json: JSON.parse(Buffer.concat(chunks).toString("utf8")),
            });
          } catch {
            reject(new IvoaiError("INTERNAL", `the control channel answered ${res.statusCode} without JSON`));
          }
        });
      },
    );
    const timer = setTimeout(
      () => req.destroy(new IvoaiError("NETWORK", `the supervisor did not answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    req.on("error", (error) => {
      clearTimeout(timer);
      reject(
        isIvoaiError(error)
          ? error
          : new IvoaiError(
              "NETWORK",
              `cannot reach the ivoai supervisor's control channel: ${error.message}`,
            ),
      );
    });
    req.end(payload);
  });
}
