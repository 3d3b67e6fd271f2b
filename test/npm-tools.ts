// Installs pinned npm tools that tests drive as real clients (agent CLIs, mcp-remote) into .tmp, once.
import { execFile } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** Returns the folder whose node_modules/.bin holds the tools; reinstalls when the pins changed. */
export async function ensureNpmTools(
  name: string,
  dependencies: Record<string, string>,
  allowScripts: string[] = [],
): Promise<string> {
  const dir = path.resolve(".tmp", name);
  try {
    const pkg = JSON.parse(await readFile(path.join(dir, "package.json"), "utf8")) as {
      dependencies?: Record<string, string>;
    };
    const installed = JSON.parse(
      await readFile(path.join(dir, "node_modules/.package-lock.json"), "utf8"),
    ) as object;
    if (
      installed &&
      Object.entries(dependencies).every(([dep, version]) => pkg.dependencies?.[dep] === version)
    )
      return dir;
  } catch {
    // not installed yet
  }
  await mkdir(dir, { recursive: true });
  await writeFile(
    path.join(dir, "package.json"),
    JSON.stringify({
      name: `ivoai-test-${name}`,
      private: true,
      dependencies,
      allowScripts: Object.fromEntries(allowScripts.map((dep) => [dep, true])),
    }),
  );
  await run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], {
    cwd: dir,
    timeout: 900_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  return dir;
}

/** The official agent CLIs at the versions ivoai pins (install catalogue), their install scripts allowed. */
export async function ensureAgentClis(
  versions: Record<"codex" | "claude" | "opencode", string>,
): Promise<string> {
  const dir = await ensureNpmTools(
    "agent-clis",
    {
      "@openai/codex": versions.codex,
      "@anthropic-ai/claude-code": versions.claude,
      "opencode-ai": versions.opencode,
    },
    ["@openai/codex", "@anthropic-ai/claude-code", "opencode-ai"],
  );
  return path.join(dir, "node_modules", ".bin");
}
