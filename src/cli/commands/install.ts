// `ivoai setup`, `ivoai update`, `ivoai rollback`, `ivoai uninstall`: the managed agent CLIs and ivoai's own
// persisted data over their lifetime (logic in client/install).
import { createInterface } from "node:readline/promises";
import {
  AGENTS,
  type LifecycleDeps,
  LOCKED_COMPONENTS,
  loadCatalogue,
  planUninstall,
  probeUpdate,
  readManifest,
  rollback,
  setup,
  uninstall,
  update,
} from "../../client/install/index.js";
import { clientPaths } from "../../config/client-paths.js";
import { IvoaiError } from "../../shared/errors.js";
import { type CommandContext, defineCommand } from "../command.js";
import { formatTable } from "../output.js";

function deps(ctx: CommandContext): LifecycleDeps {
  return {
    paths: clientPaths(ctx.env),
    catalogue: loadCatalogue(ctx.env, (text) => process.stderr.write(`ivoai: WARNING: ${text}\n`)),
    env: ctx.env,
    progress: (text) => ctx.out.note(`ivoai: ${text}`),
  };
}

export const setupCommand = defineCommand({
  name: "setup",
  summary: "Install the pinned official agent CLIs under ivoai's data dir (never over one already on PATH)",
  description:
    "Installs exact catalogue versions with npm (integrity checked, install scripts only where the catalogue " +
    "allows them, no credentials in npm's environment) into $XDG_DATA_HOME/ivoai and links them in " +
    "$XDG_DATA_HOME/ivoai/bin. An agent already on PATH is recorded as pre_existing and left alone. " +
    "--with ruflo adds the Ruflo coordinator from its reviewed full lock (npm ci, no install scripts, its " +
    "entry points' SHA-256 checked); a later setup or update keeps it.",
  json: true,
  options: {
    agents: {
      type: "enum",
      value: "LIST",
      description: "comma-separated agents to set up (default all)",
      choices: AGENTS,
      multiple: true,
    },
    with: {
      type: "enum",
      value: "LIST",
      description: "comma-separated optional components to install too (ruflo)",
      choices: LOCKED_COMPONENTS,
      multiple: true,
    },
  },
  async run(ctx) {
    const requested = ctx.options.agents;
    const agents = requested.length > 0 ? [...new Set(requested)] : [...AGENTS];
    const result = await setup(deps(ctx), agents, [...new Set(ctx.options.with)]);
    ctx.out.data(result, (r) =>
      [
        formatTable(
          ["NAME", "STATUS", "VERSION", "PATH"],
          [
            ...r.agents.map((row) => [row.agent, row.status, row.version ?? "-", row.path]),
            ...r.components.map((row) => [row.component, row.status, row.version ?? "-", row.path]),
          ],
        ),
        "",
        `managed agents are linked in ${r.bin_dir}; ownership recorded in ${r.manifest}`,
      ].join("\n"),
    );
    return 0;
  },
});

export const updateCommand = defineCommand({
  name: "update",
  summary:
    "Move managed agents and ivoai's data to this build's catalogue (with --check: only say what would change)",
  description:
    "Snapshots the files it changes, migrates ivoai's data in order, installs a new generation, switches to it " +
    "atomically and runs a doctor check; any failure rolls everything back. 'ivoai rollback' undoes a good update.",
  json: true,
  options: { check: { type: "boolean", description: "report what would change and change nothing" } },
  async run(ctx) {
    const d = deps(ctx);
    const renderProbe = (probe: Awaited<ReturnType<typeof probeUpdate>>["probe"]) =>
      [
        formatTable(
          ["NAME", "INSTALLED", "AVAILABLE", "CHANGE"],
          [
            ...probe.agents.map((row) => [row.agent, row.installed, row.available, row.change]),
            ...probe.components.map((row) => [row.component, row.installed, row.available, row.change]),
          ],
          "no managed agents",
        ),
        `data version ${probe.data.version} → ${probe.data.target}${probe.data.migrations.map((m) => `\n  migration ${m.id}: ${m.description}`).join("")}`,
        probe.up_to_date ? "up to date" : "",
      ]
        .filter(Boolean)
        .join("\n");
    if (ctx.options.check === true) {
      // Nothing installed is an answer to "what would change", not a failure to check.
      if (!(await readManifest(d.paths.stateDir))) {
        const next = ["ivoai setup"];
        ctx.out.data(
          { installed: false, up_to_date: null, next },
          () => "nothing is installed yet: run 'ivoai setup' to install the pinned agent CLIs",
        );
        return 0;
      }
      const { probe } = await probeUpdate(d);
      ctx.out.data(probe, renderProbe);
      return 0;
    }
    const result = await update(d);
    ctx.out.data(result, (r) =>
      r.updated
        ? `${renderProbe(r.probe)}\nupdated (snapshot ${r.snapshot}); 'ivoai rollback' returns to the previous state`
        : "already up to date",
    );
    return 0;
  },
});

export const rollbackCommand = defineCommand({
  name: "rollback",
  summary: "Undo the last update: previous agent versions and ivoai's files as they were",
  description:
    "Refuses when config.toml, secrets.json or a session record changed after the update (a server connected " +
    "or a credential rotated since), naming the file; --force restores the old copies anyway.",
  json: true,
  options: {
    force: {
      type: "boolean",
      description: "roll back even if a file changed after the update (loses that change)",
    },
  },
  async run(ctx) {
    const result = await rollback(deps(ctx), { force: ctx.options.force === true });
    ctx.out.data(result, (r) =>
      [
        `rolled back to the state before the last update (snapshot ${r.snapshot})`,
        ...r.agents.map((row) => `  ${row.agent} ${row.version}`),
        ...r.components.map((row) => `  ${row.component} ${row.version}`),
      ].join("\n"),
    );
    return 0;
  },
});

async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}

export const uninstallCommand = defineCommand({
  name: "uninstall",
  summary: "Remove ivoai's data, state and cache (agents it installed included); keep config unless --purge",
  description:
    "Agent CLIs that were already installed, and every vendor login (~/.codex, ~/.claude, OpenCode's auth), " +
    "are never touched. Without --purge, config.toml and secrets.json stay and their location is printed.",
  json: true,
  options: {
    purge: { type: "boolean", description: "also remove the config dir (settings and server credentials)" },
    yes: { type: "boolean", short: "y", description: "do not ask for confirmation" },
  },
  async run(ctx) {
    const paths = clientPaths(ctx.env);
    const purge = ctx.options.purge === true;
    if (ctx.options.yes !== true) {
      if (!process.stdin.isTTY)
        throw new IvoaiError(
          "USAGE",
          "uninstall needs confirmation and there is no terminal to ask on: pass --yes",
        );
      const what = (await planUninstall(paths, purge)).remove;
      if (!(await confirm(`Remove ${what.join(", ")}? [y/N] `))) {
        ctx.out.note("ivoai: nothing removed");
        return 1;
      }
    }
    const result = await uninstall(paths, purge);
    ctx.out.data(result, (r) =>
      [
        r.removed.length ? `removed ${r.removed.join(", ")}` : "nothing of ivoai's was installed",
        ...r.kept.map((k) => `kept ${k.path}: ${k.why}`),
        ...r.pre_existing.map((p) => `left ${p.agent} at ${p.path} alone (it was installed before ivoai)`),
        "vendor logins (~/.codex, ~/.claude, OpenCode's auth) were not touched",
      ].join("\n"),
    );
    return 0;
  },
});

export const installCommands = [setupCommand, updateCommand, rollbackCommand, uninstallCommand];
