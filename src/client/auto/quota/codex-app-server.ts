// Asks the official `codex app-server` (newline-delimited JSON-RPC over stdio, no `jsonrpc` field) for the
// account's rate limits and the models it offers: the codex half of AUTO's quota manager and model catalogue.
// Shapes: `codex app-server generate-ts` of the pinned CLI (v2/GetAccountRateLimitsResponse, RateLimitSnapshot,
// RateLimitWindow, AccountRateLimitsUpdatedNotification, ModelListParams/Response); test/auto-quota.contract.test.ts.
import { type ChildProcess, spawn } from "node:child_process";
import { z } from "zod";
import { IVOAI_VERSION } from "../../../shared/version.js";
import type { QuotaSnapshot } from "../contracts.js";

/** JSON-RPC "invalid request": what the app-server answers `account/rateLimits/read` with when not logged in. */
export const INVALID_REQUEST = -32600;
export const NOT_LOGGED_IN = "codex is not logged in";

const windowSchema = z.object({
  usedPercent: z.number(),
  windowDurationMins: z.number().nullable().optional(),
  /** Epoch seconds. */
  resetsAt: z.number().nullable().optional(),
});
const rateLimitSnapshotSchema = z.object({
  limitId: z.string().nullable().optional(),
  primary: windowSchema.nullable().optional(),
  secondary: windowSchema.nullable().optional(),
  rateLimitReachedType: z.string().nullable().optional(),
});
const rateLimitsResponseSchema = z.object({
  ordinaryUsageAllowed: z.boolean().nullable().optional(),
  rateLimits: rateLimitSnapshotSchema,
});
const updateSchema = z.object({ rateLimits: rateLimitSnapshotSchema });
const modelListSchema = z.object({
  data: z.array(
    z.object({
      model: z.string().min(1).max(120),
      displayName: z.string().max(200).optional(),
      hidden: z.boolean().optional(),
      isDefault: z.boolean().optional(),
      supportedReasoningEfforts: z.array(z.object({ reasoningEffort: z.string().max(40) })).max(20),
      defaultReasoningEffort: z.string().max(40).nullable().optional(),
    }),
  ),
  nextCursor: z.string().nullable().optional(),
});

export type RateLimitSnapshotWire = z.infer<typeof rateLimitSnapshotSchema>;

/** One model `model/list` offered, reduced to what the catalogue needs. */
export interface CodexModel {
  model: string;
  displayName: string;
  isDefault: boolean;
  efforts: string[];
  defaultEffort: string | null;
}

export interface CodexProbeOptions {
  /** Absolute path of the official `codex`. */
  cliPath: string;
  env: NodeJS.ProcessEnv;
  /** The whole probe, spawn to exit (default 15 s). */
  timeoutMs?: number;
  /** Between TERM and KILL of the app-server's process group (default 2 s). */
  killAfterMs?: number;
  /** Read the rate limits (default true). */
  rateLimits?: boolean;
  /** List the models (default true). */
  models?: boolean;
  /** `model/list` page size (default 50) and page cap (default 10). */
  pageSize?: number;
  maxPages?: number;
  now?: () => Date;
}

export interface CodexProbe {
  /** From the rate-limit read: answered → logged_in, -32600 → logged_out; unknown when not asked or failed. */
  account: "logged_in" | "logged_out" | "unknown";
  /** The read's windows with every `account/rateLimits/updated` push of the probe merged in. */
  snapshots: QuotaSnapshot[];
  /** Visible models, every page; null when `model/list` was not asked or failed. */
  models: CodexModel[] | null;
  /** One bounded line per problem, e.g. "codex is not logged in". Empty when everything answered. */
  problems: string[];
}

class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** Probes `<codex> app-server`; never throws for anything the CLI does (a failure is a problem line). */
export async function probeCodexAppServer(options: CodexProbeOptions): Promise<CodexProbe> {
  const now = options.now ?? (() => new Date());
  const result: CodexProbe = { account: "unknown", snapshots: [], models: null, problems: [] };
  const session = startSession(options);
  try {
    await session.request("initialize", {
      clientInfo: { name: "ivoai", title: null, version: IVOAI_VERSION },
      capabilities: null,
    });
    session.notify("initialized");
    if (options.rateLimits !== false) {
      try {
        const read = rateLimitsResponseSchema.parse(await session.request("account/rateLimits/read"));
        result.account = "logged_in";
        const blocked = read.ordinaryUsageAllowed === false;
        result.snapshots = rateLimitSnapshots(read.rateLimits, now(), {
          blocked,
          allowed: read.ordinaryUsageAllowed === true,
        });
      } catch (error) {
        if (isNotLoggedIn(error)) {
          result.account = "logged_out";
          result.problems.push(NOT_LOGGED_IN);
        } else result.problems.push(`account/rateLimits/read failed: ${describe(error)}`);
      }
    }
    if (options.models !== false) {
      try {
        result.models = await listModels(session, options.pageSize ?? 50, options.maxPages ?? 10);
      } catch (error) {
        result.problems.push(`model/list failed: ${describe(error)}`);
      }
    }
  } catch (error) {
    result.problems.push(`codex app-server: ${describe(error)}`);
  } finally {
    await session.close();
  }
  // Pushes are partial: a window they leave out (or null) keeps what the read said.
  if (result.account === "logged_in") {
    for (const push of session.updates) {
      const parsed = updateSchema.safeParse(push.params);
      if (!parsed.success) continue;
      result.snapshots = mergeWindows(
        result.snapshots,
        rateLimitSnapshots(parsed.data.rateLimits, push.at, {}),
      );
    }
  }
  return result;
}

function isNotLoggedIn(error: unknown): boolean {
  return (
    error instanceof RpcError &&
    error.code === INVALID_REQUEST &&
    !/unknown variant|initialized/i.test(error.message)
  );
}

function describe(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/\s+/g, " ").slice(0, 200);
}

async function listModels(session: Session, pageSize: number, maxPages: number): Promise<CodexModel[]> {
  const models: CodexModel[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < maxPages; page += 1) {
    const response = modelListSchema.parse(
      await session.request("model/list", { limit: pageSize, cursor, includeHidden: false }),
    );
    for (const entry of response.data) {
      if (entry.hidden) continue;
      models.push({
        model: entry.model,
        displayName: entry.displayName ?? entry.model,
        isDefault: entry.isDefault ?? false,
        efforts: entry.supportedReasoningEfforts.map((option) => option.reasoningEffort),
        defaultEffort: entry.defaultReasoningEffort ?? null,
      });
    }
    cursor = response.nextCursor ?? null;
    if (!cursor) break;
  }
  return models;
}

/**
 * The windows of one RateLimitSnapshot as normalised snapshots. `resetsAt` is epoch seconds. A window at 100%
 * is "rejected"; so is every window when the backend says usage is blocked (a reached type, or
 * `ordinaryUsageAllowed: false`): the generated docs say not to infer recovery from percentages.
 */
export function rateLimitSnapshots(
  snapshot: RateLimitSnapshotWire,
  observedAt: Date,
  flags: { blocked?: boolean; allowed?: boolean },
): QuotaSnapshot[] {
  const blocked = flags.blocked === true || (snapshot.rateLimitReachedType ?? null) !== null;
  const out: QuotaSnapshot[] = [];
  for (const name of ["primary", "secondary"] as const) {
    const window = snapshot[name];
    if (!window) continue;
    const used = Math.min(100, Math.max(0, window.usedPercent));
    out.push({
      executor: "codex",
      window: name,
      used_percent: used,
      status: blocked || used >= 100 ? "rejected" : flags.allowed ? "allowed" : null,
      resets_at: typeof window.resetsAt === "number" ? epochSecondsToIso(window.resetsAt) : null,
      observed_at: observedAt.toISOString(),
      source: "app-server",
    });
  }
  return out;
}

export function epochSecondsToIso(seconds: number): string | null {
  const date = new Date(seconds * 1000);
  return Number.isFinite(date.getTime()) ? date.toISOString() : null;
}

function mergeWindows(base: QuotaSnapshot[], update: QuotaSnapshot[]): QuotaSnapshot[] {
  const out = [...base];
  for (const next of update) {
    const at = out.findIndex((snapshot) => snapshot.window === next.window);
    const previous = out[at];
    if (at === -1 || !previous) {
      out.push(next);
      continue;
    }
    // A push follows the read on the wire, even when both arrived in one chunk.
    const observed =
      Date.parse(next.observed_at) >= Date.parse(previous.observed_at)
        ? next.observed_at
        : previous.observed_at;
    out[at] = {
      ...next,
      status: next.status ?? previous.status,
      resets_at: next.resets_at ?? previous.resets_at,
      observed_at: observed,
    };
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// The JSON-RPC session over the child's stdio.

interface Session {
  request(method: string, params?: unknown): Promise<unknown>;
  notify(method: string, params?: unknown): void;
  readonly updates: { params: unknown; at: Date }[];
  close(): Promise<void>;
}

const MAX_LINE_BYTES = 4 * 1024 * 1024;
const MAX_UPDATES = 100;

/** One app-server child and the JSON-RPC exchange over its stdio. */
interface SessionState {
  readonly child: ChildProcess;
  /** Resolves once the child has closed (or could not start). */
  readonly exited: Promise<void>;
  readonly now: () => Date;
  readonly killAfterMs: number;
  readonly pending: Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>;
  readonly updates: { params: unknown; at: Date }[];
  nextId: number;
  /** The first failure: every pending and later request rejects with it. */
  failure: Error | undefined;
  stderr: string;
  /** Stdout not yet split into lines. */
  buffer: string;
  deadline: NodeJS.Timeout | undefined;
}

function startSession(options: CodexProbeOptions): Session {
  const timeoutMs = options.timeoutMs ?? 15_000;
  const child: ChildProcess = spawn(options.cliPath, ["app-server"], {
    env: options.env,
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
  });
  const state: SessionState = {
    child,
    exited: new Promise<void>((resolve) => {
      child.once("close", () => resolve());
      child.once("error", () => resolve());
    }),
    now: options.now ?? (() => new Date()),
    killAfterMs: options.killAfterMs ?? 2_000,
    pending: new Map(),
    updates: [],
    nextId: 1,
    failure: undefined,
    stderr: "",
    buffer: "",
    deadline: undefined,
  };
  state.deadline = setTimeout(() => failAll(state, new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  state.deadline.unref();
  watchChild(state);
  return {
    updates: state.updates,
    request: (method, params) => request(state, method, params),
    notify(method, params) {
      write(state, params === undefined ? { method } : { method, params });
    },
    close: () => closeSession(state),
  };
}

function watchChild(state: SessionState): void {
  const { child } = state;
  child.once("error", (error) => failAll(state, new Error(`cannot start: ${error.message}`)));
  child.once("close", (code, signal) =>
    failAll(
      state,
      new Error(`exited (${signal ?? code})${state.stderr ? `: ${lastLine(state.stderr)}` : ""}`),
    ),
  );
  child.stdin?.on("error", () => undefined);
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (chunk: string) => {
    state.stderr = (state.stderr + chunk).slice(-4096);
  });
  child.stdout?.setEncoding("utf8");
  child.stdout?.on("data", (chunk: string) => onStdout(state, chunk));
}

function failAll(state: SessionState, error: Error): void {
  state.failure ??= error;
  for (const entry of state.pending.values()) entry.reject(state.failure);
  state.pending.clear();
}

/** Splits stdout into protocol lines; a line over 4 MiB fails the session. */
function onStdout(state: SessionState, chunk: string): void {
  state.buffer += chunk;
  if (state.buffer.length > MAX_LINE_BYTES && !state.buffer.includes("\n")) {
    failAll(state, new Error("a message exceeded 4 MiB"));
    state.buffer = "";
    return;
  }
  let newline = state.buffer.indexOf("\n");
  while (newline !== -1) {
    const line = state.buffer.slice(0, newline).trim();
    state.buffer = state.buffer.slice(newline + 1);
    if (line) onMessage(state, line);
    newline = state.buffer.indexOf("\n");
  }
}

function write(state: SessionState, message: Record<string, unknown>): void {
  const { stdin } = state.child;
  if (stdin?.writable) stdin.write(`${JSON.stringify(message)}\n`);
}

function onMessage(state: SessionState, line: string): void {
  let message: Record<string, unknown>;
  try {
    message = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return; // not a protocol line
  }
  if (typeof message !== "object" || message === null) return;
  const { id, method } = message;
  if (typeof method === "string") {
    if (id !== undefined) {
      // A server request (approval, elicitation…): the probe never grants anything.
      write(state, {
        id,
        error: { code: -32601, message: "ivoai's quota probe handles no server requests" },
      });
    } else if (method === "account/rateLimits/updated" && state.updates.length < MAX_UPDATES) {
      state.updates.push({ params: message.params, at: state.now() });
    }
    return;
  }
  if (typeof id === "number") settle(state, id, message);
}

/** Resolves or rejects the request `id` answers (an unknown id is ignored). */
function settle(state: SessionState, id: number, message: Record<string, unknown>): void {
  const entry = state.pending.get(id);
  if (!entry) return;
  state.pending.delete(id);
  const error = message.error as { code?: unknown; message?: unknown } | undefined;
  if (error) {
    entry.reject(
      new RpcError(
        typeof error.code === "number" ? error.code : 0,
        typeof error.message === "string" ? error.message : "error",
      ),
    );
  } else entry.resolve(message.result);
}

function request(state: SessionState, method: string, params: unknown): Promise<unknown> {
  if (state.failure) return Promise.reject(state.failure);
  const id = state.nextId++;
  return new Promise((resolve, reject) => {
    state.pending.set(id, { resolve, reject });
    write(state, params === undefined ? { id, method } : { id, method, params });
  });
}

/** TERM to the child's process group, KILL after the bound, then KILL whatever the group left behind. */
async function closeSession(state: SessionState): Promise<void> {
  const { child } = state;
  clearTimeout(state.deadline);
  child.stdin?.end();
  const signalGroup = (signal: NodeJS.Signals) => {
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      // already gone
    }
  };
  signalGroup("SIGTERM");
  const kill = setTimeout(() => signalGroup("SIGKILL"), state.killAfterMs);
  await state.exited;
  clearTimeout(kill);
  // Whatever the group left behind (a helper the app-server spawned) goes too.
  if (child.pid !== undefined) {
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      // none left
    }
  }
}

function lastLine(text: string): string {
  const lines = text.trim().split("\n");
  return (lines.at(-1) ?? "")
    .replace(/[^ -~]\[[0-9;]*m/g, "")
    .replace(/[^ -~]/g, "")
    .slice(0, 200);
}
