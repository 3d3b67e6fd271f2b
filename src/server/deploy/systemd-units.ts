// systemd units for the server (seed 000 "Runtime e persistência"), rendered as a pure function of the paths.
import path from "node:path";
import { serverPaths } from "../../config/server-paths.js";
import { IvoaiError } from "../../shared/errors.js";

/** The server's system user and group. One user: see UNIT_HEADER for why. */
export const SERVICE_USER = "ivoai-gateway";
export const SERVICE_GROUP = "ivoai";
export const UNIT_NAME = "ivoai-gateway.service";

export interface SystemdRenderOptions {
  /** The server tree root (`/` in production). */
  root: string;
  /** Absolute path of the node binary. */
  nodePath: string;
  /** Absolute path of the installed ivoai entry (dist/ivoai.mjs). */
  entryPath: string;
  /** Log to this file (rotated by size) instead of journald. */
  logFile?: string;
  /** ivoai's version, named in the header. */
  version: string;
}

export interface RenderedUnit {
  name: string;
  content: string;
}

export interface SystemdRender {
  units: RenderedUnit[];
  user: string;
  group: string;
  /** The only paths the service may write. */
  read_write_paths: string[];
  /** Problems that would stop the unit from working as rendered. */
  warnings: string[];
}

// systemd splits ExecStart on spaces and expands % and $: accept only paths that need no quoting.
const PLAIN_PATH = /^\/[A-Za-z0-9._+@/-]*$/;

function checkPath(value: string, what: string): string {
  if (!PLAIN_PATH.test(value) || value.split("/").includes("..")) {
    throw new IvoaiError(
      "USAGE",
      `${what} '${value}' must be an absolute path of letters, digits and . _ + @ - / (systemd would split or expand it)`,
    );
  }
  return path.normalize(value);
}

const UNDER = (dir: string, parent: string) => dir === parent || dir.startsWith(`${parent}/`);

/**
 * The directory a --log-file lives in, which the service may write and `--apply` creates for it: it must be a
 * directory of ivoai's own (named ivoai, like /var/log/ivoai), never a shared one such as /var/log or /etc,
 * and never the configuration tree.
 */
export function logDirOf(logFile: string, root: string): string {
  const file = checkPath(logFile, "--log-file");
  const dir = path.dirname(file);
  const paths = serverPaths(checkPath(root, "--root"));
  if (path.basename(dir) !== "ivoai" || UNDER(dir, paths.etcDir) || UNDER(paths.etcDir, dir)) {
    throw new IvoaiError(
      "USAGE",
      `--log-file '${logFile}' must be in a directory of its own named ivoai (e.g. /var/log/ivoai/server.log): ` +
        `the service may write that whole directory, and --apply gives it to ${SERVICE_USER}`,
    );
  }
  return dir;
}

const UNIT_HEADER = (
  version: string,
) => `# Rendered by 'ivoai server systemd render' (ivoai ${version}); render again rather than edit.
#
# One unit and one user. ivoai serves gateway, context and memory from ONE process today, and a process
# runs as one uid: a second user (seed 000's ivoai-context) would own no process and isolate nothing,
# while granting it the context data would only widen access. So the service runs as the no-login system
# user ${SERVICE_USER} in group ${SERVICE_GROUP}, the seed's names, and splitting context into its own
# process later adds the ivoai-context user and unit beside this one.
# The secrets tree (etc/ivoai/secrets, 0700) belongs to ${SERVICE_USER}: the server reads its TLS key there,
# and no other account (nor anything else in group ${SERVICE_GROUP}) can read it.
`;

/** Renders the unit(s) for the server of `options.root`. */
export function renderSystemdUnits(options: SystemdRenderOptions): SystemdRender {
  const root = checkPath(options.root, "--root");
  const nodePath = checkPath(options.nodePath, "the node binary");
  const entryPath = checkPath(options.entryPath, "the ivoai entry (--exec)");
  const logFile = options.logFile === undefined ? undefined : checkPath(options.logFile, "--log-file");
  const logDir = logFile === undefined ? undefined : logDirOf(logFile, options.root);
  const paths = serverPaths(root);
  const production = root === "/";
  const warnings: string[] = [];

  // In production /run is a tmpfs emptied at boot: systemd creates /run/ivoai for each start.
  const readWrite = [paths.dataDir, ...(production ? [] : [paths.runDir])];
  if (logDir) readWrite.push(logDir);
  const seen = [root, nodePath, entryPath, ...readWrite];
  const underHome = seen.some((p) => ["/home", "/root", "/run/user"].some((home) => UNDER(p, home)));
  const hidden = seen.filter((p) => ["/tmp", "/var/tmp"].some((tmp) => UNDER(p, tmp)));
  if (hidden.length > 0) {
    warnings.push(`${hidden[0]} is under a temporary directory, which PrivateTmp=yes hides from the service`);
  }
  if (underHome) warnings.push("a path is under a home directory: ProtectHome=read-only instead of yes");

  const execStart = [nodePath, entryPath, "server", "start", "--root", root];
  if (logFile) execStart.push("--log-file", logFile);

  const lines = [
    UNIT_HEADER(options.version),
    "[Unit]",
    "Description=ivoai knowledge server (gateway, context and memory in one process)",
    "After=network-online.target",
    "Wants=network-online.target",
    "",
    "[Service]",
    "Type=exec",
    `User=${SERVICE_USER}`,
    `Group=${SERVICE_GROUP}`,
    `ExecStart=${execStart.join(" ")}`,
    "Restart=on-failure",
    "RestartSec=5s",
    // The server drains in-flight requests on SIGTERM (limits.drain_timeout_ms) before it exits.
    "TimeoutStopSec=60s",
    "UMask=0077",
    ...(production ? ["RuntimeDirectory=ivoai", "RuntimeDirectoryMode=0750"] : []),
    "",
    "# Privileges: none to gain, none to keep.",
    "NoNewPrivileges=yes",
    "CapabilityBoundingSet=",
    "AmbientCapabilities=",
    "RestrictSUIDSGID=yes",
    "LockPersonality=yes",
    "RestrictRealtime=yes",
    "RestrictNamespaces=yes",
    "RemoveIPC=yes",
    "KeyringMode=private",
    "",
    "# File system: read-only everywhere except the server's own data.",
    "ProtectSystem=strict",
    "PrivateMounts=yes",
    `ReadWritePaths=${readWrite.join(" ")}`,
    `ProtectHome=${underHome ? "read-only" : "yes"}`,
    "PrivateTmp=yes",
    "PrivateDevices=yes",
    "DevicePolicy=closed",
    "ProtectProc=invisible",
    "ProcSubset=pid",
    "ProtectKernelTunables=yes",
    "ProtectKernelModules=yes",
    "ProtectKernelLogs=yes",
    "ProtectControlGroups=yes",
    "ProtectClock=yes",
    "ProtectHostname=yes",
    "PrivateUsers=yes",
    "",
    "# Network: IP for clients, Unix sockets for local IPC.",
    "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX",
    "",
    "# System calls: what a service needs. No MemoryDenyWriteExecute: V8's JIT writes executable memory.",
    "SystemCallArchitectures=native",
    "SystemCallFilter=@system-service",
    "SystemCallFilter=~@privileged @resources",
    "SystemCallErrorNumber=EPERM",
    "",
    "[Install]",
    "WantedBy=multi-user.target",
    "",
  ];
  return {
    units: [{ name: UNIT_NAME, content: lines.join("\n") }],
    user: SERVICE_USER,
    group: SERVICE_GROUP,
    read_write_paths: readWrite,
    warnings,
  };
}
