// `ivoai server status|stop` and `ivoai server systemd render`: operating a server installed on a host.
import { realpathSync } from "node:fs";
import path from "node:path";
import { type ServerPaths, serverPaths } from "../../config/server-paths.js";
import {
  applySystemdPlan,
  assertRoot,
  planSystemdApply,
  realApplyDeps,
} from "../../server/deploy/systemd-apply.js";
import { renderSystemdUnits } from "../../server/deploy/systemd-units.js";
import { untrustedExecPath } from "../../server/deploy/trusted-exec.js";
import { writeUnitFiles } from "../../server/deploy/unit-files.js";
import { type ServerStatus, serverStatus } from "../../server/ops/status.js";
import { type StopOutcome, stopServer } from "../../server/ops/stop.js";
import { IvoaiError } from "../../shared/errors.js";
import { IVOAI_VERSION } from "../../shared/version.js";
import { type CommandSpec, defineCommand, type GroupSpec } from "../command.js";
import { ROOT_OPTION, rootOf } from "./server-common.js";

/** LSB's "program is not running" status, so scripts can tell a stopped server from a failure. */
const NOT_RUNNING = 3;

const count = (value: number | null, noun: string) =>
  value === null ? `${noun} unknown` : `${value} ${noun}`;

function renderStatus(status: ServerStatus): string {
  const head = status.running
    ? `ivoai server for ${status.root}: running (pid ${status.pid}), ${status.ready.replace("_", " ")}`
    : `ivoai server for ${status.root}: not running`;
  const { counts } = status;
  return [
    head,
    ...(status.url
      ? [
          `  url:        ${status.url}${status.public_url !== status.url ? ` (public ${status.public_url})` : ""}`,
        ]
      : []),
    ...(status.started_at ? [`  started:    ${status.started_at}`] : []),
    `  versions:   server ${status.versions.server ?? "-"}, cli ${status.versions.cli}, protocol ${status.versions.protocol}`,
    `  clients:    ${counts.clients ? `${counts.clients.active} active (${counts.clients.total} total)` : "unknown"}`,
    `  context:    ${count(counts.connectors, "connectors")}, ${count(counts.documents, "documents")}, ${count(counts.chunks, "chunks")}`,
    `  approvals:  ${count(counts.pending_approvals, "pending")}`,
    ...(status.degraded.length > 0 ? [`  degraded:   ${status.degraded.join(", ")}`] : []),
    ...(status.stale_pid_file ? [`  removed a stale pid file (${status.stale_pid_file})`] : []),
  ].join("\n");
}

export const serverStatusCommand = defineCommand({
  name: "status",
  summary: "Say whether the server for this root runs, and what it holds",
  description:
    "Reads run/ivoai/server.pid, asks the running server's /ready, and counts clients, connectors, documents,\n" +
    "chunks and pending approvals from the stores. A stale pid file (dead process, reused pid) is removed.\n" +
    "Exit status: 0 running, 3 not running, 1 on error.",
  json: true,
  options: ROOT_OPTION,
  async run(ctx) {
    const status = await serverStatus(serverPaths(rootOf(ctx)));
    ctx.out.data(status, renderStatus);
    return status.running ? 0 : NOT_RUNNING;
  },
});

/** What `server stop` reaches beyond the process: the server's process, through its pid file. */
export interface StopCommandDeps {
  stopServer(paths: ServerPaths, options: { timeoutMs: number }): Promise<StopOutcome>;
}

/** `server stop` on `deps` (the real signal and wait unless a test passes a fake). */
export function createServerStopCommand(deps: StopCommandDeps = { stopServer }): CommandSpec {
  return defineCommand({
    name: "stop",
    summary: "Stop the server for this root gracefully (SIGTERM through the pid file) and wait for it",
    description:
      "In-flight requests drain before the server exits. Nothing running is not an error; a stale pid file\n" +
      "is removed. Under systemd, prefer 'systemctl stop ivoai-gateway'.",
    json: true,
    options: {
      ...ROOT_OPTION,
      timeout: { type: "duration", default: "30s", description: "how long to wait for the exit" },
    },
    async run(ctx) {
      const timeoutMs = ctx.options.timeout;
      const outcome = await deps.stopServer(serverPaths(rootOf(ctx)), { timeoutMs });
      ctx.out.data(outcome, (o) =>
        o.outcome === "stopped"
          ? `stopped the server for ${o.root} (pid ${o.pid}) in ${(o.waited_ms / 1000).toFixed(1)}s`
          : `no server is running for ${o.root}${o.stale_pid_file ? ` (removed a stale pid file: ${o.stale_pid_file})` : ""}`,
      );
      return 0;
    },
  });
}

export const serverStopCommand = createServerStopCommand();

/** The installed ivoai entry this process runs from, through npm's bin symlink. */
function runningEntry(): string {
  const entry = process.argv[1];
  if (!entry)
    throw new IvoaiError("USAGE", "cannot tell where ivoai is installed: pass --exec /ABSOLUTE/ivoai.mjs");
  return realpathSync(entry);
}

function absolute(value: string, flag: string): string {
  if (!path.isAbsolute(value))
    throw new IvoaiError("USAGE", `${flag} must be an absolute path, got '${value}'`);
  return value;
}

const renderCommand = defineCommand({
  name: "render",
  summary: "Write the hardened systemd unit for this root's server (and with --apply, install it)",
  description:
    "One unit, ivoai-gateway.service, running as the no-login user ivoai-gateway in group ivoai: the server is\n" +
    "one process (see the unit's comments). Without --out the unit is printed. ExecStart names the node binary\n" +
    "and the ivoai entry this command runs from (override with --node and --exec); they, their package and\n" +
    "every directory above them must be root's and not group/other-writable (a warning, and --apply refuses).\n" +
    "--apply (root only) creates the group and user, sets ownership and modes of the tree, installs the unit\n" +
    "in /etc/systemd/system, then runs 'systemctl daemon-reload' and 'systemctl enable --now'.",
  json: true,
  options: {
    ...ROOT_OPTION,
    out: {
      type: "string",
      value: "DIR",
      description: "write the unit file(s) into DIR (created 0755 if missing; a symbolic link is refused)",
    },
    exec: {
      type: "string",
      value: "PATH",
      description: "absolute path of the installed ivoai entry (dist/ivoai.mjs)",
    },
    node: {
      type: "string",
      value: "PATH",
      description: "absolute path of the node binary (default: this one)",
    },
    "log-file": {
      type: "string",
      value: "PATH",
      description:
        "log to this rotated file instead of journald; it must be in a directory named ivoai (/var/log/ivoai/server.log)",
    },
    apply: {
      type: "boolean",
      description: "as root: create the user, own the tree, install and enable the unit",
    },
  },
  async run(ctx) {
    const root = rootOf(ctx);
    const apply = ctx.options.apply === true;
    if (apply) assertRoot();
    const exec = ctx.options.exec;
    const node = ctx.options.node;
    const logFile = ctx.options["log-file"];
    const nodePath = node ? absolute(node, "--node") : realpathSync(process.execPath);
    const entryPath = exec ? absolute(exec, "--exec") : runningEntry();
    const render = renderSystemdUnits({
      root,
      nodePath,
      entryPath,
      ...(logFile ? { logFile: absolute(logFile, "--log-file") } : {}),
      version: IVOAI_VERSION,
    });
    for (const warning of render.warnings) ctx.out.note(`warning: ${warning}`);
    // systemd starts ExecStart for the service at every boot: code another account can change runs there next.
    const untrusted = await untrustedExecPath(nodePath, entryPath);
    if (untrusted) {
      const why =
        `${untrusted.path} is ${untrusted.reason}, so that account could change the code the unit runs: ` +
        "install ivoai globally as root (sudo npm install -g ivoai) or pass --node and --exec paths that only root can change";
      if (apply) throw new IvoaiError("PERMISSION_DENIED", `refusing --apply: ${why}`);
      ctx.out.note(`warning: ${why}`);
    }
    const out = ctx.options.out;
    const written: string[] = [];
    if (out) written.push(...(await writeUnitFiles(out, render.units)));
    if (apply) {
      if (render.warnings.some((warning) => warning.includes("PrivateTmp"))) {
        throw new IvoaiError(
          "USAGE",
          "refusing --apply: the unit could not see its files (see the warning above)",
        );
      }
      const plan = planSystemdApply(render, serverPaths(root), logFile);
      await applySystemdPlan(
        plan,
        realApplyDeps((text) => ctx.out.note(text)),
      );
    }
    const result = {
      ...render,
      units: render.units.map((unit, i) => ({ ...unit, path: written[i] ?? null })),
      applied: apply,
    };
    ctx.out.data(result, (r) =>
      out || apply
        ? [
            ...written.map((file) => `wrote ${file}`),
            ...(apply ? [`installed and started ${r.units.map((unit) => unit.name).join(", ")}`] : []),
          ].join("\n")
        : r.units.map((unit) => unit.content).join("\n"),
    );
    return 0;
  },
});

export const serverSystemdGroup: GroupSpec = {
  kind: "group",
  name: "systemd",
  summary: "Run the server as a hardened systemd service",
  children: [renderCommand],
};
