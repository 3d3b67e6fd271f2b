// `ivoai auto` on a terminal: the managed OpenCode frontend. ivoai starts its bridge (the AUTO engine behind an
// OpenAI-compatible loopback API), then a pinned `opencode serve` on a free loopback port with a random password
// and an isolated configuration, then the TUI attached to it in the foreground. When the TUI exits (or ivoai is
// stopped) the server's process group and the bridge are ended; the exit status is the TUI's.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import net from "node:net";
import path from "node:path";
import { writeFileAtomic } from "../../shared/atomic-file.js";
import { IvoaiError } from "../../shared/errors.js";
import { oneLine } from "../../shared/terminal-text.js";
import { withTimeout } from "../../shared/timeout.js";
import { locateAgent, TESTED_VERSIONS } from "../agents/catalog.js";
import { createSignalRelay, LaunchStopped, type SignalRelay, signalStatus } from "../agents/signal-relay.js";
import { createQuotaManager } from "../auto/quota/admission.js";
import { type ExecutorRegistry, loadExecutorRegistry } from "../auto/registry.js";
import { discover } from "../connections/connect.js";
import type { ConnectionRegistry } from "../connections/registry.js";
import type { Source } from "../router/selection.js";
import { selectSources } from "../router/selection.js";
import { type Bridge, startBridge } from "./bridge.js";
import { frontendCatalogue, opencodeProviderConfig, validEfforts } from "./catalogue.js";
import { createAutoFrontendEngine } from "./engine.js";
import type { AutoProgress, StatusServer, StatusSnapshot } from "./plugins/index.js";
import {
  createAutoProgress,
  pluginConfig,
  pluginFiles,
  type SourceSelection,
  sourceSelection,
  startStatusServer,
  writePluginFiles,
} from "./plugins/index.js";
import { endOrphanedServers, markServer, opencodeHome } from "./server-marks.js";

const STATUS_TOKEN_ENV = "IVOAI_STATUS_TOKEN";

/** The only place the bridge secret lives: managed OpenCode's environment. */
export const BRIDGE_SECRET_ENV = "IVOAI_BRIDGE_SECRET";
const LISTENING = /opencode server listening on (http:\/\/127\.0\.0\.1:\d+)/;
const MAX_SERVER_OUTPUT = 8 * 1024;
/** Variables of the user's own OpenCode setup that must not reach the managed one. */
const USER_OPENCODE_ENV = [
  "OPENCODE_CONFIG",
  "OPENCODE_CONFIG_DIR",
  "OPENCODE_CONFIG_CONTENT",
  "OPENCODE_TUI_CONFIG",
  "OPENCODE_SERVER_PASSWORD",
  "OPENCODE_SERVER_USERNAME",
  BRIDGE_SECRET_ENV,
];

export interface OpencodeFrontendOptions {
  /** Explicit knowledge selection; empty means every enabled server (as for the launchers). */
  knowledgeSources: readonly string[];
  registry: ConnectionRegistry;
  env: NodeJS.ProcessEnv;
  cwd: string;
  selfCommand: string[];
  /** Messages before the TUI takes the terminal (dropped afterwards: they would tear its screen). */
  notice(message: string): void;
  /** TERM → KILL bound for the executors, the server and the TUI. */
  killAfterMs?: number;
  /** How long `opencode serve` may take to listen; 60 s unless given. */
  startTimeoutMs?: number;
}

/** Runs the frontend to its end; resolves with the TUI's exit status (128+N when stopped by signal N). */
export async function runOpencodeFrontend(options: OpencodeFrontendOptions): Promise<number> {
  const killAfterMs = options.killAfterMs ?? 5_000;
  const relay = createSignalRelay(killAfterMs);
  const cleanups: (() => Promise<unknown>)[] = [];
  // OpenCode quits cleanly (status 0) on a forwarded TERM/HUP; ivoai's own status still says it was stopped.
  let stoppedBy: NodeJS.Signals | undefined;
  const stopping = ["SIGTERM", "SIGHUP", "SIGINT"] as const;
  const onStop = (signal: NodeJS.Signals) => {
    stoppedBy ??= signal;
  };
  for (const signal of stopping) process.on(signal, onStop);
  try {
    const status = await run(options, relay, cleanups, killAfterMs);
    return stoppedBy ? signalStatus(stoppedBy) : status;
  } catch (error) {
    if (!(error instanceof LaunchStopped)) throw error;
    return signalStatus(error.signal);
  } finally {
    for (const step of cleanups.reverse()) await step().catch(() => undefined);
    for (const signal of stopping) process.off(signal, onStop);
    relay.dispose();
  }
}

/** One frontend run between its phases: the caller's options, the signal relay and what to undo at the end. */
interface FrontendRun {
  readonly options: OpencodeFrontendOptions;
  readonly relay: SignalRelay;
  /** Undone in reverse order by `runOpencodeFrontend`, whatever happened. */
  readonly cleanups: (() => Promise<unknown>)[];
  readonly killAfterMs: number;
  readonly managedBin: string;
  /** Managed OpenCode's own home below ivoai's state (config, data, plugins, server marks). */
  readonly home: string;
  /** Once the TUI has the terminal, notices are dropped: they would tear its screen. */
  tuiRunning: boolean;
  /** Where the AUTO turns stand, fed by the engine's events, served to the TUI plugin. */
  readonly progress: AutoProgress;
}

/** What both OpenCode processes (server and TUI) start with. */
interface OpencodeLaunch {
  /** opencode's executable (the pinned version). */
  program: string;
  /** The caller's environment with the managed XDG directories and without the user's OpenCode variables. */
  base: NodeJS.ProcessEnv;
  /** The server's password, shared with the TUI that attaches to it. */
  password: string;
}

/**
 * The phases in order: the pinned opencode, the knowledge selection, the executors, the bridge, the managed
 * home, the status server and the configuration, `opencode serve`, then the TUI in the foreground.
 */
async function run(
  options: OpencodeFrontendOptions,
  relay: SignalRelay,
  cleanups: (() => Promise<unknown>)[],
  killAfterMs: number,
): Promise<number> {
  const paths = options.registry.paths;
  const frontend: FrontendRun = {
    options,
    relay,
    cleanups,
    killAfterMs,
    managedBin: path.join(paths.dataDir, "bin"),
    home: opencodeHome(paths.stateDir),
    tuiRunning: false,
    progress: createAutoProgress(),
  };
  const program = await pinnedOpencode(frontend);
  const selected = await selectKnowledge(frontend);
  const executors = await relay.unlessStopped(
    loadExecutorRegistry({ stateDir: paths.stateDir, managedBin: frontend.managedBin, env: options.env }),
  );
  const bridge = await openBridge(frontend, executors);
  relay.check();
  const launch: OpencodeLaunch = {
    program,
    base: await prepareHome(frontend),
    password: randomBytes(32).toString("base64url"),
  };
  const status = await openStatus(frontend, selected, executors);
  const tuiConfig = await writeTuiPlugins(frontend, status.url);
  const config = serverConfig(frontend, executors, bridge.url);
  const url = await startServer(frontend, launch, config, bridge.secret);
  relay.check();
  frontend.tuiRunning = true;
  return runTui(frontend, launch, url, { OPENCODE_TUI_CONFIG: tuiConfig, [STATUS_TOKEN_ENV]: status.token });
}

/** opencode's path, refused unless it is installed and the pinned version. */
async function pinnedOpencode(frontend: FrontendRun): Promise<string> {
  const { options, managedBin } = frontend;
  const opencode = await locateAgent("opencode", managedBin, options.env);
  if (!opencode) {
    throw new IvoaiError(
      "NOT_FOUND",
      `opencode is not installed (not on PATH nor in ${managedBin}); run 'ivoai install opencode'`,
    );
  }
  const version = await frontend.relay.unlessStopped(versionOf(opencode.path, options.env));
  if (version !== TESTED_VERSIONS.opencode) {
    throw new IvoaiError(
      "CONFLICT",
      `${opencode.path} is opencode ${version || "(unknown version)"}; ivoai auto needs the pinned ${TESTED_VERSIONS.opencode} ('ivoai install opencode')`,
    );
  }
  return opencode.path;
}

/** The launchers' rule: an explicitly selected source must be usable now, before anything starts. */
function selectKnowledge(frontend: FrontendRun): Promise<Source[]> {
  const { options } = frontend;
  const explicit = options.knowledgeSources.length > 0;
  return frontend.relay.unlessStopped(
    selectSources(options.registry, options.knowledgeSources, {
      checkReady: explicit,
      env: options.env,
    }).catch((error) => {
      if (explicit) throw error;
      return [];
    }),
  );
}

/** The AUTO engine behind its loopback bridge, with the catalogue the executors allow. */
async function openBridge(frontend: FrontendRun, executors: ExecutorRegistry): Promise<Bridge> {
  const { options } = frontend;
  const bridge = await startBridge({
    engine: createAutoFrontendEngine({
      registry: options.registry,
      env: options.env,
      cwd: options.cwd,
      selfCommand: options.selfCommand,
      knowledgeSources: options.knowledgeSources,
      notice: (message) => {
        if (!frontend.tuiRunning) options.notice(message);
      },
      onProgress: (event) => frontend.progress.observe(event),
      killAfterMs: frontend.killAfterMs,
    }),
    catalogue: () => frontendCatalogue(executors),
    validEfforts: validEfforts(executors),
    // OpenCode sends its own session id on every provider request.
    sessionHeader: "x-session-id",
  });
  frontend.cleanups.push(() => bridge.close());
  return bridge;
}

/** Private managed directories (orphaned servers of a killed ivoai ended); returns the base environment. */
async function prepareHome(frontend: FrontendRun): Promise<NodeJS.ProcessEnv> {
  const { home } = frontend;
  const xdg = {
    // OpenCode also reads ~/.opencode/ (config, plugins) whatever XDG says: the managed one gets its own home.
    HOME: path.join(home, "home"),
    XDG_CONFIG_HOME: path.join(home, "config"),
    XDG_DATA_HOME: path.join(home, "data"),
    XDG_CACHE_HOME: path.join(home, "cache"),
    XDG_STATE_HOME: path.join(home, "state"),
  };
  for (const dir of [home, ...Object.values(xdg)]) {
    await fs.mkdir(dir, { recursive: true, mode: 0o700 });
    await fs.chmod(dir, 0o700);
  }
  await endOrphanedServers(home);
  const base: NodeJS.ProcessEnv = { ...frontend.options.env, ...xdg };
  for (const name of USER_OPENCODE_ENV) delete base[name];
  return base;
}

/** ivoai's status for the TUI plugin: selected sources, executors, their quota windows and the AUTO turn. */
async function openStatus(
  frontend: FrontendRun,
  selected: readonly Source[],
  executors: ExecutorRegistry,
): Promise<StatusServer> {
  const quota = createQuotaManager({ stateDir: frontend.options.registry.paths.stateDir });
  const health = sourceHealth(selected);
  const selection = await launchSelection(frontend, selected);
  const status = await startStatusServer(async () => {
    const auto = frontend.progress.snapshot();
    return {
      sources: await health.snapshot(),
      executor: executors.executors
        .filter((entry) => entry.path && entry.login !== "logged_out")
        .map((entry) => entry.name)
        .join(", "),
      quota: (
        await Promise.all(executors.executors.map((entry) => quota.current(entry.name).catch(() => [])))
      )
        .flat()
        .map((snapshot) => ({
          executor: snapshot.executor,
          window: snapshot.window,
          used_percent: snapshot.used_percent,
          resets_at: snapshot.resets_at,
        })),
      session_id: auto?.session_id ?? null,
      auto,
      selection,
    };
  });
  frontend.cleanups.push(() => status.close());
  return status;
}

/** The configured sources and those the selection left out, for the panel before a turn records its own. */
async function launchSelection(
  frontend: FrontendRun,
  selected: readonly Source[],
): Promise<SourceSelection | null> {
  const { options } = frontend;
  try {
    const { profiles, secrets } = await options.registry.read();
    const facts = profiles.map((profile) => ({
      id: profile.id,
      alias: profile.alias,
      enabled: profile.enabled,
      credentialed: Boolean(secrets.servers[profile.id]?.credential),
    }));
    const ids = new Set(selected.map((source) => source.profile.id));
    return sourceSelection(facts, ids, options.knowledgeSources.length > 0);
  } catch {
    // An unreadable registry only leaves the panel without these lines; the selection already ran.
    return null;
  }
}

/** Writes ivoai's plugins and the TUI's configuration naming them; returns that configuration's path. */
async function writeTuiPlugins(frontend: FrontendRun, statusUrl: string): Promise<string> {
  const pluginsDir = path.join(frontend.home, "plugins");
  await fs.mkdir(pluginsDir, { recursive: true, mode: 0o700 });
  await writePluginFiles(pluginsDir, pluginFiles({ statusUrl, statusTokenEnv: STATUS_TOKEN_ENV }));
  const tuiConfig = path.join(frontend.home, "tui.json");
  await writeFileAtomic(tuiConfig, JSON.stringify(pluginConfig(pluginsDir).tui), { mode: 0o600 });
  return tuiConfig;
}

/** The managed server's whole configuration: ivoai as the only provider, nothing shared or updated. */
function serverConfig(frontend: FrontendRun, executors: ExecutorRegistry, bridgeUrl: string): object {
  const entries = frontendCatalogue(executors);
  return {
    $schema: "https://opencode.ai/config.json",
    share: "disabled",
    autoupdate: false,
    model: "ivoai/auto",
    enabled_providers: ["ivoai"],
    agent: { title: { disable: true } },
    provider: { ivoai: opencodeProviderConfig(entries, bridgeUrl, BRIDGE_SECRET_ENV) },
    // ivoai's server plugin: the frontend session and message ids on every bridge request.
    plugin: pluginConfig(path.join(frontend.home, "plugins")).opencode.plugin,
  };
}

/** Starts `opencode serve` in its own process group, ended with the run; resolves with its URL. */
async function startServer(
  frontend: FrontendRun,
  launch: OpencodeLaunch,
  config: object,
  bridgeSecret: string,
): Promise<string> {
  const { options, relay, cleanups } = frontend;
  const port = await relay.unlessStopped(freePort());
  const server = spawn(launch.program, ["serve", "--hostname", "127.0.0.1", "--port", String(port)], {
    cwd: options.cwd,
    // Its own process group, away from the terminal: ^C is the TUI's; ivoai ends the server itself.
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...launch.base,
      OPENCODE_CONFIG_CONTENT: JSON.stringify(config),
      OPENCODE_DISABLE_PROJECT_CONFIG: "1",
      OPENCODE_DISABLE_SHARE: "1",
      OPENCODE_DISABLE_AUTOUPDATE: "1",
      OPENCODE_SERVER_PASSWORD: launch.password,
      [BRIDGE_SECRET_ENV]: bridgeSecret,
    },
  });
  // Watched from its spawn's own tick: a server that exits at once is still seen exiting.
  const listening = serverUrl(server, port, options.startTimeoutMs ?? 60_000);
  listening.catch(() => undefined);
  const killServer = () => killGroup(server, "SIGKILL");
  // Even if ivoai dies on an uncaught error, the server's group does not outlive it.
  process.once("exit", killServer);
  cleanups.push(async () => {
    process.off("exit", killServer);
    await stopGroup(server, frontend.killAfterMs);
  });
  // Recorded so that the next `ivoai auto` ends this server if ivoai is killed before it can.
  const serverMark = await markServer(frontend.home, server.pid);
  cleanups.push(() => fs.rm(serverMark, { force: true }));
  return relay.unlessStopped(
    listening.catch((error: Error) => {
      throw new IvoaiError("INTERNAL", `opencode serve did not start: ${error.message}`);
    }),
  );
}

/** The user's terminal, in ivoai's process group: the TUI owns the keyboard; ^C is its key. Its exit status. */
async function runTui(
  frontend: FrontendRun,
  launch: OpencodeLaunch,
  url: string,
  /** The TUI loads ivoai's status plugin, which reads the status with this token (environment only). */
  pluginEnv: Record<string, string>,
): Promise<number> {
  const { cwd } = frontend.options;
  const tui = spawn(launch.program, ["attach", url, "--dir", cwd], {
    cwd,
    stdio: "inherit",
    env: { ...launch.base, OPENCODE_SERVER_PASSWORD: launch.password, ...pluginEnv },
  });
  const watched = frontend.relay.watch(tui);
  if (!(await watched.spawned)) throw new IvoaiError("NOT_FOUND", `could not start ${launch.program}`);
  const exit = await watched.exited;
  return exit.code ?? (exit.signal ? signalStatus(exit.signal) : 128);
}

function versionOf(program: string, env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve) => {
    // Detached (no controlling terminal): OpenCode otherwise resets the user's terminal through /dev/tty.
    const options = { env, timeout: 20_000, maxBuffer: 64 * 1024, detached: true };
    execFile(program, ["--version"], options, (error, stdout) => {
      resolve(error ? "" : (String(stdout).trim().split("\n").pop()?.trim().slice(0, 40) ?? ""));
    });
  });
}

/** A port free on 127.0.0.1 right now (OpenCode's `--port 0` would prefer 4096). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() => (typeof address === "object" && address ? resolve(address.port) : reject()));
    });
  });
}

/** Waits (bounded) for the server's "listening" line; keeps draining its output afterwards. */
function serverUrl(server: ChildProcess, port: number, timeoutMs: number): Promise<string> {
  let output = "";
  const started = new Promise<string>((resolve, reject) => {
    const onData = (data: Buffer) => {
      output = (output + data.toString()).slice(-MAX_SERVER_OUTPUT);
      const listening = LISTENING.exec(output)?.[1];
      if (listening?.endsWith(`:${port}`)) resolve(listening);
    };
    server.stdout?.on("data", onData);
    server.stderr?.on("data", onData);
    server.once("error", reject);
    server.once("exit", (code, signal) => {
      const tail = output.trim().split("\n").slice(-3).join(" | ").slice(0, 300);
      reject(new Error(`it exited (${signal ?? code})${tail ? `: ${tail}` : ""}`));
    });
  });
  return withTimeout(started, timeoutMs, `no "listening" line within ${timeoutMs / 1000} s`);
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // the group is gone
  }
}

/** TERM to the server's process group, KILL after the bound; resolves once the server has exited. */
async function stopGroup(child: ChildProcess, killAfterMs: number): Promise<void> {
  if (child.pid === undefined) return;
  const exited =
    child.exitCode !== null || child.signalCode !== null
      ? Promise.resolve()
      : new Promise<void>((resolve) => child.once("exit", () => resolve()));
  killGroup(child, "SIGTERM");
  const escalate = setTimeout(() => killGroup(child, "SIGKILL"), killAfterMs);
  await exited;
  clearTimeout(escalate);
  // Anything the server left in its group goes with it.
  killGroup(child, "SIGKILL");
}

/** Live health of the selected sources (discovery answers), probed at most every 10 s, all at once. */
function sourceHealth(selected: readonly Source[]): { snapshot(): Promise<StatusSnapshot["sources"]> } {
  let cached: { at: number; value: Promise<StatusSnapshot["sources"]> } | undefined;
  const probe = () =>
    Promise.all(
      selected.map(async (source) => {
        try {
          await discover(source.profile.url, 2_000);
          return {
            alias: source.profile.alias,
            purpose: source.profile.purpose,
            state: "ok" as const,
            detail: "reachable",
          };
        } catch (error) {
          return {
            alias: source.profile.alias,
            purpose: source.profile.purpose,
            state: "unhealthy" as const,
            detail: oneLine((error as Error).message).slice(0, 160),
          };
        }
      }),
    );
  return {
    snapshot() {
      if (!cached || Date.now() - cached.at > 10_000) cached = { at: Date.now(), value: probe() };
      return cached.value;
    },
  };
}
