// The small loopback JSON endpoint the TUI plugin reads ivoai's compact status from (`GET /status`, bearer token).
import { createHash, timingSafeEqual } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { sendJson } from "../../../shared/http-json.js";
import { newSecret } from "../../../shared/tokens.js";

export type SourceState = "ok" | "unhealthy" | "unknown";

/** A source left out of a session or failing it, and why (one bounded line). */
export interface SourceNote {
  alias: string;
  reason: string;
}

/**
 * Where the frontend's current (or last) AUTO turn stands, from its event stream: plan progress, the tasks running
 * now, failovers, tokens, the sources of its session and, once it ended, how. Bounded: lists are cut (`running_count`
 * counts every running task), text is clipped.
 */
export interface AutoStatus {
  session_id: string;
  /** The session's phase (AutoState["phase"]): "planning", "running", … and "done", "failed", "stopped" at the end. */
  phase: string;
  /** Whether the turn is still running (false once its session ended). */
  active: boolean;
  /** Tasks that ended (done, failed, skipped or cancelled) of all on record, as the engine counts progress. */
  done: number;
  total: number;
  /** Of the ended tasks, those that did their work (done): a stopped plan's cancelled tasks are not among them. */
  completed: number;
  /** The tasks running now (at most MAX_RUNNING_SHOWN), with their executor and model when known. */
  running: { id: string; executor: string | null; model: string | null }[];
  /** How many tasks run now, including those beyond `running`. */
  running_count: number;
  /** Since the session started: still counting while it runs, its length once it ended. */
  elapsed_ms: number;
  failovers: number;
  tokens: { input: number; output: number; cost_usd: number | null };
  /** The session's knowledge sources once its knowledge phase recorded them; null before (or when none). */
  sources: {
    configured: string[];
    selected: string[];
    excluded: SourceNote[];
    failed: SourceNote[];
  } | null;
  /** Once ended: its exit status and error line (null when it succeeded or still runs). */
  exit_code: number | null;
  error: string | null;
}

/** What the TUI plugin shows: a snapshot the launcher builds from the router's pool and AUTO's quota tracker. */
export interface StatusSnapshot {
  sources: { alias: string; purpose: string; state: SourceState; detail: string }[];
  /** The executor of the current or last turn ("codex", "claude"), or null before the first turn. */
  executor: string | null;
  quota: { executor: string; window: string; used_percent: number | null; resets_at: string | null }[];
  session_id: string | null;
  /** The current or last AUTO turn; null before the first one. */
  auto: AutoStatus | null;
  /** Configured sources and those this session leaves out, as the launcher saw them; null when unknown. */
  selection: { configured: string[]; excluded: SourceNote[] } | null;
}

export interface StatusServer {
  /** `http://127.0.0.1:PORT/status`. */
  url: string;
  /** The bearer token; pass it to OpenCode's TUI by environment only. */
  token: string;
  close(): Promise<void>;
}

const MAX_SNAPSHOT_BYTES = 64 * 1024;

/** Serves `getSnapshot()` on 127.0.0.1:0; anything but `GET /status` with the token is refused. */
export async function startStatusServer(
  getSnapshot: () => StatusSnapshot | Promise<StatusSnapshot>,
): Promise<StatusServer> {
  const token = newSecret("ivoai_status_");
  const tokenHash = createHash("sha256").update(`Bearer ${token}`).digest();
  const authorised = (header: string | undefined) =>
    header !== undefined && timingSafeEqual(createHash("sha256").update(header).digest(), tokenHash);
  const server = http.createServer({ headersTimeout: 5_000, requestTimeout: 10_000 }, (req, res) => {
    req.resume();
    if (!authorised(req.headers.authorization)) return sendJson(res, 401, { error: "unauthorized" });
    if (req.method !== "GET" || req.url !== "/status") return sendJson(res, 404, { error: "not found" });
    Promise.resolve()
      .then(getSnapshot)
      .then((snapshot) => {
        const body = JSON.stringify(snapshot);
        if (Buffer.byteLength(body) > MAX_SNAPSHOT_BYTES)
          return sendJson(res, 500, { error: "status too large" });
        sendJson(res, 200, snapshot);
      })
      .catch(() => sendJson(res, 500, { error: "status unavailable" }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/status`,
    token,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
