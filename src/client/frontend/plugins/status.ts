// The small loopback JSON endpoint the TUI plugin reads ivoai's compact status from (`GET /status`, bearer token).
import { createHash, timingSafeEqual } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { sendJson } from "../../../shared/http-json.js";
import { newSecret } from "../../../shared/tokens.js";

export type SourceState = "ok" | "unhealthy" | "unknown";

/** What the TUI plugin shows: a snapshot the launcher builds from the router's pool and AUTO's quota tracker. */
export interface StatusSnapshot {
  sources: { alias: string; purpose: string; state: SourceState; detail: string }[];
  /** The executor of the current or last turn ("codex", "claude"), or null before the first turn. */
  executor: string | null;
  quota: { executor: string; window: string; used_percent: number | null; resets_at: string | null }[];
  session_id: string | null;
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
