// The web console's sign-in for tests and benchmarks: codes from `ivoai server console login --json`, their
// exchange for a session cookie, and the server tree's console settings.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import type { ConsoleSession } from "../src/protocol/console-api.js";
import { initWithDocs, runIvoai } from "./helpers.js";

export interface ConsoleLogin {
  id: string;
  code: string;
  /** The sign-in link: the public URL with the code in its fragment. */
  url: string;
  role: string;
  name: string;
  scopes: string[];
  expires_at: string;
}

export async function consoleLogin(root: string, ...args: string[]): Promise<ConsoleLogin> {
  const result = await runIvoai(["server", "console", "login", "--root", root, "--json", ...args]);
  if (result.code !== 0) throw new Error(`console login failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as ConsoleLogin;
}

/** POST /v1/console/session with this body (and headers). */
export function signIn(url: string, body: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${url}/v1/console/session`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
}

/** The session token from a Set-Cookie header. */
export function tokenOf(response: Response): string {
  const match = /^ivoai_console=([^;]+);/.exec(response.headers.get("set-cookie") ?? "");
  if (!match?.[1]) throw new Error(`no session cookie: ${response.headers.get("set-cookie")}`);
  return match[1];
}

/** A signed-in console session on the server of `root`: its token and the session the sign-in answered. */
export async function consoleSession(
  url: string,
  root: string,
  ...args: string[]
): Promise<{ token: string; body: ConsoleSession }> {
  const { code } = await consoleLogin(root, ...args);
  const response = await signIn(url, JSON.stringify({ code }));
  if (response.status !== 200) throw new Error(`console sign-in answered ${response.status}`);
  return { token: tokenOf(response), body: (await response.json()) as ConsoleSession };
}

/** Sets `[console] idle_timeout` in the tree's server.toml (before the server starts). */
export async function setIdleTimeout(root: string, value: string): Promise<void> {
  const file = path.join(root, "etc", "ivoai", "server.toml");
  const text = await readFile(file, "utf8");
  const next = text.replace(/idle_timeout = "[^"]*"/, `idle_timeout = "${value}"`);
  if (next === text) throw new Error("no idle_timeout in server.toml");
  await writeFile(file, next);
}

/**
 * A server tree at DIR/server with one tiny document connected (DIR/docs/a.md): what a console test needs
 * before it starts the server. Returns the tree's root.
 */
export async function initTinyServer(dir: string): Promise<string> {
  const docs = path.join(dir, "docs");
  await mkdir(docs, { recursive: true });
  await writeFile(path.join(docs, "a.md"), "# A\n\nalpha\n");
  const root = path.join(dir, "server");
  await initWithDocs(root, docs);
  return root;
}
