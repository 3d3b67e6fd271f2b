// `ivoai session watch ID` follows an AUTO session's event stream from another terminal; `ivoai session resume
// ID` continues an interrupted one from its last checkpoint.
import { open, stat } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { eventsFile } from "../../client/auto/event-stream.js";
import type { AutoEvent } from "../../client/auto/events.js";
import { notResumable, readJournal } from "../../client/auto/resume.js";
import { openRegistry } from "../../client/connections/registry.js";
import { openSessionStore, type SessionStore } from "../../client/session/store.js";
import { errnoCode, IvoaiError } from "../../shared/errors.js";
import { type CommandContext, defineCommand } from "../command.js";
import { runHeadless } from "./auto.js";
import { describeAutoEvent } from "./auto-events.js";

/** How often a watcher looks for new events (reads are from where it left off: cheap). */
const POLL_MS = 100;
/** How often it asks whether the session's process still lives. */
const LIVENESS_MS = 1_000;

export const sessionWatchCommand = defineCommand({
  name: "watch",
  summary: "Follow an AUTO session's progress from another terminal until it ends",
  description:
    "Prints the session's events so far, then each new one as it happens: tasks started, done, failed,\n" +
    "escalated or failed over, with executor, model, duration, tokens and cost. --json prints the events as\n" +
    "JSON Lines (schema v1, see docs/auto-events.md). Exit status: the session's own (0 done, 1 failed, 75 quota,\n" +
    "128+N signal); 1 when the session was interrupted (its process is gone): 'ivoai session resume ID' continues it.",
  positionals: [{ name: "ID", description: "session id (see 'ivoai session list')", required: true }],
  json: true,
  run: (ctx) => watch(ctx, ctx.positionals[0] ?? ""),
});

async function watch(ctx: CommandContext<object>, id: string): Promise<number> {
  const stateDir = openRegistry(ctx.env).paths.stateDir;
  const store = openSessionStore(stateDir);
  const session = await store.get(id);
  if (session.mode !== "orchestrated") throw new IvoaiError("USAGE", `${id} is not an AUTO session`);
  const reader = createLineReader(eventsFile(stateDir, id));
  let lastCheck = 0;
  for (;;) {
    const events = await reader.next();
    for (const [index, event] of events.entries()) {
      print(ctx, event);
      // A resumed session appends to the same stream: an end followed by more events, or by a record that
      // runs again, was an earlier run's.
      if (event.type === "session.ended" && index === events.length - 1) {
        if ((await endedWithoutEvent(store, id)) !== null) return event.exit_code;
      }
    }
    if (performance.now() - lastCheck >= LIVENESS_MS) {
      lastCheck = performance.now();
      const ended = await endedWithoutEvent(store, id);
      // One more read: the end may have been written between the last read and the look at the record.
      if (ended !== null) return finishWatch(ctx, id, ended, await reader.next());
    }
    await sleep(POLL_MS);
  }
}

function print(ctx: CommandContext<object>, event: AutoEvent): void {
  if (ctx.json) {
    ctx.out.record(event);
    return;
  }
  const line = describeAutoEvent(event, true);
  if (line !== null) ctx.out.line(`${event.at.slice(11, 19)} ${line}`);
}

/** The session is over (its record ended, or its process is gone): why and its exit code, or null while it runs. */
async function endedWithoutEvent(
  store: SessionStore,
  id: string,
): Promise<{ why: string; exitCode: number | null } | null> {
  const now = await store.get(id);
  if (now.state === "running" || now.state === "starting") return null;
  if (now.state === "interrupted") return { why: "interrupted", exitCode: null };
  return { why: `${now.state}${now.error ? `: ${now.error}` : ""}`, exitCode: now.exit_code };
}

function finishWatch(
  ctx: CommandContext<object>,
  id: string,
  ended: { why: string; exitCode: number | null },
  rest: AutoEvent[],
): number {
  for (const event of rest) print(ctx, event);
  const last = rest.at(-1);
  if (last?.type === "session.ended") return last.exit_code;
  // The stream has no end (it reached its size cap, or the session predates it): the record says how it ended.
  if (ended.exitCode !== null) return ended.exitCode;
  ctx.out.note(
    ended.why === "interrupted"
      ? `ivoai: ${id} was interrupted (its process is gone); 'ivoai session resume ${id}' continues it`
      : `ivoai: ${id} ended without a final event (${ended.why})`,
  );
  return 1;
}

/** Reads whole new lines of a growing JSON Lines file; a missing file is an empty one (not written yet). */
function createLineReader(file: string): { next(): Promise<AutoEvent[]> } {
  let offset = 0;
  let partial = Buffer.alloc(0);
  return {
    async next() {
      const size = await stat(file).then(
        (info) => info.size,
        (error: unknown) => {
          if (errnoCode(error) === "ENOENT") return 0;
          throw error;
        },
      );
      if (size <= offset) return [];
      const handle = await open(file, "r");
      try {
        const buffer = Buffer.alloc(size - offset);
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, offset);
        offset += bytesRead;
        // Whole lines only, split on bytes: a character cut between two reads is decoded once it is whole.
        const bytes = Buffer.concat([partial, buffer.subarray(0, bytesRead)]);
        const end = bytes.lastIndexOf(0x0a);
        partial = Buffer.from(bytes.subarray(end + 1));
        if (end < 0) return [];
        return bytes
          .subarray(0, end)
          .toString("utf8")
          .split("\n")
          .flatMap((line) => parseEvent(line));
      } finally {
        await handle.close();
      }
    },
  };
}

function parseEvent(line: string): AutoEvent[] {
  if (!line.trim()) return [];
  try {
    const event = JSON.parse(line) as AutoEvent;
    return event && typeof event === "object" && event.v === 1 ? [event] : [];
  } catch {
    // A line a power loss cut short: skipped, the stream goes on.
    return [];
  }
}

export const sessionResumeCommand = defineCommand({
  name: "resume",
  summary: "Continue an interrupted AUTO session from its last checkpoint",
  description:
    "For a session whose ivoai was killed, crashed or stopped (by a signal or by quota): tasks already done stay\n" +
    "done (their results are kept), the rest are admitted again, and the executors' own conversations continue\n" +
    "by their recorded thread ids. Output as for 'ivoai auto' (the answer on stdout, progress on stderr; --json\n" +
    "JSON Lines). A session that finished, or still runs, is refused.",
  positionals: [{ name: "ID", description: "session id (see 'ivoai session list')", required: true }],
  json: true,
  async run(ctx) {
    const id = ctx.positionals[0] ?? "";
    const stateDir = openRegistry(ctx.env).paths.stateDir;
    const session = await openSessionStore(stateDir).get(id);
    const refusal = notResumable(session);
    if (refusal !== null || !session.auto)
      throw new IvoaiError("CONFLICT", refusal ?? `${id} cannot be resumed`);
    const journal = await readJournal(stateDir, id);
    const cwd = journal.cwd;
    if (
      !(await stat(cwd).then(
        (info) => info.isDirectory(),
        () => false,
      ))
    )
      throw new IvoaiError("NOT_FOUND", `${id} ran in ${cwd}, which is gone`);
    return runHeadless(ctx, {
      task: journal.task,
      planner: session.auto.primary,
      workers: journal.workers,
      knowledgeSources: journal.knowledge_sources,
      cwd,
      resume: { sessionId: id, journal },
      ...(journal.explicit ? { explicit: journal.explicit } : {}),
    });
  },
});
