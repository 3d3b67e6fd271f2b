// `server systemd render --apply`: the system user, ownership of the tree, the installed and enabled unit.
import { execFile } from "node:child_process";
import { constants, promises as fs } from "node:fs";
import path from "node:path";
import type { ServerPaths } from "../../config/server-paths.js";
import { writeFileAtomic } from "../../shared/atomic-file.js";
import { errnoCode, IvoaiError } from "../../shared/errors.js";
import { logDirOf, type SystemdRender } from "./systemd-units.js";

/** One thing `--apply` does, in order; the plan is pure so that it can be shown and tested. */
export type ApplyStep =
  | { kind: "run"; argv: string[]; unless?: string[] }
  | { kind: "own"; path: string; user: string; group: string; mode?: number; recursive: boolean }
  /** Creates ivoai's own log directory for the service; one that already exists must already be the service's. */
  | { kind: "logdir"; path: string; user: string; group: string; mode: number }
  | { kind: "install"; path: string; content: string };

export const SYSTEMD_UNIT_DIR = "/etc/systemd/system";

/** The steps that make `render` run on this host: users first, then ownership, then the units. */
export function planSystemdApply(render: SystemdRender, paths: ServerPaths, logFile?: string): ApplyStep[] {
  const logDir = logFile === undefined ? undefined : logDirOf(logFile, paths.root);
  const service = { user: render.user, group: render.group };
  const root = { user: "root", group: render.group };
  const steps: ApplyStep[] = [
    { kind: "run", argv: ["groupadd", "--system", render.group], unless: ["getent", "group", render.group] },
    {
      kind: "run",
      argv: [
        "useradd",
        "--system",
        "--no-create-home",
        "--home-dir",
        "/nonexistent",
        "--shell",
        "/usr/sbin/nologin",
        "--gid",
        render.group,
        render.user,
      ],
      unless: ["getent", "passwd", render.user],
    },
    // Configuration: readable by the group, writable by root only.
    { kind: "own", path: paths.etcDir, ...root, mode: 0o750, recursive: false },
    { kind: "own", path: paths.configFile, ...root, mode: 0o640, recursive: false },
    // Secrets: the service user only (init made them 0700 / 0600).
    { kind: "own", path: paths.secretsDir, ...service, mode: 0o700, recursive: true },
    { kind: "own", path: paths.dataDir, ...service, recursive: true },
    { kind: "own", path: paths.runDir, ...service, recursive: true },
  ];
  if (logDir) {
    steps.push({ kind: "logdir", path: logDir, ...service, mode: 0o700 });
  }
  for (const unit of render.units) {
    steps.push({ kind: "install", path: path.join(SYSTEMD_UNIT_DIR, unit.name), content: unit.content });
  }
  steps.push({ kind: "run", argv: ["systemctl", "daemon-reload"] });
  steps.push({
    kind: "run",
    argv: ["systemctl", "enable", "--now", ...render.units.map((unit) => unit.name)],
  });
  return steps;
}

export interface ApplyDeps {
  /** Runs a program; resolves with its exit status and output. */
  run(argv: string[]): Promise<{ code: number; output: string }>;
  progress(text: string): void;
}

export const realApplyDeps = (progress: (text: string) => void): ApplyDeps => ({
  progress,
  run: (argv) =>
    new Promise((resolve, reject) => {
      const [file, ...args] = argv;
      execFile(file ?? "", args, { timeout: 120_000 }, (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : -1) : 0;
        if (error && typeof error.code === "string") {
          reject(
            new IvoaiError("NOT_FOUND", `cannot run ${file}: ${error.code} (is it installed?)`, {
              cause: error,
            }),
          );
          return;
        }
        resolve({ code, output: `${stdout}${stderr}`.trim() });
      });
    }),
});

/** Refuses unless this process runs as root, which every step of the plan needs. */
export function assertRoot(): void {
  if (process.getuid?.() !== 0) {
    throw new IvoaiError(
      "PERMISSION_DENIED",
      "--apply must run as root (it creates the system user, changes ownership and installs units): " +
        "run it with sudo, or drop --apply and install the rendered units yourself",
    );
  }
}

/** Executes a plan as root; stops at the first failing step and names it. */
export async function applySystemdPlan(steps: readonly ApplyStep[], deps: ApplyDeps): Promise<void> {
  assertRoot();
  const ids = async (name: string, db: "passwd" | "group") => {
    const { code, output } = await deps.run(["getent", db, name]);
    if (code !== 0) throw new IvoaiError("NOT_FOUND", `no ${db === "passwd" ? "user" : "group"} ${name}`);
    return Number(output.split(":")[2]);
  };
  for (const step of steps) {
    switch (step.kind) {
      case "run": {
        if (step.unless && (await deps.run(step.unless)).code === 0) continue;
        deps.progress(`running ${step.argv.join(" ")}`);
        const result = await deps.run(step.argv);
        if (result.code !== 0) {
          throw new IvoaiError(
            "INTERNAL",
            `'${step.argv.join(" ")}' failed (exit ${result.code}): ${result.output}`,
          );
        }
        break;
      }
      case "logdir": {
        const uid = await ids(step.user, "passwd");
        deps.progress(`creating ${step.path} for ${step.user}:${step.group}`);
        await makeLogDir(step.path, uid, await ids(step.group, "group"), step.mode);
        break;
      }
      case "own": {
        const uid = step.user === "root" ? 0 : await ids(step.user, "passwd");
        deps.progress(`owning ${step.path} by ${step.user}:${step.group}`);
        await own(step, uid, await ids(step.group, "group"), deps);
        break;
      }
      case "install":
        deps.progress(`installing ${step.path}`);
        await writeFileAtomic(step.path, step.content, { mode: 0o644 });
        break;
    }
  }
}

/**
 * Owns one path without following a symbolic link anywhere: the path is opened O_NOFOLLOW and changed through
 * that descriptor; a tree below it is handed to `chown -R -P`, which walks it descriptor-relative and changes
 * links themselves, never what they point to (the service user owns these trees and could plant links).
 */
async function own(
  step: Extract<ApplyStep, { kind: "own" }>,
  uid: number,
  gid: number,
  deps: ApplyDeps,
): Promise<void> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(step.path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    if (errnoCode(error) === "ENOENT") return;
    if (errnoCode(error) === "ELOOP") {
      throw new IvoaiError("CONFLICT", `refusing to own ${step.path}: it is a symbolic link`);
    }
    throw error;
  }
  try {
    const stat = await handle.stat();
    if (!stat.isDirectory() && !stat.isFile()) {
      throw new IvoaiError("CONFLICT", `refusing to own ${step.path}: not a regular file or directory`);
    }
    if (step.recursive && stat.isDirectory()) {
      const result = await deps.run(["chown", "-R", "-P", "--", `${uid}:${gid}`, step.path]);
      if (result.code !== 0) {
        throw new IvoaiError(
          "INTERNAL",
          `'chown -R ${step.path}' failed (exit ${result.code}): ${result.output}`,
        );
      }
    }
    await handle.chown(uid, gid);
    if (step.mode !== undefined) await handle.chmod(step.mode);
  } finally {
    await handle.close();
  }
}

/** Creates the log directory for the service; one that exists must be a directory the service owns already. */
async function makeLogDir(dir: string, uid: number, gid: number, mode: number): Promise<void> {
  await fs.mkdir(path.dirname(dir), { recursive: true, mode: 0o755 });
  try {
    await fs.mkdir(dir, { mode: 0o700 });
  } catch (error) {
    if (errnoCode(error) !== "EEXIST") throw error;
    const stat = await fs.lstat(dir);
    if (stat.isDirectory() && stat.uid === uid) return;
    throw new IvoaiError(
      "CONFLICT",
      `${dir} exists and is not a directory of the service user: ivoai gives the service only a log ` +
        "directory it creates; remove it, or choose another --log-file",
    );
  }
  const handle = await fs.open(dir, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_DIRECTORY);
  try {
    await handle.chown(uid, gid);
    await handle.chmod(mode);
  } finally {
    await handle.close();
  }
}
