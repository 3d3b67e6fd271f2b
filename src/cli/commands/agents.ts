// `ivoai codex|claude|opencode`, `ivoai session …`, `ivoai connect chatgpt|claude` (`ivoai hook …` is in hook.ts).
import { spawn } from "node:child_process";
import path from "node:path";
import { type AgentName, locateAgent, loginStatus } from "../../client/agents/catalog.js";
import { launchAgent } from "../../client/agents/launch.js";
import { COMPRESSION_PROVIDERS, type CompressionProvider } from "../../client/components/selection.js";
import { openRegistry } from "../../client/connections/registry.js";
import { parseSourceFlags } from "../../client/router/selection.js";
import { openSessionStore, type SessionView } from "../../client/session/store.js";
import { IvoaiError } from "../../shared/errors.js";
import { oneLine } from "../../shared/terminal-text.js";
import {
  type CommandContext,
  type CommandSpec,
  defineCommand,
  defineOptions,
  type GroupSpec,
} from "../command.js";
import { formatTable } from "../output.js";
import { AUTO_OPTIONS, KNOWLEDGE_SOURCE_OPTION, runAutoCommand } from "./auto.js";
import { renderAutoState } from "./auto-render.js";
import { sessionDiffCommand } from "./session-diff.js";
import { sessionResumeCommand, sessionWatchCommand } from "./session-follow.js";

const LAUNCH_OPTIONS = defineOptions({
  "knowledge-source": KNOWLEDGE_SOURCE_OPTION,
  compression: {
    type: "enum",
    value: "PROVIDER",
    choices: COMPRESSION_PROVIDERS,
    description: "token compression (default direct); ignored while ivoai knowledge is active",
  },
});

/** What launching an agent reads of the command line. */
interface LaunchOptions {
  readonly "knowledge-source": string[];
  readonly compression: CompressionProvider | undefined;
}

/** node + this script, to be called back by agents (hooks). */
function selfCommand(): string[] {
  return [process.execPath, path.resolve(process.argv[1] ?? "ivoai")];
}

async function launch(
  ctx: CommandContext<LaunchOptions>,
  agent: AgentName,
  args: readonly string[],
): Promise<number> {
  const result = await launchAgent({
    agent,
    args,
    knowledgeSources: parseSourceFlags(ctx.options["knowledge-source"]),
    compression: ctx.options.compression ?? "direct",
    registry: openRegistry(ctx.env),
    env: ctx.env,
    cwd: process.cwd(),
    selfCommand: selfCommand(),
    notice: (message) => ctx.out.note(message),
  });
  return result.exitCode;
}

/**
 * Why `ivoai claude -- mcp list` shows none of ivoai's servers: Claude's listing reads only its configured scopes,
 * and ivoai never writes to them. A session-only `--plugin-dir` would be listed, but Claude Code 2.1.332 then
 * records the plugin in the user's ~/.claude.json, renames the tools and drops them under `--strict-mcp-config`.
 */
const CLAUDE_LISTING_NOTE =
  "\nThe servers reach Claude as ivoai-memory and ivoai-context through a private --mcp-config file for this\n" +
  "process only; your Claude configuration is never written. 'claude mcp list' reads only Claude's configured\n" +
  "scopes (user, project, local), never --mcp-config, so 'ivoai claude -- mcp list' says \"No MCP servers\n" +
  "configured\". To see them, type /mcp in the session; 'ivoai session show ID' names its knowledge sources.";

function agentCommand(agent: AgentName, summary: string, note = ""): CommandSpec {
  return defineCommand({
    name: agent,
    summary,
    description:
      `Starts the official ${agent} CLI with a private, per-session view of the selected ivoai servers.\n` +
      `Pass ${agent}'s own arguments after --, e.g. 'ivoai ${agent} --knowledge-source acme -- --help'.\n` +
      `The exit status (or signal) of the agent becomes ivoai's.${note}`,
    positionals: [{ name: "ARGS", description: `arguments for ${agent}`, variadic: true }],
    options: LAUNCH_OPTIONS,
    run: (ctx) => launch(ctx, agent, ctx.positionals),
  });
}

export const agentCommands: CommandSpec[] = [
  agentCommand("codex", "Run OpenAI Codex CLI with this session's ivoai knowledge"),
  agentCommand("claude", "Run Claude Code with this session's ivoai knowledge", CLAUDE_LISTING_NOTE),
  agentCommand("opencode", "Run OpenCode with this session's ivoai knowledge"),
];

function renderSession(s: SessionView): string {
  return [
    `session ${s.id}: ${s.state === "interrupted" ? "interrupted (its process is gone; the end was never recorded)" : s.state}`,
    `  agent:       ${s.agent} (${s.mode})`,
    `  pid:         ${s.pid ?? "-"}`,
    `  started:     ${s.started_at}${s.ended_at ? `, ended ${s.ended_at}` : ""}`,
    `  exit:        ${s.exit_code ?? (s.exit_signal ? `signal ${s.exit_signal}` : "-")}`,
    `  project:     ${oneLine(s.project)}`,
    `  knowledge:   ${s.knowledge_sources.join(", ") || "none"}`,
    ...(s.mcp_servers.length > 0 ? [`  your MCP:    ${s.mcp_servers.join(", ")}`] : []),
    `  compression: requested ${s.compression.requested}, effective ${s.compression.effective} (${s.compression.reason})`,
    ...(s.error ? [`  error:       ${oneLine(s.error)}`] : []),
    ...(s.auto?.repo ? renderRepo(s.auto.repo) : []),
    ...(s.auto ? [renderAutoState(s.auto)] : []),
  ].join("\n");
}

/** Where an AUTO session worked: its repository, base and worktree ('ivoai session diff ID' shows the change). */
function renderRepo(repo: NonNullable<NonNullable<SessionView["auto"]>["repo"]>): string[] {
  const base = repo.base_commit ? repo.base_commit.slice(0, 12) : "no commit yet";
  return [
    `  repository:  ${oneLine(repo.root)} at ${base}${repo.dirty ? " with uncommitted changes" : ""}`,
    ...(repo.worktree
      ? [`  worktree:    ${oneLine(repo.worktree.path)} on branch ${oneLine(repo.worktree.branch)}`]
      : []),
  ];
}

export const sessionGroup: GroupSpec = {
  kind: "group",
  name: "session",
  summary: "Agent sessions started by ivoai",
  children: [
    defineCommand({
      name: "list",
      summary: "List sessions (live ones are checked by PID and its start time)",
      json: true,
      async run(ctx) {
        const sessions = await openSessionStore(openRegistry(ctx.env).paths.stateDir).list();
        ctx.out.data({ sessions }, ({ sessions: rows }) =>
          formatTable(
            ["ID", "AGENT", "MODE", "STATE", "STARTED", "EXIT", "KNOWLEDGE"],
            rows.map((row) => [
              row.id,
              row.agent,
              row.mode,
              row.state,
              row.started_at,
              row.exit_code === null ? (row.exit_signal ?? "-") : String(row.exit_code),
              row.knowledge_sources.join(",") || "-",
            ]),
            "no sessions yet",
          ),
        );
        return 0;
      },
    }),
    defineCommand({
      name: "show",
      summary: "Show one session",
      json: true,
      positionals: [{ name: "ID", description: "session id", required: true }],
      async run(ctx) {
        const session = await openSessionStore(openRegistry(ctx.env).paths.stateDir).get(
          ctx.positionals[0] ?? "",
        );
        ctx.out.data(session, renderSession);
        return 0;
      },
    }),
    sessionWatchCommand,
    sessionDiffCommand,
    sessionResumeCommand,
    defineCommand({
      name: "start",
      summary:
        "Start a session: --executor codex|claude; --mode direct (as 'ivoai codex|claude') or orchestrated (as 'ivoai auto')",
      description:
        "--mode direct runs the executor's own interface with this session's knowledge (ARGS go to the executor).\n" +
        "--mode orchestrated runs an AUTO session with the executor as planner and primary (ARGS are the task).",
      positionals: [
        { name: "ARGS", description: "arguments for the executor, or the orchestrated task", variadic: true },
      ],
      json: true,
      options: {
        ...LAUNCH_OPTIONS,
        workers: AUTO_OPTIONS.workers,
        print: AUTO_OPTIONS.print,
        worktree: AUTO_OPTIONS.worktree,
        executor: {
          type: "enum",
          value: "AGENT",
          choices: ["codex", "claude"],
          required: true,
          description: "the agent to run",
        },
        mode: {
          type: "enum",
          value: "MODE",
          choices: ["direct", "orchestrated"],
          description: "how the agent runs (default direct)",
        },
      },
      async run(ctx) {
        const { executor, mode = "direct" } = ctx.options;
        if (mode === "orchestrated") {
          if (ctx.options.compression !== undefined)
            throw new IvoaiError(
              "USAGE",
              "--compression applies to --mode direct only (AUTO keeps knowledge exact)",
            );
          return runAutoCommand(ctx, executor);
        }
        if (ctx.options.worktree)
          throw new IvoaiError("USAGE", "--worktree applies to --mode orchestrated only");
        for (const flag of ["workers", "print"] as const) {
          if (ctx.options[flag] !== undefined)
            throw new IvoaiError("USAGE", `--${flag} applies to --mode orchestrated only`);
        }
        if (ctx.json) throw new IvoaiError("USAGE", "--json applies to --mode orchestrated only");
        return launch(ctx, executor, ctx.positionals);
      },
    }),
  ],
};

/** Runs an official CLI with the user's terminal; returns its exit code. */
function interactive(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { stdio: "inherit", env });
    child.once("error", () => resolve(127));
    child.once("exit", (code) => resolve(code ?? 1));
  });
}

function connectAgent(name: "chatgpt" | "claude"): CommandSpec {
  const agent: AgentName = name === "chatgpt" ? "codex" : "claude";
  return defineCommand({
    name,
    summary:
      name === "chatgpt"
        ? "Log in with your ChatGPT plan through 'codex login'"
        : "Log in to Claude through 'claude auth login'",
    description:
      "ivoai delegates to the official CLI and only reads its status command; it never opens, copies or logs credentials.",
    json: true,
    async run(ctx) {
      const located = await locateAgent(
        agent,
        path.join(openRegistry(ctx.env).paths.dataDir, "bin"),
        ctx.env,
      );
      if (!located) throw new IvoaiError("NOT_FOUND", `${agent} is not installed (not on PATH)`);
      let status = await loginStatus(located, ctx.env);
      if (status.state !== "logged_in") {
        const code = await interactive(
          located.path,
          agent === "codex" ? ["login"] : ["auth", "login"],
          ctx.env,
        );
        if (code !== 0) ctx.out.note(`ivoai: ${agent} login exited with ${code}`);
        status = await loginStatus(located, ctx.env);
      }
      ctx.out.data(
        { agent, ...status },
        (s) => `${s.agent}: ${s.state.replace("_", " ")}${s.detail ? ` (${s.detail})` : ""}`,
      );
      return status.state === "logged_in" ? 0 : 1;
    },
  });
}

export const connectAgentCommands = [connectAgent("chatgpt"), connectAgent("claude")];
