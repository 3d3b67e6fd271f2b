// `ivoai auto`: the quota-aware supervisor over the official Codex and Claude Code CLIs, headless.
import path from "node:path";
import { createInterface } from "node:readline/promises";
import type { ExecutorName } from "../../client/auto/contracts.js";
import { AUTO_EVENT_VERSION } from "../../client/auto/events.js";
import type { AutoOptions as RunAutoOptions } from "../../client/auto/run-setup.js";
import { type AutoResult, runAuto } from "../../client/auto/supervisor.js";
import { openRegistry } from "../../client/connections/registry.js";
import { runOpencodeFrontend } from "../../client/frontend/opencode.js";
import { parseSourceFlags } from "../../client/router/selection.js";
import { IvoaiError } from "../../shared/errors.js";
import {
  type CommandContext,
  defineCommand,
  defineOptions,
  type OptionsOf,
  type StringOptionSpec,
} from "../command.js";
import { readStdin } from "../secret-input.js";
import { describeAutoEvent } from "./auto-events.js";

const MAX_TASK_BYTES = 256 * 1024;

/** The knowledge selection flag, the same for the launchers and AUTO. */
export const KNOWLEDGE_SOURCE_OPTION = {
  type: "string",
  multiple: true,
  value: "NAME",
  description:
    "only these servers, by alias, id, purpose or redundancy group (repeat or comma-separate); default: every enabled server",
  complete: "knowledge-source",
} as const satisfies StringOptionSpec;

export const AUTO_OPTIONS = defineOptions({
  "knowledge-source": KNOWLEDGE_SOURCE_OPTION,
  workers: {
    type: "integer",
    value: "N",
    min: 1,
    max: 3,
    description: "read-only workers at once (default [auto] workers, 2)",
  },
  print: {
    type: "string",
    value: "TASK",
    description: "run TASK headless and print the answer (otherwise give the task after -- or on stdin)",
  },
  worktree: {
    type: "boolean",
    description:
      "run in a new git worktree on branch ivoai/<session> (changes committed there); your checkout stays untouched",
  },
});

/** What an AUTO session reads of the command line (`ivoai auto` and `ivoai session start --mode orchestrated`). */
type AutoOptions = Pick<
  OptionsOf<typeof AUTO_OPTIONS>,
  "knowledge-source" | "workers" | "print" | "worktree"
>;

/** node + this script, so the primary can start `ivoai orchestrator-mcp`. */
function selfCommand(): string[] {
  return [process.execPath, path.resolve(process.argv[1] ?? "ivoai")];
}

/** No task given, and both ends are a terminal: the managed OpenCode frontend. */
function interactive(ctx: CommandContext<AutoOptions>): boolean {
  return (
    ctx.options.print === undefined &&
    ctx.positionals.length === 0 &&
    process.stdin.isTTY === true &&
    process.stdout.isTTY === true
  );
}

async function taskOf(ctx: CommandContext<AutoOptions>): Promise<string> {
  const printed = ctx.options.print;
  if (printed !== undefined && ctx.positionals.length > 0) {
    throw new IvoaiError("USAGE", "give the task once: --print TASK or -- TASK, not both");
  }
  let task = printed ?? ctx.positionals.join(" ");
  if (!task.trim() && !process.stdin.isTTY) task = await readStdin(MAX_TASK_BYTES, "a task");
  else if (!task.trim()) {
    const prompt = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
    try {
      task = await prompt.question("ivoai auto — task: ");
    } finally {
      prompt.close();
    }
  }
  if (!task.trim()) throw new IvoaiError("USAGE", "no task: use --print TASK, -- TASK, or give it on stdin");
  if (Buffer.byteLength(task) > MAX_TASK_BYTES) {
    throw new IvoaiError("USAGE", `the task is larger than ${MAX_TASK_BYTES / 1024} KiB`);
  }
  return task.trim();
}

/** Runs one AUTO session from a command line and prints its answer; the exit status is the session's. */
export async function runAutoCommand(
  ctx: CommandContext<AutoOptions>,
  planner: ExecutorName | undefined,
): Promise<number> {
  if (interactive(ctx)) {
    if (ctx.options.worktree)
      throw new IvoaiError(
        "USAGE",
        "--worktree applies to headless runs: give the task with --print or after --",
      );
    // On a terminal with no task: OpenCode's TUI, every turn planned and run by ivoai.
    if (planner || ctx.options.workers !== undefined)
      ctx.out.note("ivoai: --planner and --workers apply to headless runs; the TUI uses the [auto] defaults");
    return runOpencodeFrontend({
      knowledgeSources: parseSourceFlags(ctx.options["knowledge-source"]),
      registry: openRegistry(ctx.env),
      env: ctx.env,
      cwd: process.cwd(),
      selfCommand: selfCommand(),
      notice: (message) => ctx.out.note(message),
      killAfterMs: Number(ctx.env.IVOAI_KILL_AFTER_MS) || 5_000,
    });
  }
  const task = await taskOf(ctx);
  const { workers } = ctx.options;
  return runHeadless(ctx, {
    task,
    ...(planner ? { planner } : {}),
    ...(workers !== undefined ? { workers } : {}),
    ...(ctx.options.worktree ? { worktree: true } : {}),
    knowledgeSources: parseSourceFlags(ctx.options["knowledge-source"]),
    cwd: process.cwd(),
  });
}

/** What a headless run takes from its command beyond the command's context. */
type HeadlessRun = Pick<
  RunAutoOptions,
  "task" | "planner" | "workers" | "knowledgeSources" | "cwd" | "resume" | "explicit"
>;

/**
 * Runs AUTO headless with the command's output: progress lines on stderr, or with --json every event as a JSON
 * Lines record on stdout and the result record last; without --json stdout is the answer alone (scripts read
 * it), and a failed run leaves it empty, its reason already said on stderr.
 */
export async function runHeadless(ctx: CommandContext<object>, run: HeadlessRun): Promise<number> {
  const result = await runAuto({
    ...run,
    registry: openRegistry(ctx.env),
    env: ctx.env,
    selfCommand: selfCommand(),
    notice: (message) => ctx.out.note(message),
    onProgress: (event) => {
      if (ctx.json) return ctx.out.record(event);
      const line = describeAutoEvent(event);
      if (line !== null) ctx.out.note(`ivoai auto: ${line}`);
    },
    // TERM to KILL for executor process groups, as for the launchers.
    killAfterMs: Number(ctx.env.IVOAI_KILL_AFTER_MS) || 5_000,
  });
  if (ctx.json) ctx.out.record(summary(result));
  else if (result.exitCode === 0) ctx.out.line(result.answer || "(no answer)");
  return result.exitCode;
}

/** The last record of `auto --json`: the session's outcome (schema version AUTO_EVENT_VERSION). */
function summary(result: AutoResult) {
  const state = result.state;
  return {
    v: AUTO_EVENT_VERSION,
    type: "result",
    session_id: result.sessionId,
    exit_code: result.exitCode,
    route: state?.route ?? null,
    primary: state?.primary ?? null,
    tasks: (state?.tasks ?? []).map((task) => ({
      id: task.id,
      state: task.state,
      executor: task.profile?.executor ?? null,
      model: task.profile?.model ?? null,
      duration_ms: task.duration_ms,
      usage: task.usage,
      // The evidence itself goes with the session (its refs would point at nothing): only its size is told.
      evidence_bytes: task.refs.reduce((sum, ref) => sum + ref.bytes, 0),
    })),
    usage: state?.usage ?? null,
    sources: state?.sources ?? null,
    repo: state?.repo ?? null,
    failovers: state?.failovers ?? [],
    error: state?.error ?? null,
    quota_resets: result.quotaResets,
    answer: result.answer,
  };
}

export const autoCommand = defineCommand({
  name: "auto",
  summary: "Plan and run a task with Codex and Claude Code: read-only workers, quota-aware failover",
  description:
    "ivoai routes the task: a simple knowledge question is answered from Memory and Context in one turn;\n" +
    "anything else is planned by the primary (a DAG of at most 12 tasks), advisory read-only workers run the\n" +
    "independent parts (2 at once by default, at most 3), and the primary consolidates and applies changes.\n" +
    "On a confirmed quota limit the session moves to the other vendor (at most twice) with a bounded handoff.\n" +
    "On a terminal with no task, 'ivoai auto' opens the managed OpenCode TUI (pinned version, isolated config),\n" +
    "every turn of which is run by ivoai the same way. Otherwise the answer goes to stdout, progress to stderr; 'ivoai session show ID' shows the plan afterwards.\n" +
    "In a git repository the session records its base commit and working tree; 'ivoai session diff ID' shows what\n" +
    "it changed. --worktree runs it in a new worktree on branch ivoai/<session> (commits only: uncommitted changes\n" +
    "of your checkout are not carried) and commits its changes there; merge with 'git merge ivoai/<session>'.\n" +
    "Exit status: 0 done, 1 failed, 75 stopped by quota on every vendor, 128+N stopped by signal N.",
  positionals: [
    {
      name: "TASK",
      description: "the task (after --), if not given with --print or on stdin",
      variadic: true,
    },
  ],
  json: true,
  options: {
    planner: {
      type: "enum",
      value: "EXECUTOR",
      choices: ["codex", "claude"] satisfies readonly ExecutorName[],
      description: "the executor that plans and owns the session first (default [auto] planner, codex)",
    },
    ...AUTO_OPTIONS,
  },
  run: (ctx) => runAutoCommand(ctx, ctx.options.planner),
});
