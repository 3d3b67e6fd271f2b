// Another revision of ivoai, built for an A/B benchmark beside this tree: checked out in a temporary git worktree
// (node_modules linked to this tree's), built there, its dist/ kept under the temp dir by commit (later runs reuse
// it) and the worktree removed. Its server runs as a child process like this tree's, on a server tree of its own.
import { execFile, spawn } from "node:child_process";
import { cp, mkdir, readFile, realpath, rename, rm, stat, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface BuiltRevision {
  /** The full commit id, or "working tree" for this checkout. */
  commit: string;
  /** What a report calls it: the short commit and its subject. */
  label: string;
  /** The short commit alone (a table cell), "+ changes" after it for a dirty tree. */
  short: string;
  bin: string;
}

const git = async (args: readonly string[], cwd = process.cwd()) =>
  (await run("git", [...args], { cwd, maxBuffer: 1 << 24 })).stdout.trim();

/** This checkout's built binary (the bench runner built it), labelled with HEAD and whether the tree is dirty. */
export async function currentRevision(): Promise<BuiltRevision> {
  const head = await git(["log", "-1", "--format=%h %s"]);
  // A results file the bench itself wrote does not make the build differ from HEAD.
  const dirty =
    (await git(["status", "--porcelain", "--untracked-files=no", "--", ".", ":!bench/results"])).length > 0;
  return {
    commit: "working tree",
    label: `${head.slice(0, 60)}${dirty ? " + uncommitted changes" : ""}`,
    short: `${head.split(" ")[0]}${dirty ? " + changes" : ""}`,
    bin: path.resolve("dist/ivoai.mjs"),
  };
}

/** `revision` built once per commit (a few tens of seconds), then reused from the temp dir. */
export async function buildRevision(revision: string): Promise<BuiltRevision> {
  const commit = await git(["rev-parse", "--verify", `${revision}^{commit}`]);
  const label = (await git(["log", "-1", "--format=%h %s", commit])).slice(0, 60);
  const short = label.split(" ")[0] as string;
  const cache = path.join(tmpdir(), "ivoai-bench-revisions", commit);
  const bin = path.join(cache, "dist/ivoai.mjs");
  if (await stat(bin).catch(() => undefined)) return { commit, label, short, bin };
  const work = path.join(tmpdir(), `ivoai-bench-worktree-${commit.slice(0, 12)}-${process.pid}`);
  await git(["worktree", "add", "--detach", work, commit]);
  try {
    await symlink(await realpath("node_modules"), path.join(work, "node_modules"));
    process.stderr.write(`building ${label} in ${work}\n`);
    await run(process.execPath, ["scripts/build.mjs"], { cwd: work, maxBuffer: 1 << 24 });
    // dist/ and what it needs at run time (node_modules for better-sqlite3), renamed into place whole.
    const partial = `${cache}.${process.pid}.partial`;
    await mkdir(partial, { recursive: true });
    await cp(path.join(work, "dist"), path.join(partial, "dist"), { recursive: true });
    await cp(path.join(work, "package.json"), path.join(partial, "package.json"));
    await symlink(await realpath("node_modules"), path.join(partial, "node_modules"));
    await rename(partial, cache);
  } finally {
    await git(["worktree", "remove", "--force", work]).catch(() =>
      rm(work, { recursive: true, force: true }),
    );
  }
  return { commit, label, short, bin };
}

export interface RevisionServer {
  url: string;
  pid: number;
  /** Seconds from spawn to the ready line (the memory index is loaded before it). */
  startSeconds: number;
  /** Resident memory of the server process now, in MiB (undefined without /proc). */
  rssMiB(): Promise<number | undefined>;
  stop(): Promise<void>;
}

/** Runs `bin` with `args` to completion; its stdout, or an error with its stderr. */
export async function runBin(bin: string, args: readonly string[]): Promise<string> {
  return (await run(process.execPath, [bin, ...args], { maxBuffer: 1 << 24 })).stdout;
}

/** `ivoai server start` of `bin` on `root`, resolved at its ready line. */
export function startRevisionServer(bin: string, root: string): Promise<RevisionServer> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, "server", "start", "--root", root], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let errors = "";
    child.stderr.on("data", (chunk) => (errors = `${errors}${chunk}`.slice(-4000)));
    const exited = new Promise<void>((done) => child.once("exit", () => done()));
    let ready = false;
    createInterface({ input: child.stdout }).once("line", (line) => {
      ready = true;
      const pid = child.pid as number;
      resolve({
        url: (JSON.parse(line) as { url: string }).url,
        pid,
        startSeconds: (performance.now() - started) / 1000,
        async rssMiB() {
          const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => undefined);
          const kb = status?.match(/^VmRSS:\s+(\d+) kB/m)?.[1];
          return kb === undefined ? undefined : Number(kb) / 1024;
        },
        stop: async () => {
          child.kill("SIGTERM");
          await exited;
        },
      });
    });
    void exited.then(() => {
      if (!ready) reject(new Error(`${bin} server exited before ready: ${errors}`));
    });
  });
}
