// The frontend session mapping: which official Codex/Claude conversations (and which model selection) belong to
// an OpenCode session in one working directory and knowledge scope, so follow-ups, failover and a restart
// resume the same threads. Ids and selections only — no conversation bodies, prompts or secrets. Bounded, shared
// by every ivoai process through a cross-process lock, in <stateDir>/auto/frontend-sessions.json.
import { promises as fs } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { writeFileAtomic } from "../../shared/atomic-file.js";
import { errnoCode } from "../../shared/errors.js";
import { createFileLock } from "../../shared/file-lock.js";

/** More mappings than this and the least recently updated are evicted. */
export const MAX_FRONTEND_SESSIONS = 500;
/** A mapping not updated for this long is dropped. */
export const FRONTEND_SESSION_TTL_MS = 30 * 24 * 60 * 60_000;
/** A larger file is not read: it is treated as corrupt and replaced. */
const MAX_FILE_BYTES = 2 * 1024 * 1024;
const MAX_SCOPE = 64;

const id = z.string().min(1).max(200);
const keySchema = z.object({
  frontend_session: id,
  cwd: z.string().min(1).max(4096),
  scope: z.array(z.string().min(1).max(200)).max(MAX_SCOPE),
});
const valueSchema = z.object({
  ivoai_session_id: id.nullable(),
  threads: z.object({ codex: id.nullable(), claude: id.nullable() }),
  primary: z.enum(["codex", "claude"]).nullable(),
  selection: z.object({ requested: id, effective: id.nullable() }),
  updated_at: z.string().max(40),
});
const fileSchema = z.object({
  version: z.literal(1),
  sessions: z.array(z.object({ key: keySchema, value: valueSchema })).max(MAX_FRONTEND_SESSIONS),
});

/** An OpenCode session in one working directory with one knowledge scope (source aliases, in any order). */
export interface FrontendSessionKey {
  frontendSession: string;
  cwd: string;
  scope: readonly string[];
}
export type FrontendSessionMapping = z.infer<typeof valueSchema>;
/** What a caller stores; `updated_at` is stamped by the map. */
export type FrontendSessionUpdate = Omit<FrontendSessionMapping, "updated_at">;
export interface FrontendSessionRecord {
  key: FrontendSessionKey;
  value: FrontendSessionMapping;
}

export interface SessionMapOptions {
  now?: () => Date;
  /** Told (one line) when the file was unreadable and is being replaced. Default: ignored. */
  onProblem?: (message: string) => void;
  maxEntries?: number;
  maxAgeMs?: number;
}

export interface SessionMap {
  readonly file: string;
  /** The mapping of exactly this session, directory and scope, or null (also when it has expired). */
  get(key: FrontendSessionKey): Promise<FrontendSessionMapping | null>;
  /** Stores (replaces) the mapping under the lock and returns it as stored. */
  put(key: FrontendSessionKey, value: FrontendSessionUpdate): Promise<FrontendSessionMapping>;
  /** Every live mapping, most recently updated first. */
  list(): Promise<FrontendSessionRecord[]>;
}

type StoredKey = z.infer<typeof keySchema>;
type Stored = { key: StoredKey; value: FrontendSessionMapping };

/** The key as stored: an absolute directory and a sorted, de-duplicated scope, so equal scopes compare equal. */
function canonicalKey(key: FrontendSessionKey): StoredKey {
  return keySchema.parse({
    frontend_session: key.frontendSession,
    cwd: path.resolve(key.cwd),
    scope: [...new Set(key.scope)].sort(),
  });
}

const keyText = (key: StoredKey) => JSON.stringify([key.frontend_session, key.cwd, key.scope]);

export function openSessionMap(stateDir: string, options: SessionMapOptions = {}): SessionMap {
  const dir = path.join(stateDir, "auto");
  const file = path.join(dir, "frontend-sessions.json");
  const now = options.now ?? (() => new Date());
  const report = options.onProblem ?? (() => undefined);
  const maxEntries = Math.min(options.maxEntries ?? MAX_FRONTEND_SESSIONS, MAX_FRONTEND_SESSIONS);
  const maxAgeMs = options.maxAgeMs ?? FRONTEND_SESSION_TTL_MS;

  const live = (entry: Stored) => {
    const age = now().getTime() - Date.parse(entry.value.updated_at);
    return Number.isFinite(age) && age < maxAgeMs;
  };

  const load = async (): Promise<Stored[]> => {
    let text: string;
    try {
      const stat = await fs.lstat(file);
      if (!stat.isFile() || stat.size > MAX_FILE_BYTES) {
        report(`${file} is not a small regular file; it is replaced`);
        return [];
      }
      text = await fs.readFile(file, "utf8");
    } catch (error) {
      if (errnoCode(error) === "ENOENT") return [];
      report(`cannot read ${file} (${(error as Error).message}); starting afresh`);
      return [];
    }
    try {
      return fileSchema.parse(JSON.parse(text)).sessions.filter(live);
    } catch {
      report(`${file} is corrupt; it is replaced (earlier frontend sessions start new conversations)`);
      return [];
    }
  };

  return {
    file,
    async get(key) {
      const wanted = keyText(canonicalKey(key));
      return (await load()).find((entry) => keyText(entry.key) === wanted)?.value ?? null;
    },
    async put(key, update) {
      const stored = canonicalKey(key);
      const value = valueSchema.parse({ ...update, updated_at: now().toISOString() });
      await fs.mkdir(dir, { recursive: true, mode: 0o700 });
      const lock = createFileLock(path.join(dir, ".frontend-sessions.lock"));
      try {
        return await lock.withLock(async () => {
          const others = (await load()).filter((entry) => keyText(entry.key) !== keyText(stored));
          const sessions = [...others, { key: stored, value }]
            .map((entry, order) => ({ entry, order }))
            .sort(
              (a, b) =>
                Date.parse(a.entry.value.updated_at) - Date.parse(b.entry.value.updated_at) ||
                a.order - b.order,
            )
            .slice(-maxEntries)
            .map(({ entry }) => entry);
          await writeFileAtomic(file, `${JSON.stringify({ version: 1, sessions })}\n`, { mode: 0o600 });
          return value;
        });
      } finally {
        lock.close();
      }
    },
    async list() {
      return (await load())
        .map((entry, order) => ({ entry, order }))
        .sort(
          (a, b) =>
            Date.parse(b.entry.value.updated_at) - Date.parse(a.entry.value.updated_at) || b.order - a.order,
        )
        .map(({ entry }) => ({
          key: { frontendSession: entry.key.frontend_session, cwd: entry.key.cwd, scope: entry.key.scope },
          value: entry.value,
        }));
    },
  };
}
