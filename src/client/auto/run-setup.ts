// The opening phases of an AUTO run, each a small step over the run's record: which executors may work and
// which plans, the knowledge router, the session record, and the engine context every later phase uses.
// Each step that holds something open registers its undo in `run.cleanups`; the supervisor runs them.
import { promises as fs } from "node:fs";
import path from "node:path";
import { IvoaiError } from "../../shared/errors.js";
import { oneLine } from "../../shared/terminal-text.js";
import { withTimeout } from "../../shared/timeout.js";
import { selectCompression } from "../components/selection.js";
import type { ConnectionRegistry } from "../connections/registry.js";
import { enabledUserServers } from "../connections/user-servers.js";
import { endOrphanedServers, opencodeHome } from "../frontend/server-marks.js";
import { type RunningRouter, startRouter } from "../router/router.js";
import { selectSources } from "../router/selection.js";
import { type AutoState, initialAutoState } from "../session/auto-state.js";
import {
  openSessionStore,
  processStartTicks,
  type SessionRecord,
  type SessionStore,
} from "../session/store.js";
import { type ArtifactStore, openArtifactStore } from "./artifacts.js";
import { createRecorder, type Recorder } from "./checkpoint.js";
import { sweepThreadTotals } from "./codex-thread-usage.js";
import { EXECUTORS, type Executor, type ExecutorName, otherExecutor } from "./contracts.js";
import { type Coordination, startCoordination } from "./coordination.js";
import { delegationHandlers } from "./delegation.js";
import { createSlots, type EngineContext } from "./engine-context.js";
import { type EventStream, eventsFile, lastEventSeq, openEventStream } from "./event-stream.js";
import type { AutoEvent } from "./events.js";
import { createExecutor } from "./executors/index.js";
import { describeSelection, type SourceSelection, unavailableSelection } from "./knowledge.js";
import { startControlServer } from "./orchestrator/control.js";
import { orchestratorMcpServer } from "./orchestrator/mcp.js";
import { createQuotaManager } from "./quota/admission.js";
import { recoverStaleSessions } from "./recovery.js";
import { type ExecutorRegistry, loadExecutorRegistry } from "./registry.js";
import { pinBase, type RepoRecord, snapshotRepo } from "./repo-snapshot.js";
import {
  createJournalWriter,
  type JournalWriter,
  journalFile,
  notResumable,
  type ResumeJournal,
  resumedState,
  sweepJournals,
} from "./resume.js";
import type { AutoSettings } from "./settings.js";
import {
  addWorktree,
  commitWorktree,
  ensureSessionCwd,
  reviewLines,
  sessionCwd,
  worktreeBase,
} from "./worktree.js";

/** What the caller of `runAuto` asks for. */
export interface AutoOptions {
  task: string;
  /** Overrides `[auto] planner`. */
  planner?: ExecutorName;
  /** Overrides `[auto] workers` (clamped to the hard cap). */
  workers?: number;
  knowledgeSources: readonly string[];
  registry: ConnectionRegistry;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** node + this script: how the primary starts the ivoai-orchestrator MCP. */
  selfCommand: string[];
  notice(message: string): void;
  killAfterMs?: number;
  /** Stops the session from outside (tests, the OpenCode bridge); signals do the same for the CLI. */
  signal?: AbortSignal;
  onEvent?: EngineContext["onEvent"];
  /** Every event of the session's event stream (progress lines, --json JSON Lines, the frontend's status). */
  onProgress?: (event: AutoEvent) => void;
  /** A follow-up turn: continue these official CLI conversations (from the frontend's session mapping). */
  conversation?: { threads: { codex: string | null; claude: string | null }; primary: ExecutorName };
  /** An explicit model entry: fail-closed, never another model or vendor (the scheduler keeps workers). */
  explicit?: { executor: ExecutorName; model: string; effort: string };
  /** Streams the text of the turns that answer the user (the RAG answer, the consolidation). */
  onAnswerText?: (text: string) => void;
  /** Continue this interrupted session from its last checkpoint (`ivoai session resume`). */
  resume?: { sessionId: string; journal: ResumeJournal };
  /** Run the session in a new git worktree on branch `ivoai/<session>`; its changes are committed there. */
  worktree?: boolean;
}

/** One AUTO run between its phases: what the caller asked, how it stops, and what to undo at the end. */
export interface AutoRun {
  readonly options: AutoOptions;
  readonly settings: AutoSettings;
  /** Worker slots, clamped to the hard cap (1..3). */
  readonly workers: number;
  /** Aborted by SIGINT/SIGTERM/SIGHUP or the caller's signal; its reason names the signal. */
  readonly stop: AbortController;
  /** Aborted once the session's own work is over: delegated tasks never outlive it. */
  readonly finished: AbortController;
  /** Undone in reverse order when the run ends, whatever happened. */
  readonly cleanups: (() => Promise<unknown>)[];
  /** The run can be resumed (it did not finish): its workers' evidence stays until it expires. */
  keepEvidence: boolean;
  /** The knowledge servers chosen when the router opened, and why the others were left out. */
  sources?: SourceSelection;
}

/** The executors this run may use and the one that plans (and is primary). */
export interface ExecutorChoice {
  registry: ExecutorRegistry;
  executors: Partial<Record<ExecutorName, Executor>>;
  planner: ExecutorName;
}

/** The session record the run writes to, and where it keeps its private runtime files. */
export interface OpenedSession {
  store: SessionStore;
  id: string;
  project: string;
  initial: AutoState;
  runtimeDir: string;
  router: RunningRouter | null;
  /** The last event seq already written for this session (0 for a new one). */
  lastEventSeq: number;
  /** The checkpoint a resumed session continues from; null for a new session. */
  resumedFrom: number | null;
  /** The words a later resume needs (task, brief, plan, worker results), kept privately while the run lasts. */
  journal: JournalWriter;
}

/** AUTO never compresses: it asks for direct through the launchers' one decision, so the record says why. */
async function autoCompression(
  planner: ExecutorName,
  knowledgeActive: boolean,
  bin: string,
): Promise<SessionRecord["compression"]> {
  const plan = await selectCompression({
    agent: planner,
    knowledgeActive,
    requested: "direct",
    managedBin: bin,
  });
  return {
    requested: plan.requested,
    effective: plan.implementation,
    reason: `AUTO keeps knowledge exact; ${plan.why}`,
  };
}

function managedBin(run: AutoRun): string {
  return path.join(run.options.registry.paths.dataDir, "bin");
}

/** Executors present on this machine and logged in; the registry says which models each may run. */
export async function chooseExecutors(run: AutoRun): Promise<ExecutorChoice> {
  const { options } = run;
  const registry = await loadExecutorRegistry({
    stateDir: options.registry.paths.stateDir,
    env: options.env,
    managedBin: managedBin(run),
  });
  const executors: Partial<Record<ExecutorName, Executor>> = {};
  for (const entry of registry.executors) {
    if (entry.path && entry.login !== "logged_out")
      executors[entry.name] = createExecutor(entry.name, entry.path);
  }
  const wanted =
    options.explicit?.executor ?? options.conversation?.primary ?? options.planner ?? run.settings.planner;
  return { registry, executors, planner: availablePlanner(options, registry, executors, wanted) };
}

/** The wanted planner, or the other vendor when it is missing (never for an explicit model). */
function availablePlanner(
  options: AutoOptions,
  registry: ExecutorRegistry,
  executors: Partial<Record<ExecutorName, Executor>>,
  planner: ExecutorName,
): ExecutorName {
  if (executors[planner]) return planner;
  if (options.explicit) {
    throw new IvoaiError(
      "NOT_FOUND",
      `${options.explicit.executor} · ${options.explicit.model} was chosen explicitly but ${planner} is ${describe(registry, planner)}; an explicit model never falls back (choose "ivoai auto" to let ivoai pick)`,
    );
  }
  const other = otherExecutor(planner);
  if (!executors[other]) {
    throw new IvoaiError(
      "NOT_FOUND",
      `AUTO needs codex or claude installed and logged in (${EXECUTORS.map((name) => `${name}: ${describe(registry, name)}`).join("; ")})`,
    );
  }
  options.notice(`ivoai auto: ${planner} is ${describe(registry, planner)}; ${other} plans instead`);
  return other;
}

function describe(registry: ExecutorRegistry, name: ExecutorName): string {
  const entry = registry.executors.find((item) => item.name === name);
  if (!entry?.path) return "not installed";
  return entry.login === "logged_out" ? "not logged in" : "available";
}

/**
 * Knowledge: the same selection rules as the launchers, kept for the whole session (failover included).
 * Sources named explicitly must work; the default selection may fail and the run goes on without it.
 */
export async function openKnowledge(run: AutoRun, project: string): Promise<RunningRouter | null> {
  const { options } = run;
  const explicit = options.knowledgeSources.length > 0;
  const profiles = await options.registry
    .read()
    .then((snapshot) => snapshot.profiles)
    .catch(() => []);
  try {
    const selected = await selectSources(options.registry, options.knowledgeSources, {
      checkReady: explicit,
      env: options.env,
    });
    run.sources = describeSelection(profiles, selected, options.knowledgeSources);
    if (selected.length === 0) return null;
    const userServers = await enabledUserServers(options.registry);
    const router = await withTimeout(
      startRouter({ sources: selected, userServers, project }),
      5_000,
      "the knowledge router did not start",
    );
    run.cleanups.push(() => withTimeout(router.close(), 2_000).catch(() => undefined));
    return router;
  } catch (error) {
    if (explicit) throw error;
    options.notice(`ivoai auto: continuing without ivoai knowledge: ${(error as Error).message}`);
    run.sources = unavailableSelection(profiles, (error as Error).message);
    return null;
  }
}

/**
 * Recovers stale sessions and ends orphaned OpenCode servers, then creates this run's session record as
 * running, or, for a resume, takes the interrupted record over from its last checkpoint.
 */
export async function openSession(
  run: AutoRun,
  planner: ExecutorName,
  project: string,
  router: RunningRouter | null,
): Promise<OpenedSession> {
  const { options } = run;
  const stateDir = options.registry.paths.stateDir;
  const store = openSessionStore(stateDir);
  // A resumed session's own executors, if any outlived the ivoai that ran them, end here first.
  await recoverStaleSessions(store, options.notice);
  // A killed TUI session's OpenCode server outlives it in its own process group: headless runs end it too.
  await endOrphanedServers(opencodeHome(stateDir));
  await sweepJournals(stateDir).catch(() => undefined);
  await sweepThreadTotals(stateDir).catch(() => undefined);
  const identity = {
    status: "running" as const,
    pid: process.pid,
    pid_start_ticks: processStartTicks(process.pid),
    knowledge_sources: router ? router.sources.map((source) => source.alias) : [],
    mcp_servers: router ? router.userEndpoints.map((server) => server.name) : [],
  };
  if (options.resume) return takeOver(run, store, options.resume, identity, router, project);
  const initial = initialAutoState(planner, run.workers);
  if (options.conversation) initial.threads = { ...options.conversation.threads };
  initial.repo = await recordRepo(options);
  const session = await store.create({
    ...identity,
    agent: planner,
    mode: "orchestrated",
    project,
    compression: await autoCompression(planner, router !== null, managedBin(run)),
    auto: initial,
  });
  const journal = createJournalWriter(journalFile(stateDir, session.id), {
    v: 1,
    session_id: session.id,
    task: options.task,
    cwd: options.cwd,
    knowledge_sources: [...options.knowledgeSources],
    workers: run.workers,
    explicit: options.explicit ?? null,
    brief: null,
    plan: null,
    results: [],
  });
  const runtimeDir = path.join(stateDir, "run", session.id);
  const opened = {
    store,
    id: session.id,
    project,
    initial,
    runtimeDir,
    router,
    lastEventSeq: 0,
    resumedFrom: null,
    journal,
  };
  if (initial.repo) await keepRepoRecord(run, opened, initial.repo);
  return opened;
}

/** A resume: the interrupted record becomes this process's, from its last checkpoint (see resumedState). */
async function takeOver(
  run: AutoRun,
  store: SessionStore,
  resume: NonNullable<AutoOptions["resume"]>,
  identity: Pick<SessionRecord, "status" | "pid" | "pid_start_ticks" | "knowledge_sources" | "mcp_servers">,
  router: RunningRouter | null,
  project: string,
): Promise<OpenedSession> {
  const stateDir = run.options.registry.paths.stateDir;
  const previous = await store.get(resume.sessionId);
  const refusal = notResumable(previous);
  if (refusal || !previous.auto) throw new IvoaiError("CONFLICT", refusal ?? "not an AUTO session");
  const results = new Set(resume.journal.results.map((result) => result.task_id));
  const initial = resumedState(previous.auto, results, process.pid);
  // Checked again under the store's lock: of two resumes started together, only one takes the session over.
  await store.update(
    previous.id,
    { ...identity, ended_at: null, exit_code: null, exit_signal: null, error: null, auto: initial },
    (current) => {
      const again = notResumable(current);
      if (again !== null || current.auto?.checkpoint.seq !== previous.auto?.checkpoint.seq)
        throw new IvoaiError("CONFLICT", again ?? `${previous.id} was resumed by another ivoai meanwhile`);
    },
  );
  // A --worktree session commits its work on its branch at the end of the resumed run too.
  const repo = initial.repo;
  if (repo?.worktree) run.cleanups.push(() => finishWorktree(run.options, previous.id, repo));
  return {
    store,
    id: previous.id,
    project,
    initial,
    runtimeDir: path.join(stateDir, "run", previous.id),
    router,
    lastEventSeq: await lastEventSeq(eventsFile(stateDir, previous.id)),
    resumedFrom: previous.auto.checkpoint.seq,
    journal: createJournalWriter(journalFile(stateDir, previous.id), resume.journal),
  };
}

/**
 * The repository at the start: with --worktree its base commit (refused outside a repository or without a
 * commit); otherwise the working tree as it is, or null (outside a repository, or when git cannot tell).
 */
async function recordRepo(options: AutoOptions): Promise<RepoRecord | null> {
  if (options.worktree) {
    const base = await worktreeBase(options.cwd, options.env);
    if (base.dirty)
      options.notice(
        `ivoai auto: ${base.root} has uncommitted changes; the worktree starts from ${base.base_commit?.slice(0, 12)} without them`,
      );
    return base;
  }
  try {
    return await snapshotRepo(options.cwd, options.env);
  } catch (error) {
    options.notice(`ivoai auto: the repository's state is not recorded: ${(error as Error).message}`);
    return null;
  }
}

/**
 * Pins the base tree under the session's ref and, with --worktree, creates the worktree (recorded at once) and
 * commits what the session changed there when the run ends.
 */
async function keepRepoRecord(run: AutoRun, session: OpenedSession, repo: RepoRecord): Promise<void> {
  const { options } = run;
  try {
    await pinBase(repo, session.id, options.env);
  } catch (error) {
    options.notice(
      `ivoai auto: the base tree is not pinned (git gc may prune it): ${(error as Error).message}`,
    );
  }
  if (!options.worktree) return;
  try {
    repo.worktree = await addWorktree(repo, session.id, options.registry.paths.stateDir, options.env);
    await ensureSessionCwd(sessionCwd(options.cwd, repo));
    await session.store.update(session.id, { auto: session.initial });
  } catch (error) {
    await recordSetupFailure(session, error);
    throw error;
  }
  run.cleanups.push(() => finishWorktree(options, session.id, repo));
}

/** Commits the session's work on its branch and tells the user how to review and merge it. */
async function finishWorktree(options: AutoOptions, sessionId: string, repo: RepoRecord): Promise<void> {
  if (!repo.worktree) return;
  try {
    const commit = await commitWorktree(sessionId, options.task, repo.worktree, options.env);
    for (const line of reviewLines(sessionId, repo, commit)) options.notice(`ivoai auto: ${line}`);
  } catch (error) {
    options.notice(
      `ivoai auto: could not commit the session's work in ${repo.worktree.path}: ${(error as Error).message}`,
    );
  }
}

/**
 * Everything the engine needs before its first turn; if any of it fails, the session is recorded as failed
 * (the caller's error is thrown on unchanged).
 */
export async function prepareEngine(
  run: AutoRun,
  session: OpenedSession,
  choice: ExecutorChoice,
): Promise<EngineContext> {
  try {
    await fs.mkdir(session.runtimeDir, { recursive: true, mode: 0o700 });
    run.cleanups.push(() => fs.rm(session.runtimeDir, { recursive: true, force: true }));
    // Admission by the optional coordinator comes before any official client starts.
    const coordination = await openCoordination(run, session);
    const events = openSessionEvents(run, session);
    const recorder = mirroredRecorder(session, coordination, events);
    const artifacts = await openArtifacts(run, session);
    const ctx = engineContext(run, session, choice, recorder, artifacts, events);
    await attachOrchestrator(run, ctx);
    return ctx;
  } catch (error) {
    await recordSetupFailure(session, error);
    throw error;
  }
}

async function openCoordination(run: AutoRun, session: OpenedSession): Promise<Coordination> {
  const coordination = await startCoordination(
    run.settings.coordinator,
    {
      sessionId: session.id,
      runtimeDir: session.runtimeDir,
      managedBin: managedBin(run),
      env: run.options.env,
    },
    run.options.notice,
  );
  run.cleanups.push(() => withTimeout(coordination.close(), 5_000).catch(() => undefined));
  return coordination;
}

/**
 * The session's events: to the caller and to the file `session watch` follows. The start is announced now;
 * the heartbeat keeps a quiet session visibly alive; the stream closes with the run.
 */
function openSessionEvents(run: AutoRun, session: OpenedSession): EventStream {
  const events = openEventStream({
    file: eventsFile(run.options.registry.paths.stateDir, session.id),
    sessionId: session.id,
    initial: session.initial,
    lastSeq: session.lastEventSeq,
    startedAt: performance.now(),
    ...(run.options.onProgress ? { listener: run.options.onProgress } : {}),
  });
  run.cleanups.push(async () => events.close());
  const state = session.initial;
  events.emit({
    type: "session.started",
    planner: state.planner,
    primary: state.primary,
    workers: state.workers,
    resumed_from: session.resumedFrom,
  });
  return events;
}

/**
 * The session's checkpoint recorder; every change feeds the event stream, and every task state change is
 * mirrored to the coordinator once.
 */
function mirroredRecorder(session: OpenedSession, coordination: Coordination, events: EventStream): Recorder {
  const mirrored = new Map<string, string>();
  return createRecorder(session.store, session.id, session.initial, (state) => {
    events.observe(state);
    for (const task of state.tasks) {
      if (mirrored.get(task.id) === task.state) continue;
      mirrored.set(task.id, task.state);
      coordination.task(task.id, task.state);
    }
  });
}

/**
 * One private store for every session (each artifact names its owner); what expired goes now, and this
 * session's evidence goes with the session.
 */
async function openArtifacts(run: AutoRun, session: OpenedSession): Promise<ArtifactStore> {
  const artifacts = await openArtifactStore({
    dir: path.join(run.options.registry.paths.stateDir, "auto", "artifacts"),
    sessionId: session.id,
  });
  // A run that can be resumed keeps its workers' evidence for the resume; the TTL sweep removes it later.
  run.cleanups.push(() => (run.keepEvidence ? Promise.resolve() : artifacts.destroy()));
  await artifacts.sweep().catch(() => undefined);
  return artifacts;
}

function engineContext(
  run: AutoRun,
  session: OpenedSession,
  choice: ExecutorChoice,
  recorder: Recorder,
  artifacts: ArtifactStore,
  events: EventStream,
): EngineContext {
  const { options, settings } = run;
  const { planner } = choice;
  return {
    sessionId: session.id,
    stateDir: options.registry.paths.stateDir,
    task: options.task,
    cwd: sessionCwd(options.cwd, session.initial.repo),
    runtimeDir: session.runtimeDir,
    env: { ...options.env, IVOAI_PROJECT: session.project },
    // An explicit model keeps the whole session on its vendor.
    executors: options.explicit ? { [planner]: choice.executors[planner] } : choice.executors,
    profiles: choice.registry.executors
      .flatMap((entry) => entry.profiles)
      .filter((profile) => !options.explicit || profile.executor === planner),
    explicit: options.explicit ?? null,
    followUp: options.conversation !== undefined,
    ...(options.onAnswerText ? { onAnswerText: options.onAnswerText } : {}),
    quota: createQuotaManager({
      stateDir: options.registry.paths.stateDir,
      headroomPercent: settings.quota_headroom_percent,
    }),
    artifacts,
    recorder,
    events,
    journal: session.journal,
    resumed: run.options.resume !== undefined,
    router: session.router,
    orchestrator: null,
    brief: { text: "", memory: "skipped", context: "skipped", bytes: 0, failed: [] },
    ...(run.sources ? { sources: run.sources } : {}),
    results: new Map(),
    settings,
    slots: createSlots(run.workers),
    background: new Set(),
    finished: run.finished.signal,
    killAfterMs: options.killAfterMs ?? 5_000,
    signal: run.stop.signal,
    notice: options.notice,
    ...(options.onEvent ? { onEvent: options.onEvent } : {}),
  };
}

/** The ivoai-orchestrator MCP reaches this process over a private socket, for the primary's lifetime only. */
async function attachOrchestrator(run: AutoRun, ctx: EngineContext): Promise<void> {
  const socketPath = path.join(ctx.runtimeDir, "orchestrator.sock");
  const control = await startControlServer({ socketPath, handlers: delegationHandlers(ctx) });
  run.cleanups.push(() => control.close());
  ctx.orchestrator = {
    server: orchestratorMcpServer(run.options.selfCommand),
    env: { IVOAI_ORCHESTRATOR_SOCKET: socketPath, IVOAI_ORCHESTRATOR_TOKEN: control.token },
  };
}

async function recordSetupFailure(session: OpenedSession, error: unknown): Promise<void> {
  const message = oneLine((error as Error).message).slice(0, 300);
  await session.store
    .update(session.id, {
      status: "failed",
      error: message,
      ended_at: new Date().toISOString(),
      auto: { ...session.initial, phase: "failed", error: message },
    })
    .catch(() => undefined);
}
