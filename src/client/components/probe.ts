// Bounded probes of external programs (an agent's --version, a compression preflight, ruflo --version): each
// runs in its own process group, is ended with it when its time is up, and says why it failed in words a
// person reads ("not installed", "timed out after 5 s"), never Node's "Command failed: …".
import { spawn } from "node:child_process";

/** What one probe found: its first line of output, or why it did not pass. */
export type ProbeOutcome =
  | { ok: true; stdout: string; exit: 0 }
  | { ok: false; reason: string; exit: number | null; stdout: string; stderr: string; timedOut: boolean };

/** How a timeout reads in every row and plan: "timed out after 5 s". */
export function timedOutAfter(timeoutMs: number): string {
  const seconds = timeoutMs / 1000;
  return `timed out after ${Number.isInteger(seconds) ? seconds : seconds.toFixed(1)} s`;
}

const OUTPUT_LIMIT = 64 * 1024;

/**
 * Runs `file args` with a minimal environment (PATH and HOME unless `env` is given) for at most `timeoutMs`.
 * A program that hangs (or leaves a child holding its pipes) is killed with its process group at the deadline
 * and the probe settles then, not when the pipes close.
 */
export function runProbe(
  file: string,
  args: readonly string[],
  options: { timeoutMs: number; env?: NodeJS.ProcessEnv },
): Promise<ProbeOutcome> {
  return new Promise((resolve) => {
    let stdout = "";
    let stderr = "";
    let settled = false;
    const settle = (outcome: ProbeOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const env = options.env ?? { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" };
    const child = spawn(file, [...args], { env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    const timer = setTimeout(() => {
      killGroup(child.pid);
      settle({
        ok: false,
        reason: timedOutAfter(options.timeoutMs),
        exit: null,
        stdout,
        stderr,
        timedOut: true,
      });
    }, options.timeoutMs);
    child.stdout.on("data", (chunk: Buffer) => {
      if (stdout.length < OUTPUT_LIMIT) stdout += chunk.toString("utf8");
    });
    child.stderr.on("data", (chunk: Buffer) => {
      if (stderr.length < OUTPUT_LIMIT) stderr += chunk.toString("utf8");
    });
    child.on("error", (error: NodeJS.ErrnoException) => {
      const reason =
        error.code === "ENOENT"
          ? "not installed"
          : error.code === "EACCES"
            ? "not executable"
            : error.message;
      settle({ ok: false, reason, exit: null, stdout, stderr, timedOut: false });
    });
    child.on("close", (code, signal) => {
      if (code === 0) return settle({ ok: true, stdout: stdout.trim(), exit: 0 });
      const said = firstLine(stderr) || firstLine(stdout);
      const how = signal ? `ended by ${signal}` : `exited with status ${code}`;
      settle({
        ok: false,
        reason: said ? `${how}: ${said}` : how,
        exit: code,
        stdout,
        stderr,
        timedOut: false,
      });
    });
  });
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // already gone
  }
}

/** The first non-empty line of a program's output, cut to a row's width. */
export function firstLine(text: string): string {
  return (
    text
      .split("\n")
      .find((line) => line.trim() !== "")
      ?.trim()
      .slice(0, 120) ?? ""
  );
}
