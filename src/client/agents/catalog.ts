// The official agent CLIs ivoai launches (pinned in the install catalogue), where it finds them, and how each
// reports its login (read-only).
import { execFile } from "node:child_process";
import { promises as fs } from "node:fs";
import path from "node:path";

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

/** Asks the official CLI itself (`codex login status`, `claude auth status`); never reads its credential files. */
export async function loginStatus(
  agent: LocatedAgent,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ state: LoginState; detail: string }> {
  const args =
    agent.name === "codex" ? ["login", "status"] : agent.name === "claude" ? ["auth", "status"] : undefined;
  if (!args) return { state: "unknown", detail: "no status command" };
  return new Promise((resolve) => {
    execFile(agent.path, args, { timeout: 10_000, env }, (error, stdout, stderr) => {
      const text = `${stdout}${stderr}`.trim().split("\n")[0] ?? "";
      const code = (error as { code?: unknown } | null)?.code;
      if (!error) resolve({ state: "logged_in", detail: summarize(text) });
      else if (code === 1) resolve({ state: "logged_out", detail: summarize(text) });
      else resolve({ state: "unknown", detail: summarize(text || (error as Error).message) });
    });
  });
}

/** Keeps an account hint out of diagnostics: only the first words, no e-mail addresses. */
function summarize(text: string): string {
  return text.replace(/[\w.+-]+@[\w-]+(\.[\w-]+)+/g, "<email>").slice(0, 120);
}
