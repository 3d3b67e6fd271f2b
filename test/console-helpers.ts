// The web console's sign-in codes for tests and benchmarks: `ivoai server console login --json`.
import { runIvoai } from "./helpers.js";

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
