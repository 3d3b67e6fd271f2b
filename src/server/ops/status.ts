// `server status` for one root: what the pid file says, what /ready says, what the stores hold.
import { promises as fs, readFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import path from "node:path";
import { loadServerConfig } from "../../config/server-config.js";
import type { ServerPaths } from "../../config/server-paths.js";
import { PROTOCOL_VERSION } from "../../protocol/discovery.js";
import { errnoCode, IvoaiError } from "../../shared/errors.js";
import { isLoopbackHost } from "../../shared/loopback.js";
import { openSqlite } from "../../shared/native-sqlite.js";
import { IVOAI_VERSION } from "../../shared/version.js";
import { createEnrollmentService } from "../enrollment/service.js";
import { openServerEnrollmentStore } from "../enrollment/store.js";
import { parseListen } from "../http/listener-policy.js";
import { type PidRecord, readPidFile, removeStalePidFile } from "./pid-file.js";

export type ReadyState = "ready" | "ready_degraded" | "not_ready" | "starting" | "unreachable" | "stopped";

export interface ServerStatus {
  root: string;
  running: boolean;
  pid: number | null;
  url: string | null;
  public_url: string | null;
  started_at: string | null;
  /** What /ready answered (or why it could not be asked). */
  ready: ReadyState;
  versions: { cli: string; server: string | null; protocol: number };
  counts: {
    clients: { active: number; total: number } | null;
    connectors: number | null;
    documents: number | null;
    chunks: number | null;
    pending_approvals: number | null;
  };
  /** Parts that are not fully working: /ready's degraded and failed checks, stores that could not be read. */
  degraded: string[];
  /** Set when a stale pid file was found (and removed). */
  stale_pid_file: string | null;
}

/** Collects the status of the server for `paths`; a stale pid file is removed and reported. */
export async function serverStatus(
  paths: ServerPaths,
  options: { readyTimeoutMs?: number } = {},
): Promise<ServerStatus> {
  await assertServerTree(paths);
  const state = await readPidFile(paths.pidFile);
  let stale: string | null = null;
  if (state.state === "stale") {
    const cleaned = await removeStalePidFile(paths);
    if (cleaned.state === "stale") stale = cleaned.reason;
  }
  const record = state.state === "running" ? state.record : undefined;
  const degraded: string[] = [];
  const ready = record ? await askReady(record, paths, options.readyTimeoutMs ?? 3_000, degraded) : "stopped";
  const counts = await readCounts(paths, degraded);
  return {
    root: paths.root,
    running: record !== undefined,
    pid: record?.pid ?? null,
    url: record?.url ?? null,
    public_url: record?.public_url ?? null,
    started_at: record?.started_at ?? null,
    ready,
    versions: { cli: IVOAI_VERSION, server: record?.version ?? null, protocol: PROTOCOL_VERSION },
    counts,
    degraded,
    stale_pid_file: stale,
  };
}

async function askReady(
  record: PidRecord,
  paths: ServerPaths,
  timeoutMs: number,
  degraded: string[],
): Promise<ReadyState> {
  if (!record.url) return "starting";
  try {
    const url = await probeUrl(record.url, paths);
    if (!url) {
      degraded.push("http");
      return "unreachable";
    }
    const body = (await getJson(url, paths.tlsCert, timeoutMs)) as {
      status?: string;
      degraded?: string[];
      failed?: string[];
    };
    degraded.push(...(body.failed ?? []), ...(body.degraded ?? []));
    if (body.status === "ready" || body.status === "ready_degraded" || body.status === "not_ready")
      return body.status;
    return "unreachable";
  } catch {
    // A firewall, a hung process, a certificate we cannot read: say so, the pid is still reported.
    degraded.push("http");
    return "unreachable";
  }
}

/**
 * Where to ask /ready. The pid file is written by the service user, so its URL only lends the scheme and the
 * port (a configured port 0 is picked at bind time): the host is the configured listen host (a wildcard asked
 * on loopback). Without a readable configuration only a loopback URL is asked. Null: nothing safe to ask.
 */
async function probeUrl(recorded: string, paths: ServerPaths): Promise<URL | null> {
  let url: URL;
  try {
    url = new URL("/ready", recorded);
  } catch {
    return null;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return null;
  let host: string;
  try {
    host = parseListen((await loadServerConfig(paths.configFile)).server.listen).host;
  } catch {
    return isLoopbackHost(url.hostname) ? url : null;
  }
  if (host === "0.0.0.0") host = "127.0.0.1";
  if (host === "::" || host === "[::]") host = "::1";
  url.hostname = isIP(host) === 6 ? `[${host}]` : host;
  return url;
}

/**
 * GETs a JSON document from the server's own listener. A wildcard address is asked on loopback; over TLS the
 * server must present the certificate in its own tree (whatever name it carries): this is a local probe.
 */
function getJson(url: URL, certFile: string, timeoutMs: number): Promise<unknown> {
  if (url.hostname === "0.0.0.0") url.hostname = "127.0.0.1";
  if (url.hostname === "[::]") url.hostname = "[::1]";
  return new Promise((resolve, reject) => {
    const done = (response: http.IncomingMessage) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => {
        try {
          resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")));
        } catch (error) {
          reject(error);
        }
      });
      response.on("error", reject);
    };
    const request =
      url.protocol === "https:"
        ? https.get(
            url,
            { ca: readFileSync(certFile), checkServerIdentity: () => undefined, timeout: timeoutMs },
            done,
          )
        : http.get(url, { timeout: timeoutMs }, done);
    request.on("timeout", () => request.destroy(new Error("timed out")));
    request.on("error", reject);
  });
}

async function readCounts(paths: ServerPaths, degraded: string[]): Promise<ServerStatus["counts"]> {
  const attempt = async <T>(part: string, read: () => Promise<T>): Promise<T | null> => {
    try {
      return await read();
    } catch {
      if (!degraded.includes(part)) degraded.push(part);
      return null;
    }
  };
  const clients = await attempt("enrollment", async () => {
    const store = await openServerEnrollmentStore(paths);
    try {
      const list = await createEnrollmentService({ store }).listClients();
      return { active: list.filter((client) => !client.revoked_at).length, total: list.length };
    } finally {
      await store.close();
    }
  });
  const catalogue = await attempt("context", async () =>
    querySqlite(
      path.join(paths.contextDir, "catalogue.sqlite"),
      `SELECT (SELECT COUNT(*) FROM connectors) AS connectors, (SELECT COUNT(*) FROM documents) AS documents,
       (SELECT COUNT(*) FROM chunks) AS chunks`,
      [],
      { connectors: 0, documents: 0, chunks: 0 },
    ),
  );
  const approvals = await attempt("memory", async () =>
    querySqlite(
      path.join(paths.memoryDir, "memory.sqlite"),
      "SELECT COUNT(*) AS pending FROM approvals WHERE status = 'pending' AND expires_at > ?",
      [new Date().toISOString()],
      { pending: 0 },
    ),
  );
  return {
    clients,
    connectors: catalogue?.connectors ?? null,
    documents: catalogue?.documents ?? null,
    chunks: catalogue?.chunks ?? null,
    pending_approvals: approvals?.pending ?? null,
  };
}

/** One read-only query; a store never created yet counts as empty. */
async function querySqlite<T>(file: string, sql: string, params: unknown[], empty: T): Promise<T> {
  try {
    await fs.access(file);
  } catch (error) {
    if (errnoCode(error) === "ENOENT") return empty;
    throw error;
  }
  const db = openSqlite(file, { readonly: true, fileMustExist: true });
  try {
    db.pragma("busy_timeout = 2000");
    return db.prepare(sql).get(...params) as T;
  } finally {
    db.close();
  }
}

/** Refuses a root without a server tree, naming --root and IVOAI_SERVER_ROOT. */
export async function assertServerTree(paths: ServerPaths): Promise<void> {
  try {
    await fs.access(paths.etcDir);
  } catch (error) {
    if (errnoCode(error) === "ENOENT") {
      throw new IvoaiError(
        "CONFIG_MISSING",
        `no server under ${paths.root}: pass --root DIR (or set IVOAI_SERVER_ROOT), or run 'ivoai server init'`,
      );
    }
    if (errnoCode(error) === "EACCES") {
      throw new IvoaiError(
        "PERMISSION_DENIED",
        `cannot read ${paths.etcDir}: permission denied (run as its owner)`,
      );
    }
    throw error;
  }
}
