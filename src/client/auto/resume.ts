// What `ivoai session resume` needs beyond the session record: the task as typed, the brief, the validated plan
// (with its instructions) and every finished worker result. The record holds metadata only; this journal holds
// the words, so it lives beside the artifacts in the private state dir (0600, atomic writes) and goes when the
// session ends done. A resumed session keeps its done tasks, re-admits the rest, and continues the executors'
// own conversations by their recorded thread ids.
import { promises as fs } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { writeFileAtomic } from "../../shared/atomic-file.js";
import { errnoCode, IvoaiError } from "../../shared/errors.js";
import { type AutoState, autoStateSchema } from "../session/auto-state.js";
import type { SessionView } from "../session/store.js";
import { EXECUTORS, planSchema, resultRefSchema } from "./contracts.js";

const workerResultSchema = z.object({
  task_id: z.string(),
  status: z.enum(["done", "failed"]),
  summary: z.string(),
  findings: z.array(z.string()),
  state_delta: z.object({
    advisory: z.literal(true),
    changes: z.array(z.object({ path: z.string(), change: z.string() })),
  }),
  refs: z.array(resultRefSchema),
});

export const journalSchema = z.object({
  v: z.literal(1),
  session_id: z.string(),
  task: z.string(),
  cwd: z.string(),
  /** The knowledge selection as asked (flags), so a resumed session selects the same sources. */
  knowledge_sources: z.array(z.string()),
  workers: z.number().int().min(1).max(3),
  explicit: z.object({ executor: z.enum(EXECUTORS), model: z.string(), effort: z.string() }).nullable(),
  brief: z
    .object({
      text: z.string(),
      memory: z.string(),
      context: z.string(),
      bytes: z.number().int(),
    })
    .nullable(),
  plan: planSchema.nullable(),
  results: z.array(workerResultSchema),
});
export type ResumeJournal = z.infer<typeof journalSchema>;

export function journalFile(stateDir: string, sessionId: string): string {
  return path.join(stateDir, "auto", "resume", `${sessionId}.json`);
}

/** Writes the journal atomically, one write at a time, in order; a failed write costs resumability, not the run. */
export interface JournalWriter {
  readonly journal: ResumeJournal;
  save(change: (journal: ResumeJournal) => void): void;
  /** Waits for the writes so far. */
  flush(): Promise<void>;
  /** The session ended done: nothing to resume, the words go. */
  remove(): Promise<void>;
}

export function createJournalWriter(file: string, journal: ResumeJournal): JournalWriter {
  let chain: Promise<void> = Promise.resolve();
  const write = () => {
    const data = `${JSON.stringify(journal)}\n`;
    chain = chain
      .then(async () => {
        await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
        await writeFileAtomic(file, data, { mode: 0o600 });
      })
      // A journal that cannot be written costs resumability, never the run; later saves try again.
      .catch(() => undefined);
  };
  write();
  return {
    journal,
    save(change) {
      change(journal);
      write();
    },
    flush: () => chain,
    async remove() {
      await chain;
      await fs.rm(file, { force: true });
    },
  };
}

export async function readJournal(stateDir: string, sessionId: string): Promise<ResumeJournal> {
  let raw: string;
  try {
    raw = await fs.readFile(journalFile(stateDir, sessionId), "utf8");
  } catch (error) {
    if (errnoCode(error) === "ENOENT") {
      throw new IvoaiError(
        "NOT_FOUND",
        `${sessionId} has nothing to resume from (its journal is gone: the session ended done, or before this ivoai kept journals)`,
      );
    }
    throw error;
  }
  const parsed = journalSchema.safeParse(JSON.parse(raw));
  if (!parsed.success || parsed.data.session_id !== sessionId) {
    throw new IvoaiError("CONFLICT", `${sessionId}: its resume journal is unreadable; start the task anew`);
  }
  return parsed.data;
}

/** Why `session` cannot be resumed, or null when it can (interrupted, stopped, failed or out of quota). */
export function notResumable(session: SessionView): string | null {
  if (session.mode !== "orchestrated" || !session.auto) return `${session.id} is not an AUTO session`;
  if (session.state === "running" || session.state === "starting")
    return `${session.id} is still running (pid ${session.pid ?? "?"}); 'ivoai session watch ${session.id}' follows it`;
  if (session.auto.phase === "done") return `${session.id} finished its work; nothing to resume`;
  return null;
}

/**
 * The state a resumed session starts from: done tasks stay done (with their evidence and usage); every other
 * plan task is pending again and re-admitted; delegated tasks that did not finish are dropped (the primary
 * delegates again if it still needs them); nothing runs yet.
 */
export function resumedState(previous: AutoState, results: ReadonlySet<string>, pid: number): AutoState {
  const state = autoStateSchema.parse(structuredClone(previous));
  state.tasks = state.tasks
    .filter((task) => task.origin === "plan" || (task.state === "done" && results.has(task.id)))
    .map((task) =>
      task.state === "done" && results.has(task.id)
        ? task
        : {
            ...task,
            state: "pending",
            reason: "resumed",
            started_at: null,
            ended_at: null,
            duration_ms: null,
          },
    );
  state.phase = "starting";
  state.error = null;
  state.processes = [];
  state.resumes = [
    ...state.resumes,
    { at: new Date().toISOString(), from_checkpoint: previous.checkpoint.seq, pid },
  ].slice(-16);
  return state;
}

/** Journals are kept this long after their session's last write: a week to come back and resume. */
export const JOURNAL_KEEP_MS = 7 * 24 * 3_600_000;

/** Removes journals not written for JOURNAL_KEEP_MS (their sessions are not resumed any more). */
export async function sweepJournals(stateDir: string, now = Date.now()): Promise<void> {
  const dir = path.dirname(journalFile(stateDir, "x"));
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const file = path.join(dir, name);
    const stat = await fs.lstat(file).catch(() => null);
    if (stat?.isFile() && now - stat.mtimeMs > JOURNAL_KEEP_MS) await fs.rm(file, { force: true });
  }
}
