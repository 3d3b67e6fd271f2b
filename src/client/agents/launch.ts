// `ivoai codex|claude|opencode`: a session router for the selected knowledge, then the official CLI with
// structured argv, the router injected per process, signals forwarded and the child's exit status returned.
import { spawn } from "node:child_process";
import { promises as fs } from "node:fs";
import { constants as osConstants } from "node:os";
import path from "node:path";
import { writeFileAtomic } from "../../shared/atomic-file.js";
import { IvoaiError } from "../../shared/errors.js";
import { withTimeout } from "../../shared/timeout.js";
import type { ConnectionRegistry } from "../connections/registry.js";
import { resolveIdentity } from "../project.js";
import { type RunningRouter, startRouter } from "../router/router.js";
import { selectSources } from "../router/selection.js";
import { openSessionStore, processStartTicks } from "../session/store.js";
import { type AgentName, locateAgent } from "./catalog.js";
import { type CompressionProvider, planLaunch } from "./compression.js";
import { buildInjection, TOKEN_ENV } from "./inject.js";

export interface LaunchOptions {
  agent: AgentName;
  args: readonly string[];
  /** Explicit selection; empty means every enabled profile. */
  knowledgeSources: readonly string[];
  compression: CompressionProvider;
  registry: ConnectionRegistry;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** How to run this ivoai (node + script), for the hooks the agent calls back. */
  selfCommand: string[];
  notice(message: string): void;
  /** Seconds between TERM and KILL when ivoai is asked to stop the agent. */
  killAfterMs?: number;
}

export interface LaunchResult {
  sessionId: string;
  exitCode: number;
}

/** Signals that, sent to ivoai alone, are passed on to the agent. */
const FORWARDED: NodeJS.Signals[] = [
  "SIGINT",
  "SIGTERM",
  "SIGHUP",
  "SIGQUIT",
  "SIGWINCH",
  "SIGCONT",
  "SIGUSR1",
  "SIGUSR2",
];

export async function launchAgent(options: LaunchOptions): Promise<LaunchResult> {
  const paths = options.registry.paths;
  const managedBin = path.join(paths.dataDir, "bin");
  const located = await locateAgent(options.agent, managedBin, options.env);
  if (!located) {
    throw new IvoaiError("NOT_FOUND", `${options.agent} is not installed (not on PATH nor in ${managedBin})`);
  }
  const identity = await resolveIdentity(options.cwd);
  const explicit = options.knowledgeSources.length > 0;

  // Knowledge: an explicit selection must be available; the automatic one only ever falls through.
  let router: RunningRouter | undefined;
  let sources: string[] = [];
  try {
    const selected = await selectSources(options.registry, options.knowledgeSources, {
      checkReady: explicit,
    });
    if (selected.length > 0) {
      router = await withTimeout(
        startRouter({ sources: selected, project: identity.id }),
        5_000,
        "the knowledge router did not start",
      );
      sources = selected.map((source) => source.profile.alias);
    }
  } catch (error) {
    if (explicit) throw error;
    options.notice(`ivoai: starting ${options.agent} without ivoai knowledge: ${(error as Error).message}`);
  }

  const store = openSessionStore(paths.stateDir);
  const plan = await planLaunch({
    agent: options.agent,
    agentPath: located.path,
    knowledgeActive: router !== undefined,
    requested: options.compression,
    managedBin,
  });
  const session = await store.create({
    agent: options.agent,
    mode: "direct",
    status: "starting",
    pid: null,
    pid_start_ticks: null,
    project: identity.id,
    knowledge_sources: sources,
    compression: { requested: plan.requested, effective: plan.effective, reason: plan.reason },
  });

  const runtimeDir = path.join(paths.stateDir, "run", session.id);
  const cleanup = async () => {
    await fs.rm(runtimeDir, { recursive: true, force: true });
    await router?.close();
  };
  try {
    await fs.mkdir(runtimeDir, { recursive: true, mode: 0o700 });
    const injection = buildInjection(options.agent, {
      router: router ? { endpoints: router.endpoints } : undefined,
      runtimeDir,
      hookCommand: options.selfCommand,
    });
    for (const file of injection.files)
      await writeFileAtomic(path.join(runtimeDir, file.name), file.content, { mode: 0o600 });
    const env: NodeJS.ProcessEnv = {
      ...options.env,
      ...injection.env,
      IVOAI_SESSION_ID: session.id,
      IVOAI_PROJECT: identity.id,
      ...(router ? { [TOKEN_ENV]: router.capability, IVOAI_ROUTER_HOOKS_URL: router.endpoints.hooks } : {}),
    };
    const [program, ...lead] = plan.command as [string, ...string[]];
    // Same process group as ivoai: the terminal's ^C, ^Z and resizes reach the whole interactive stack.
    const child = spawn(program, [...lead, ...injection.args, ...options.args], {
      stdio: "inherit",
      env,
      cwd: options.cwd,
    });
    const spawned = await new Promise<boolean>((resolve) => {
      child.once("spawn", () => resolve(true));
      child.once("error", () => resolve(false));
    });
    if (!spawned || child.pid === undefined) {
      await store.update(session.id, {
        status: "failed",
        error: `could not start ${program}`,
        ended_at: new Date().toISOString(),
      });
      throw new IvoaiError("NOT_FOUND", `could not start ${program}`);
    }
    await store.update(session.id, {
      status: "running",
      pid: child.pid,
      pid_start_ticks: processStartTicks(child.pid),
    });

    const exit = await supervise(
      child,
      options.killAfterMs ?? (Number(options.env.IVOAI_KILL_AFTER_MS) || 5_000),
    );
    await store.update(session.id, {
      status: "exited",
      ended_at: new Date().toISOString(),
      exit_code: exit.code,
      exit_signal: exit.signal,
    });
    // A session that started is never retried: its status is ivoai's.
    const signalNumber = exit.signal
      ? ((osConstants.signals as Record<string, number>)[exit.signal] ?? 1)
      : 0;
    return { sessionId: session.id, exitCode: exit.code ?? 128 + signalNumber };
  } finally {
    await cleanup();
  }
}

/** Waits for the child, passing on signals ivoai receives; TERM escalates to KILL after a bound. */
function supervise(
  child: import("node:child_process").ChildProcess,
  killAfterMs: number,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => {
    let escalation: NodeJS.Timeout | undefined;
    const handlers = new Map<NodeJS.Signals, () => void>();
    for (const signal of FORWARDED) {
      const handler = () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill(signal);
        if ((signal === "SIGTERM" || signal === "SIGHUP") && !escalation) {
          escalation = setTimeout(() => child.kill("SIGKILL"), killAfterMs);
        }
      };
      handlers.set(signal, handler);
      process.on(signal, handler);
    }
    // ^Z sent to ivoai alone: stop the agent, then ourselves; SIGCONT (forwarded above) resumes both.
    const onStop = () => {
      child.kill("SIGTSTP");
      process.kill(process.pid, "SIGSTOP");
    };
    process.on("SIGTSTP", onStop);
    child.once("exit", (code, signal) => {
      clearTimeout(escalation);
      for (const [signalName, handler] of handlers) process.off(signalName, handler);
      process.off("SIGTSTP", onStop);
      resolve({ code, signal });
    });
  });
}
