// `server systemd render --apply`: the system user, ownership of the tree, the installed and enabled unit.
import { execFile } from "node:child_process";
import { promises as fs } from "node:fs";
import path from "node:path";
import type { ServerPaths } from "../../config/server-paths.js";
import { writeFileAtomic } from "../../shared/atomic-file.js";
import { errnoCode, IvoaiError } from "../../shared/errors.js";
import type { SystemdRender } from "./systemd-units.js";

/** One thing `--apply` does, in order; the plan is pure so that it can be shown and tested. */
export type ApplyStep =
  | { kind: "run"; argv: string[]; unless?: string[] }
  | { kind: "own"; path: string; user: string; group: string; mode?: number; recursive: boolean }
  | { kind: "mkdir"; path: string }
  | { kind: "install"; path: string; content: string };

export const SYSTEMD_UNIT_DIR = "/etc/systemd/system";

/** The steps that make `render` run on this host: users first, then ownership, then the units. */
export function planSystemdApply(render: SystemdRender, paths: ServerPaths, logDir?: string): ApplyStep[] {
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
    steps.push(
      { kind: "mkdir", path: logDir },
      { kind: "own", path: logDir, ...service, mode: 0o700, recursive: true },
    );
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
      case "mkdir":
        await fs.mkdir(step.path, { recursive: true, mode: 0o700 });
        break;
      case "own": {
        const uid = step.user === "root" ? 0 : await ids(step.user, "passwd");
        deps.progress(`owning ${step.path} by ${step.user}:${step.group}`);
        await own(step.path, uid, await ids(step.group, "group"), step.recursive);
        if (step.mode !== undefined) await fs.chmod(step.path, step.mode);
        break;
      }
      case "install":
        deps.progress(`installing ${step.path}`);
        await writeFileAtomic(step.path, step.content, { mode: 0o644 });
        break;
    }
  }
}

/** lchown, depth first, never following a symbolic link out of the tree. */
async function own(target: string, uid: number, gid: number, recursive: boolean): Promise<void> {
  let stat: Awaited<ReturnType<typeof fs.lstat>>;
  try {
    stat = await fs.lstat(target);
  } catch (error) {
    if (errnoCode(error) === "ENOENT") return;
    throw error;
  }
  if (recursive && stat.isDirectory()) {
    for (const entry of await fs.readdir(target)) await own(path.join(target, entry), uid, gid, true);
  }
  await fs.lchown(target, uid, gid);
}
