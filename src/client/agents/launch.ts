// `ivoai codex|claude|opencode`: a session router for the selected knowledge, then the official CLI with
// structured argv, the router injected per process, signals forwarded and the child's exit status returned.
import { spawn } from "node:child_process";
import { promises as fs } from "node:fs";
import path from "node:path";
import { writeFileAtomic } from "../../shared/atomic-file.js";
import { IvoaiError } from "../../shared/errors.js";
import { withTimeout } from "../../shared/timeout.js";
import { type CompressionProvider, compressionCommand, selectCompression } from "../components/selection.js";
import type { ConnectionRegistry } from "../connections/registry.js";
import { enabledUserServers } from "../connections/user-servers.js";
import { resolveIdentity } from "../project.js";
import { type RunningRouter, startRouter } from "../router/router.js";
import { selectSources } from "../router/selection.js";
import { openSessionStore, processStartTicks } from "../session/store.js";
import { type AgentName, locateAgent } from "./catalog.js";
import { buildInjection, TOKEN_ENV } from "./inject.js";
import { createSignalRelay, LaunchStopped, type SignalRelay, signalStatus } from "./signal-relay.js";

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
  /** Null when the launch was stopped before a session was recorded. */
  sessionId: string | null;
  exitCode: number;
}

export async function launchAgent(options: LaunchOptions): Promise<LaunchResult> {
  // From here on, signals either stop the launch or reach the agent: none is swallowed.
  const relay = createSignalRelay(options.killAfterMs ?? (Number(options.env.IVOAI_KILL_AFTER_MS) || 5_000));
  const started: { sessionId: string | null } = { sessionId: null };
  try {
    return await launch(options, relay, started);
  } catch (error) {
    if (!(error instanceof LaunchStopped)) throw error;
    return { sessionId: started.sessionId, exitCode: signalStatus(error.signal) };
  } finally {
    relay.dispose();
  }
}

async function launch(
  options: LaunchOptions,
  relay: SignalRelay,
  started: { sessionId: string | null },
): Promise<LaunchResult> {
  const paths = options.registry.paths;
  const managedBin = path.join(paths.dataDir, "bin");
  const located = await locateAgent(options.agent, managedBin, options.env);
  if (!located) {
    throw new IvoaiError("NOT_FOUND", `${options.agent} is not installed (not on PATH nor in ${managedBin})`);
  }
  const identity = await resolveIdentity(options.cwd, { env: options.env });
  const explicit = options.knowledgeSources.length > 0;

  // Knowledge: an explicit selection must be available; the automatic one only ever falls through.
  let router: RunningRouter | undefined;
  let sources: string[] = [];
  let knowledge = false;
  let starting: Promise<RunningRouter> | undefined;
  const cleanups: (() => Promise<unknown>)[] = [
    // A router still starting when a signal stopped the launch is closed once it is up.
    async () => void starting?.then((late) => late.close()).catch(() => undefined),
  ];
  const cleanup = async () => {
    for (const step of cleanups.reverse()) await step();
  };
  try {
    try {
      const selected = await relay.unlessStopped(
        selectSources(options.registry, options.knowledgeSources, { checkReady: explicit, env: options.env }),
      );
      const userServers = await enabledUserServers(options.registry);
      if (selected.length > 0 || userServers.length > 0) {
        starting = startRouter({ sources: selected, userServers, project: identity.id });
        router = await relay.unlessStopped(
          withTimeout(starting, 5_000, "the knowledge router did not start"),
        );
        starting = undefined;
        const running = router;
        cleanups.push(() => withTimeout(running.close(), 2_000).catch(() => undefined));
        sources = selected.map((source) => source.profile.alias);
        knowledge = selected.length > 0;
      }
    } catch (error) {
      if (explicit || error instanceof LaunchStopped) throw error;
      options.notice(`ivoai: starting ${options.agent} without ivoai knowledge: ${(error as Error).message}`);
    }

    const store = openSessionStore(paths.stateDir);
    const plan = await relay.unlessStopped(
      selectCompression({
        agent: options.agent,
        knowledgeActive: knowledge,
        requested: options.compression,
        managedBin,
        env: options.env,
      }),
    );
    const session = await store.create({
      agent: options.agent,
      mode: "direct",
      status: "starting",
      pid: null,
      pid_start_ticks: null,
      project: identity.id,
      knowledge_sources: sources,
      mcp_servers: router ? router.userEndpoints.map((server) => server.name) : [],
      compression: { requested: plan.requested, effective: plan.implementation, reason: plan.why },
    });
    started.sessionId = session.id;
    const runtimeDir = path.join(paths.stateDir, "run", session.id);
    cleanups.push(() => fs.rm(runtimeDir, { recursive: true, force: true }));
    try {
      await fs.mkdir(runtimeDir, { recursive: true, mode: 0o700 });
      const injection = buildInjection(options.agent, {
        router: router ? { endpoints: router.endpoints, knowledge, user: router.userEndpoints } : undefined,
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
      const [program, ...lead] = compressionCommand(plan, options.agent, located.path) as [
        string,
        ...string[],
      ];
      relay.check();
      // Same process group as ivoai: the terminal's ^C, ^Z and resizes reach the whole interactive stack.
      const child = spawn(program, [...lead, ...injection.args, ...options.args], {
        stdio: "inherit",
        env,
        cwd: options.cwd,
      });
      // Watched in the spawn's own tick: an agent that exits at once is still seen exiting.
      const agent = relay.watch(child);
      if (!(await agent.spawned) || child.pid === undefined) {
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
      const exit = await agent.exited;
      await store.update(session.id, {
        status: "exited",
        ended_at: new Date().toISOString(),
        exit_code: exit.code,
        exit_signal: exit.signal,
      });
      // A session that started is never retried: its status is ivoai's.
      return {
        sessionId: session.id,
        exitCode: exit.code ?? (exit.signal ? signalStatus(exit.signal) : 128),
      };
    } catch (error) {
      if (error instanceof LaunchStopped) {
        await store.update(session.id, {
          status: "failed",
          error: error.message,
          ended_at: new Date().toISOString(),
        });
      }
      throw error;
    }
  } finally {
    await cleanup();
  }
}
