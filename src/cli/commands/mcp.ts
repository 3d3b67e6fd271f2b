// `ivoai mcp add|list|show|remove|enable|disable|test`: the user's own MCP servers, in the registry that holds
// ivoai's servers. Header and environment values come from stdin, never argv, and go only to secrets.json.
import { openRegistry, type RegistrySnapshot } from "../../client/connections/registry.js";
import { probeUserServer, type UserProbe } from "../../client/connections/user-probe.js";
import { resolveUserServer } from "../../client/connections/user-servers.js";
import { NAME_RULE, USER_SERVER_NAME, type UserServer, userServerSchema } from "../../config/user-mcp.js";
import { IvoaiError } from "../../shared/errors.js";
import { defineCommand, type GroupSpec } from "../command.js";
import { formatTable } from "../output.js";
import { readStdin } from "../secret-input.js";

const NAME = {
  name: "NAME",
  description: "the server's local name",
  required: true,
  complete: "mcp-server",
} as const;

/** What list/show print of a server: every field but secret values (their names: "stored"). */
function describe(server: UserServer) {
  return {
    ...server,
    target: server.transport === "stdio" ? [server.command, ...server.args].join(" ") : server.url,
    secrets: [
      ...server.secret_headers.map((h) => `header ${h}`),
      ...server.secret_env.map((v) => `env ${v}`),
    ],
  };
}

const addCommand = defineCommand({
  name: "add",
  summary: "Add one of your MCP servers: NAME -- COMMAND ARGS… (stdio) or NAME --url URL (Streamable HTTP)",
  description:
    "Secrets never go in argv: --header-stdin NAME reads that header's value (e.g. Authorization) from\n" +
    "standard input, --env-stdin VAR a stdio server's variable. Both are kept only in secrets.json (0600).\n" +
    "Example:\n" +
    "  printf 'Bearer %s' \"$TOKEN\" | ivoai mcp add docs --url https://mcp.example.com/mcp --header-stdin Authorization\n" +
    "  ivoai mcp add notes --read-only --allow search -- node notes-server.js",
  json: true,
  positionals: [
    // A new name: completing the existing ones would only offer names add refuses.
    { name: "NAME", description: "the server's local name", required: true },
    { name: "COMMAND", description: "a stdio server's command and arguments", variadic: true },
  ],
  options: {
    url: { type: "string", value: "URL", description: "a Streamable HTTP server's URL (http or https)" },
    "header-stdin": { type: "string", value: "HEADER", description: "read this header's value from stdin" },
    "env-stdin": { type: "string", value: "VAR", description: "read this variable's value from stdin" },
    "read-only": {
      type: "boolean",
      description: "its tools change nothing: AUTO's read-only workers may use it",
    },
    allow: { type: "string", multiple: true, value: "TOOL", description: "only these tools (repeat)" },
    prefix: { type: "string", value: "P", description: "agents see its tools as P_tool" },
    disabled: { type: "boolean", description: "add it switched off" },
    required: { type: "boolean", description: "doctor fails when it does not answer" },
  },
  async run(ctx) {
    const [name = "", ...command] = ctx.positionals;
    const { url } = ctx.options;
    if (!USER_SERVER_NAME.test(name)) throw new IvoaiError("USAGE", `${name}: ${NAME_RULE}`);
    if ((url === undefined) === (command.length === 0))
      throw new IvoaiError("USAGE", "give either --url URL or -- COMMAND ARGS…, not both or neither");
    const header = ctx.options["header-stdin"];
    const envVar = ctx.options["env-stdin"];
    if (header && !url) throw new IvoaiError("USAGE", "--header-stdin applies to a --url server");
    if (envVar && url) throw new IvoaiError("USAGE", "--env-stdin applies to a stdio server");
    const secret = header || envVar ? await readStdin(16 * 1024, "a secret value") : undefined;
    if ((header || envVar) && !secret) throw new IvoaiError("USAGE", "standard input held no secret value");
    const common = {
      name,
      enabled: !ctx.options.disabled,
      read_only: ctx.options["read-only"] ?? false,
      required: ctx.options.required ?? false,
      ...(ctx.options.allow?.length ? { tools: ctx.options.allow } : {}),
      ...(ctx.options.prefix ? { prefix: ctx.options.prefix } : {}),
      secret_headers: header ? [header] : [],
      secret_env: envVar ? [envVar] : [],
      added_at: new Date().toISOString(),
    };
    const [program = "", ...args] = command;
    const server: UserServer = url
      ? { ...common, transport: "http", url }
      : { ...common, transport: "stdio", command: program, args };
    const checked = userServerSchema.safeParse(server);
    if (!checked.success) throw new IvoaiError("USAGE", `${name}: ${checked.error.issues[0]?.message}`);
    await openRegistry(ctx.env).update((state) => {
      if (state.userServers.some((entry) => entry.name === name))
        throw new IvoaiError(
          "CONFLICT",
          `an MCP server named ${name} exists (ivoai mcp remove ${name} first)`,
        );
      if (state.profiles.some((profile) => profile.alias === name))
        throw new IvoaiError("CONFLICT", `${name} is an ivoai server's alias`);
      state.userServers.push(server);
      if (secret) {
        const stored = {
          headers: header ? { [header]: secret } : {},
          env: envVar ? { [envVar]: secret } : {},
        };
        state.secrets.mcp_servers = { ...state.secrets.mcp_servers, [name]: stored };
      }
    });
    ctx.out.data(describe(server), (s) => `added MCP server ${s.name} (${s.transport}: ${s.target})`);
    return 0;
  },
});

async function snapshotOf(env: NodeJS.ProcessEnv): Promise<RegistrySnapshot> {
  return openRegistry(env).read();
}

function setEnabled(enabled: boolean) {
  return defineCommand({
    name: enabled ? "enable" : "disable",
    summary: enabled
      ? "Switch an MCP server on for new sessions"
      : "Switch an MCP server off (kept with its secrets)",
    json: true,
    positionals: [NAME],
    async run(ctx) {
      const name = ctx.positionals[0] ?? "";
      const server = await openRegistry(ctx.env).update((state) => {
        const found = resolveUserServer(state, name);
        state.userServers = state.userServers.map((entry) =>
          entry.name === name ? { ...entry, enabled } : entry,
        );
        return { ...found, enabled };
      });
      ctx.out.data(
        { name, enabled: server.enabled },
        (s) => `${s.name}: ${s.enabled ? "enabled" : "disabled"}`,
      );
      return 0;
    },
  });
}

function renderProbe(name: string, probe: UserProbe): string {
  if (!probe.ok) return `${name}: failed after ${probe.ms} ms: ${probe.error}`;
  const lines = [
    `${name}: ok in ${probe.ms} ms, ${probe.tools.length} tools: ${probe.tools.join(", ") || "none"}`,
  ];
  if (probe.hidden.length > 0) lines.push(`  hidden by the allow-list: ${probe.hidden.join(", ")}`);
  if (probe.missing.length > 0) lines.push(`  allowed but not offered: ${probe.missing.join(", ")}`);
  return lines.join("\n");
}

export const mcpGroup: GroupSpec = {
  kind: "group",
  name: "mcp",
  summary: "Your own MCP servers, given to agent sessions beside ivoai's",
  children: [
    addCommand,
    defineCommand({
      name: "list",
      summary: "List your MCP servers (secret values never shown)",
      json: true,
      async run(ctx) {
        const servers = (await snapshotOf(ctx.env)).userServers.map(describe);
        ctx.out.data(servers, (rows) =>
          formatTable(
            ["NAME", "TRANSPORT", "ENABLED", "READ-ONLY", "TOOLS", "TARGET"],
            rows.map((s) => [
              s.name,
              s.transport,
              s.enabled ? "yes" : "no",
              s.read_only ? "yes" : "no",
              s.tools?.join(",") ?? "all",
              s.target,
            ]),
            "no MCP servers added (ivoai mcp add --help)",
          ),
        );
        return 0;
      },
    }),
    defineCommand({
      name: "show",
      summary: "Show one MCP server (secret values never shown)",
      json: true,
      positionals: [NAME],
      async run(ctx) {
        const server = resolveUserServer(await snapshotOf(ctx.env), ctx.positionals[0] ?? "");
        const { secrets: _values, ...rest } = server;
        ctx.out.data(describe(rest), (s) =>
          [
            `${s.name} (${s.transport}${s.enabled ? "" : ", disabled"}${s.read_only ? ", read-only" : ""})`,
            `  target: ${s.target}`,
            `  tools: ${s.tools?.join(", ") ?? "all"}${s.prefix ? ` as ${s.prefix}_TOOL` : ""}`,
            `  secrets: ${s.secrets.map((entry) => `${entry}: stored`).join(", ") || "none"}`,
          ].join("\n"),
        );
        return 0;
      },
    }),
    defineCommand({
      name: "remove",
      summary: "Remove an MCP server and its stored secrets",
      json: true,
      positionals: [NAME],
      async run(ctx) {
        const name = ctx.positionals[0] ?? "";
        await openRegistry(ctx.env).update((state) => {
          resolveUserServer(state, name);
          state.userServers = state.userServers.filter((entry) => entry.name !== name);
          if (state.secrets.mcp_servers) delete state.secrets.mcp_servers[name];
        });
        ctx.out.data({ name, removed: true }, (s) => `removed MCP server ${s.name}`);
        return 0;
      },
    }),
    setEnabled(true),
    setEnabled(false),
    defineCommand({
      name: "test",
      summary: "Connect to an MCP server: initialize, list its tools, time it (exit 1 when it fails)",
      json: true,
      positionals: [NAME],
      options: {
        timeout: {
          type: "integer",
          value: "SECONDS",
          min: 1,
          max: 600,
          description: "give up after (default 10)",
        },
      },
      async run(ctx) {
        const name = ctx.positionals[0] ?? "";
        const server = resolveUserServer(await snapshotOf(ctx.env), name);
        const probe = await probeUserServer(server, {
          timeoutMs: (ctx.options.timeout ?? 10) * 1000,
          env: ctx.env,
        });
        ctx.out.data({ name, ...probe }, (p) => renderProbe(name, p));
        return probe.ok ? 0 : 1;
      },
    }),
  ],
};
