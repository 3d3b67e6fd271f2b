// The session control plane: one private record per session under the XDG state dir (random id, atomic
// writes, a cross-process lock, a Linux PID start-time marker). Prompts, results, tokens and environments
// are never stored.
import { promises as fs, readFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { writeFileAtomic } from "../../shared/atomic-file.js";
import { errnoCode, IvoaiError } from "../../shared/errors.js";
import { createFileLock } from "../../shared/file-lock.js";
import { newId } from "../../shared/tokens.js";
import { autoStateSchema } from "./auto-state.js";

export const sessionRecordSchema = z.object({
  id: z.string(),
  agent: z.enum(["codex", "claude", "opencode"]),
  mode: z.enum(["direct", "orchestrated"]),
  status: z.enum(["starting", "running", "exited", "failed"]),
  pid: z.number().int().nullable(),
  /** /proc/<pid>/stat start time: a reused PID is never mistaken for this session. */
  pid_start_ticks: z.string().nullable(),
  started_at: z.string(),
  ended_at: z.string().nullable(),
  exit_code: z.number().int().nullable(),
  exit_signal: z.string().nullable(),
  project: z.string(),
  knowledge_sources: z.array(z.string()),
  /** The user's own MCP servers (`ivoai mcp add`) the session was given, by name; none in older records. */
  mcp_servers: z.array(z.string()).default([]),
  compression: z.object({ requested: z.string(), effective: z.string(), reason: z.string().max(200) }),
  error: z.string().max(300).nullable(),
  /** Orchestrated sessions only: the plan and its progress, metadata only (never prompts or answers). */
  auto: autoStateSchema.optional(),
});

export type SessionRecord = z.infer<typeof sessionRecordSchema>;

/**
 * What a person is told a session is doing. `interrupted`: the record says it runs, but its recorded process
 * (pid and start time) is gone, so it ended without recording it (a kill -9, a crash, a lost machine).
 */
export type SessionState = "starting" | "running" | "interrupted" | "exited" | "failed";

export type SessionView = SessionRecord & { live: boolean; state: SessionState };

/** The start time of a process, in clock ticks since boot (field 22 of /proc/<pid>/stat). */
export function processStartTicks(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: fields restart after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

export function isLive(record: SessionRecord): boolean {
  if (record.status !== "running" && record.status !== "starting") return false;
  if (record.pid === null || record.pid_start_ticks === null) return false;
  return processStartTicks(record.pid) === record.pid_start_ticks;
}

/** The one judgement `session list` and `session show` both print, from the recorded process identity. */
export function sessionState(record: SessionRecord): SessionState {
  if (record.status === "exited" || record.status === "failed") return record.status;
  if (isLive(record)) return "running";
  // A launcher records its agent's pid only once it is spawned: before that nothing says the session is gone.
  return record.status === "starting" && record.pid === null ? "starting" : "interrupted";
}

function viewOf(record: SessionRecord): SessionView {
  const state = sessionState(record);
  return { ...record, live: state === "running", state };
}

export interface SessionStore {
  create(
    fields: Omit<
      SessionRecord,
      "id" | "started_at" | "ended_at" | "exit_code" | "exit_signal" | "error" | "mcp_servers"
    > &
      Partial<Pick<SessionRecord, "mcp_servers">>,
  ): Promise<SessionRecord>;
  /** `guard` sees the record under the lock first and may throw to refuse the change (a compare-and-set). */
  update(
    id: string,
    change: Partial<SessionRecord>,
    guard?: (current: SessionView) => void,
  ): Promise<SessionRecord>;
  get(id: string): Promise<SessionView>;
  list(): Promise<SessionView[]>;
}

export function openSessionStore(stateDir: string): SessionStore {
  const dir = path.join(stateDir, "sessions");
  const file = (id: string) => {
    if (!/^ses_[0-9a-f]{16}$/.test(id)) throw new IvoaiError("USAGE", `invalid session id '${id}'`);
    return path.join(dir, `${id}.json`);
  };
  const ready = () => fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const read = async (id: string): Promise<SessionRecord> => {
    try {
      return sessionRecordSchema.parse(JSON.parse(await fs.readFile(file(id), "utf8")));
    } catch (error) {
      if (errnoCode(error) === "ENOENT") throw new IvoaiError("NOT_FOUND", `no session ${id}`);
      throw error;
    }
  };
  const withLock = async <T>(run: () => Promise<T>) => {
    await ready();
    const lock = createFileLock(path.join(dir, ".lock"));
    try {
      return await lock.withLock(run);
    } finally {
      lock.close();
    }
  };
  const write = (record: SessionRecord) =>
    writeFileAtomic(file(record.id), `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });

  return {
    create: (fields) =>
      withLock(async () => {
        const record: SessionRecord = {
          mcp_servers: [],
          ...fields,
          id: newId("ses_"),
          started_at: new Date().toISOString(),
          ended_at: null,
          exit_code: null,
          exit_signal: null,
          error: null,
        };
        await write(record);
        return record;
      }),
    update: (id, change, guard) =>
      withLock(async () => {
        const current = await read(id);
        guard?.(viewOf(current));
        const record = sessionRecordSchema.parse({ ...current, ...change, id });
        await write(record);
        return record;
      }),
    async get(id) {
      return viewOf(await read(id));
    },
    async list() {
      let names: string[];
      try {
        names = await fs.readdir(dir);
      } catch (error) {
        if (errnoCode(error) === "ENOENT") return [];
        throw error;
      }
      const records: SessionView[] = [];
      for (const name of names.filter((entry) => /^ses_[0-9a-f]{16}\.json$/.test(entry))) {
        try {
          records.push(viewOf(await read(name.slice(0, -5))));
        } catch {
          // A record that does not parse is skipped, not fatal to listing the others.
        }
      }
      return records.sort((a, b) => b.started_at.localeCompare(a.started_at));
    },
  };
}
