// The official agent CLIs ivoai launches (pinned in the install catalogue), where it finds them, and how each
// reports its login (read-only).
import { promises as fs } from "node:fs";
import path from "node:path";

import { oneLine } from "../../shared/terminal-text.js";
import { runProbe } from "../components/probe.js";
import { type AgentName, COMPILED_CATALOGUE } from "../install/index.js";

export { AGENTS, type AgentName } from "../install/index.js";

/** Versions the contract tests ran against (test/agents.contract.test.ts): the install catalogue's pins. */
export const TESTED_VERSIONS = Object.fromEntries(
  COMPILED_CATALOGUE.agents.map((entry) => [entry.agent, entry.version]),
) as Record<AgentName, string>;

export interface LocatedAgent {
  name: AgentName;
  path: string;
  managed: boolean;
}

/** The executable on PATH, or under ivoai's managed data root (`$XDG_DATA_HOME/ivoai/bin`). */
export async function locateAgent(
  name: AgentName,
  managedBin: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<LocatedAgent | undefined> {
  const found = await findExecutableIn(name, managedBin, env);
  return found ? { name, ...found } : undefined;
}

/** Any executable `name` on PATH or in `managedBin` (e.g. an optional tool such as ruflo). */
export async function findExecutable(
  name: string,
  managedBin: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string | undefined> {
  return (await findExecutableIn(name, managedBin, env))?.path;
}

async function findExecutableIn(
  name: string,
  managedBin: string,
  env: NodeJS.ProcessEnv,
): Promise<{ path: string; managed: boolean } | undefined> {
  const candidates = [
    ...(env.PATH ?? "")
      .split(path.delimiter)
      .filter(Boolean)
      .map((dir) => ({ dir, managed: false })),
    { dir: managedBin, managed: true },
  ];
  for (const { dir, managed } of candidates) {
    const candidate = path.join(dir, name);
    try {
      const stat = await fs.stat(candidate);
      if (!stat.isFile()) continue;
      await fs.access(candidate, fs.constants.X_OK);
      return { path: candidate, managed };
    } catch {
      // keep looking
    }
  }
  return undefined;
}

export type LoginState = "logged_in" | "logged_out" | "unknown";

/**
 * Asks the official CLI itself (`codex login status`, `claude auth status`), bounded by `timeoutMs`; never reads
 * its credential files. A status command that hangs is "unknown: timed out after N s".
 */
export async function loginStatus(
  agent: LocatedAgent,
  env: NodeJS.ProcessEnv = process.env,
  timeoutMs = 10_000,
): Promise<{ state: LoginState; detail: string }> {
  const args =
    agent.name === "codex" ? ["login", "status"] : agent.name === "claude" ? ["auth", "status"] : undefined;
  if (!args) return { state: "unknown", detail: "no status command" };
  const probed = await runProbe(agent.path, args, { timeoutMs, env });
  if (probed.ok) return parseLoginStatus(agent.name, 0, probed.stdout, "");
  if (probed.timedOut) return { state: "unknown", detail: probed.reason };
  const parsed = parseLoginStatus(agent.name, probed.exit, probed.stdout, probed.stderr);
  return probed.exit === null && parsed.state === "unknown" && !parsed.detail
    ? { state: "unknown", detail: summarize(probed.reason) }
    : parsed;
}

/**
 * The login state a status command reported, as words a person reads: Claude Code prints a JSON object
 * (`loggedIn`, `authMethod`, `subscriptionType`…), codex a sentence ("Logged in using ChatGPT"). The state
 * comes from what the CLI said, the exit status (0 in, 1 out; null when it did not exit) only when it said
 * nothing parseable. The detail names the method or plan, never an e-mail address or a key.
 */
export function parseLoginStatus(
  agent: AgentName,
  exit: number | null,
  stdout: string,
  stderr: string,
): { state: LoginState; detail: string } {
  const text = `${stdout}\n${stderr}`.trim();
  const byExit: LoginState = exit === 0 ? "logged_in" : exit === 1 ? "logged_out" : "unknown";
  if (agent === "claude") {
    const report = claudeReport(stdout) ?? claudeReport(stderr);
    if (report) return report;
  }
  // One status line is short; a longer one is cut before the patterns below read it.
  const line = firstLine(text).slice(0, 200);
  if (agent === "codex") {
    if (/^not logged in/i.test(line)) return { state: "logged_out", detail: "" };
    const using = /^logged in using (.+?)(?:\s+-\s+.*)?$/i.exec(line);
    if (using?.[1]) return { state: "logged_in", detail: summarize(using[1].replace(/^an? /i, "")) };
  }
  // Never a raw JSON fragment: an answer the parser did not understand is left out of the detail.
  return { state: byExit, detail: /^[[{]/.test(line) ? "" : summarize(line) };
}

function claudeReport(text: string): { state: LoginState; detail: string } | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (
    typeof value !== "object" ||
    value === null ||
    typeof (value as { loggedIn?: unknown }).loggedIn !== "boolean"
  )
    return undefined;
  const report = value as { loggedIn: boolean; authMethod?: unknown; subscriptionType?: unknown };
  if (!report.loggedIn) return { state: "logged_out", detail: "" };
  const method =
    typeof report.authMethod === "string" && report.authMethod !== "none" ? report.authMethod : "";
  const plan = typeof report.subscriptionType === "string" ? report.subscriptionType : "";
  const detail = [method && `via ${method}`, plan && `${plan} plan`].filter(Boolean).join(", ");
  return { state: "logged_in", detail: summarize(detail) };
}

function firstLine(text: string): string {
  return (
    text
      .split("\n")
      .find((line) => line.trim() !== "")
      ?.trim() ?? ""
  );
}

/** Keeps an account hint out of diagnostics: only the first words, no e-mail addresses. */
/**
 * A status line as a detail a terminal may print: cut before anything else (the e-mail pattern rescans a long run
 * of word characters), no e-mail address, control characters and bidi overrides escaped.
 */
function summarize(text: string): string {
  return oneLine(text.slice(0, 200).replace(/[\w.+-]+@[\w-]+(\.[\w-]+)+/g, "<email>")).slice(0, 120);
}
