// Installs the fake official CLIs (`codex`, `claude`) as executables in a test's directory, with their
// script, log and state paths, for tests that drive AUTO against scripted vendors.
import { existsSync } from "node:fs";
import { chmod, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

// Beside this file, or (when a benchmark bundles it elsewhere) under the repository's test/ folder.
const BESIDE = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures");
const FIXTURES = existsSync(path.join(BESIDE, "fake-codex.mjs")) ? BESIDE : path.resolve("test/fixtures");

/** One invocation of a fake CLI turn, as the fake logged it (see test/fixtures/fake-codex.mjs). */
export interface FakeLogLine {
  executor: "codex" | "claude";
  pid: number;
  argv: string[];
  role: string | null;
  task: string | null;
  cwd: string;
  resume: string | null;
  env_ivoai: string[];
  mcp_results: { server: string; tool: string; ok: boolean; error?: string; text?: string }[];
  grandchild_pid?: number;
  thread_id: string;
  /** The CLI was started read-only (codex sandbox read-only, claude permission mode plan). */
  read_only: boolean;
  /** The prompt the CLI received (first 64 KiB). */
  prompt: string;
  started_at: number;
  /** When the fake exited; null while it runs or when it was killed. */
  ended_at: number | null;
  /** The usage the turn's final event reported, as ivoai should read it; null when it reported none. */
  usage: FakeUsage | null;
}

/** Tokens (input includes the cached ones) and price (claude's only) one fake turn reported. */
export interface FakeUsage {
  input_tokens: number;
  cached_input_tokens: number;
  output_tokens: number;
  cost_usd: number | null;
}

/** The script both fakes read (format: the header of test/fixtures/fake-codex.mjs). */
export type FakeScript = { codex?: Record<string, unknown>; claude?: Record<string, unknown> };

export interface FakeClis {
  /** Holds the `codex` and `claude` executables. */
  binDir: string;
  /** Absolute paths of the two executables. */
  paths: { codex: string; claude: string };
  /** Replaces the script (read again by every invocation) and starts every role's steps from the first. */
  script(script: FakeScript): Promise<void>;
  /** Every turn logged since the last reset, in order. */
  log(): Promise<FakeLogLine[]>;
  /** Starts a fresh log (the fakes seen so far are still remembered by killAll). */
  reset(): Promise<void>;
  /** SIGKILLs the process group of every fake turn ever logged (hung ones included). */
  killAll(): Promise<void>;
  /** PATH (binDir first) and the FAKE_AUTO_* variables; merge into the environment of what runs the CLIs. */
  env: Record<string, string>;
}

export async function installFakeClis(dir: string): Promise<FakeClis> {
  const binDir = path.join(dir, "bin");
  await mkdir(binDir, { recursive: true });
  const scriptPath = path.join(dir, "fake-auto-script.json");
  const logPath = path.join(dir, "fake-auto-log.jsonl");
  const statePath = path.join(dir, "fake-auto-state");
  await mkdir(statePath, { recursive: true });
  await writeFile(scriptPath, "{}\n");
  const seen = new Set<number>();
  const paths = { codex: path.join(binDir, "codex"), claude: path.join(binDir, "claude") };
  for (const name of ["codex", "claude"] as const) {
    const target = path.join(FIXTURES, `fake-${name}.mjs`);
    await writeFile(paths[name], `#!/bin/sh\nexec ${quote(process.execPath)} ${quote(target)} "$@"\n`);
    await chmod(paths[name], 0o755);
  }
  return {
    binDir,
    paths,
    async script(script) {
      await rm(statePath, { recursive: true, force: true });
      await mkdir(statePath, { recursive: true });
      await writeFile(scriptPath, JSON.stringify(script));
    },
    log: () => readLog(logPath),
    async reset() {
      for (const line of await readLog(logPath)) seen.add(line.pid);
      await writeFile(logPath, "");
    },
    async killAll() {
      for (const line of await readLog(logPath)) seen.add(line.pid);
      for (const pid of seen) {
        try {
          process.kill(-pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
    },
    env: {
      PATH: `${binDir}${path.delimiter}${process.env.PATH ?? ""}`,
      FAKE_AUTO_SCRIPT: scriptPath,
      FAKE_AUTO_LOG: logPath,
      FAKE_AUTO_STATE: statePath,
    },
  };
}

/** Turn records with their end time and reported usage merged in (those lines carry only the pid and it). */
async function readLog(logPath: string): Promise<FakeLogLine[]> {
  let text: string;
  try {
    text = await readFile(logPath, "utf8");
  } catch {
    return [];
  }
  const lines: FakeLogLine[] = [];
  for (const raw of text.split("\n")) {
    if (raw.trim() === "") continue;
    const entry = JSON.parse(raw) as
      | (FakeLogLine & { end?: undefined; reported?: undefined })
      | { end: true; reported?: undefined; pid: number; ended_at: number }
      | { reported: true; end?: undefined; pid: number; usage: FakeUsage };
    if (entry.end === true) {
      const turn = lines.findLast((line) => line.pid === entry.pid);
      if (turn) turn.ended_at = entry.ended_at;
    } else if (entry.reported === true) {
      const turn = lines.findLast((line) => line.pid === entry.pid);
      if (turn) turn.usage = entry.usage;
    } else if ("executor" in entry) {
      lines.push({ ...entry, ended_at: null, usage: null });
    }
  }
  return lines;
}

const quote = (value: string) => `'${value.replace(/'/g, `'\\''`)}'`;
