// `ivoai connect server …`, `ivoai disconnect server …`: the client's connections to ivoai servers.
import {
  type AddServerInput,
  type AddServerResult,
  addServer,
  discover,
  probe,
} from "../../client/connections/connect.js";
import { openRegistry } from "../../client/connections/registry.js";
import { IvoaiError } from "../../shared/errors.js";
import { oneLine } from "../../shared/terminal-text.js";
import { type CommandSpec, defineCommand, type GroupSpec } from "../command.js";
import { formatTable } from "../output.js";
import { promptHidden, readStdin } from "../secret-input.js";
import { connectAgentCommands } from "./agents.js";

/** What `connect server add` reaches beyond the process: the person typing the code, and the server. */
export interface ConnectAddDeps {
  /** The enrollment code: from standard input, or typed at a no-echo prompt. */
  readCode(fromStdin: boolean): Promise<string>;
  /** Enrolls with the server and saves its profile and credential in the registry of `env`. */
  addServer(env: NodeJS.ProcessEnv, input: AddServerInput): Promise<AddServerResult>;
}

/** The real ones: this process's stdin or terminal, the network and the registry files. */
export const REAL_CONNECT_ADD_DEPS: ConnectAddDeps = {
  readCode: (fromStdin) => (fromStdin ? readStdin() : promptHidden("Enrollment code: ")),
  addServer: (env, input) => addServer(openRegistry(env), input),
};

/** `connect server add` on `deps` (the real ones unless a test passes fakes). */
export function createConnectAddCommand(deps: ConnectAddDeps = REAL_CONNECT_ADD_DEPS): CommandSpec {
  return defineCommand({
    name: "add",
    summary: "Enroll with a server using a single-use code (from stdin or a no-echo prompt)",
    description:
      "Discovery needs valid TLS (plain http only on loopback), no cross-origin redirect, protocol 1 and a\n" +
      "ready or ready_degraded server. The credential and profile are saved before the context and memory\n" +
      "probes run; probe failures are warnings. Without --purpose the server is its own knowledge domain,\n" +
      "named after its alias. Before the code is spent, the alias must be free and config.toml and\n" +
      "secrets.json readable and replaceable (no symlink). Example:\n" +
      "  printf '%s\\n' \"$CODE\" | ivoai connect server add acme --url https://ai.acme.example --code-stdin",
    json: true,
    positionals: [{ name: "ALIAS", description: "a short local name for the server", required: true }],
    options: {
      url: { type: "string", value: "URL", required: true, description: "the server's public origin" },
      purpose: {
        type: "string",
        value: "NAME",
        description:
          "knowledge domain, never mixed with another (default: the alias; with --redundancy-group, its members' purpose or the group's name)",
      },
      "redundancy-group": {
        type: "string",
        value: "NAME",
        description: "replicas of one purpose that stand in for each other",
      },
      priority: {
        type: "integer",
        value: "N",
        min: 0,
        max: 1_000_000,
        description: "lower is tried first for reads (default 100)",
      },
      "code-stdin": { type: "boolean", description: "read the enrollment code from standard input" },
    },
    async run(ctx) {
      const { url, purpose, priority } = ctx.options;
      const code = await deps.readCode(ctx.options["code-stdin"]);
      const group = ctx.options["redundancy-group"];
      const result = await deps.addServer(ctx.env, {
        alias: ctx.positionals[0] ?? "",
        url,
        ...(purpose ? { purpose } : {}),
        code,
        ...(group ? { redundancyGroup: group } : {}),
        ...(priority !== undefined ? { priority } : {}),
      });
      for (const warning of result.warnings) ctx.out.note(`warning: ${warning}`);
      ctx.out.data(
        { ...result, profile: result.profile },
        (r) =>
          `connected ${r.profile.alias} (${r.profile.id}) at ${r.profile.url} for purpose ${r.profile.purpose}`,
      );
      return 0;
    },
  });
}

const addCommand = createConnectAddCommand();

const listCommand = defineCommand({
  name: "list",
  summary: "List connected servers",
  json: true,
  async run(ctx) {
    const { profiles } = await openRegistry(ctx.env).read();
    ctx.out.data({ servers: profiles }, ({ servers: rows }) =>
      formatTable(
        ["ALIAS", "PURPOSE", "GROUP", "PRIORITY", "ENABLED", "URL", "ID"],
        rows.map((row) => [
          row.alias,
          row.purpose,
          row.redundancy_group ?? "-",
          String(row.priority),
          row.enabled ? "yes" : "no",
          row.url,
          row.id,
        ]),
        "no servers connected (see 'ivoai connect server add --help')",
      ),
    );
    return 0;
  },
});

const ALIAS = [
  { name: "ALIAS", description: "server alias (or id)", required: true, complete: "server-alias" as const },
];

const showCommand = defineCommand({
  name: "show",
  summary: "Show one server profile (never its credential)",
  json: true,
  positionals: ALIAS,
  async run(ctx) {
    const profile = await openRegistry(ctx.env).find(ctx.positionals[0] ?? "");
    ctx.out.data(profile, (p) =>
      Object.entries(p)
        .map(
          ([key, value]) =>
            `${key.padEnd(17)} ${oneLine(typeof value === "object" ? JSON.stringify(value) : String(value))}`,
        )
        .join("\n"),
    );
    return 0;
  },
});

const testCommand = defineCommand({
  name: "test",
  summary: "Check discovery, readiness and both MCP endpoints with the stored credential",
  json: true,
  positionals: ALIAS,
  async run(ctx) {
    const registry = openRegistry(ctx.env);
    const profile = await registry.find(ctx.positionals[0] ?? "");
    const token = await registry.credentialOf(profile.id);
    if (!token)
      throw new IvoaiError("CONFIG_INVALID", `no stored credential for ${profile.alias}; connect it again`);
    const found = await discover(profile.url);
    const warnings = await probe(profile, token);
    const report = {
      alias: profile.alias,
      url: found.origin,
      readiness: found.readiness,
      degraded: found.degraded,
      warnings,
    };
    ctx.out.data(report, (r) =>
      [
        `${r.alias}: ${r.readiness} at ${r.url}`,
        ...r.degraded.map((d) => `  degraded: ${d}`),
        ...r.warnings.map((w) => `  warning: ${w}`),
      ].join("\n"),
    );
    return warnings.length === 0 ? 0 : 1;
  },
});

function toggle(name: "enable" | "disable"): CommandSpec {
  return defineCommand({
    name,
    summary:
      name === "enable"
        ? "Include a server in sessions again"
        : "Leave a server out of sessions (keeps its credential)",
    json: true,
    positionals: ALIAS,
    async run(ctx) {
      const target = ctx.positionals[0] ?? "";
      const profile = await openRegistry(ctx.env).update((state) => {
        const found = state.profiles.find((entry) => entry.alias === target || entry.id === target);
        if (!found) throw new IvoaiError("NOT_FOUND", `no server profile named ${target}`);
        found.enabled = name === "enable";
        return found;
      });
      ctx.out.data(profile, (p) => `${p.alias}: ${p.enabled ? "enabled" : "disabled"}`);
      return 0;
    },
  });
}

export const connectGroup: GroupSpec = {
  kind: "group",
  name: "connect",
  summary: "Connect this machine to ivoai servers",
  children: [
    {
      kind: "group",
      name: "server",
      summary: "Manage connections to ivoai servers",
      children: [addCommand, listCommand, showCommand, testCommand, toggle("enable"), toggle("disable")],
    },
    ...connectAgentCommands,
  ],
};

export const disconnectGroup: GroupSpec = {
  kind: "group",
  name: "disconnect",
  summary: "Remove connections",
  children: [
    defineCommand({
      name: "server",
      summary: "Forget one server (its profile and credential), or all with --all",
      json: true,
      positionals: [{ name: "ALIAS", description: "server alias (or id)", complete: "server-alias" }],
      options: { all: { type: "boolean", description: "forget every server" } },
      async run(ctx) {
        const target = ctx.positionals[0];
        const all = ctx.options.all === true;
        if (!target && !all) throw new IvoaiError("USAGE", "name a server, or pass --all");
        if (target && all) throw new IvoaiError("USAGE", "name a server or pass --all, not both");
        const removed = await openRegistry(ctx.env).update((state) => {
          const gone = all
            ? state.profiles
            : state.profiles.filter((entry) => entry.alias === target || entry.id === target);
          if (gone.length === 0) throw new IvoaiError("NOT_FOUND", `no server profile named ${target}`);
          state.profiles = state.profiles.filter((entry) => !gone.includes(entry));
          for (const profile of gone) delete state.secrets.servers[profile.id];
          return gone.map((profile) => profile.alias);
        });
        ctx.out.data({ removed }, (r) => `disconnected ${r.removed.join(", ")}`);
        return 0;
      },
    }),
  ],
};
