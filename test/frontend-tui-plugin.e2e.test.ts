// ivoai's TUI plugin loaded by the real pinned OpenCode TUI (in a pseudo-terminal from `script`, no tmux): the plugin
// is accepted by OpenCode's TUI plugin loader, reads ivoai's status endpoint with the bearer token from the
// environment, and draws the compact status.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TESTED_VERSIONS } from "../src/client/agents/catalog.js";
import {
  pluginConfig,
  pluginFiles,
  type StatusServer,
  type StatusSnapshot,
  startStatusServer,
  writePluginFiles,
} from "../src/client/frontend/plugins/index.js";
import { ensureAgentClis } from "./npm-tools.js";

let bin = "";
let root = "";
let status: StatusServer;
let tui: ChildProcess | undefined;
let served = 0;
let firstRequest: () => void = () => undefined;
const requested = new Promise<void>((resolve) => {
  firstRequest = resolve;
});

const snapshot: StatusSnapshot = {
  sources: [
    { alias: "docs", purpose: "context", state: "ok", detail: "" },
    { alias: "wiki", purpose: "memory", state: "unhealthy", detail: "connection refused" },
  ],
  executor: "codex",
  quota: [],
  session_id: null,
  auto: null,
  selection: null,
};

beforeAll(async () => {
  bin = path.join(path.dirname(await ensureAgentClis(TESTED_VERSIONS)), ".bin");
  root = await mkdtemp(path.join(os.tmpdir(), "ivoai-tui-plugin-"));
  await mkdir(path.join(root, "project"), { recursive: true });
  await mkdir(path.join(root, "plugins"), { recursive: true, mode: 0o700 });
  status = await startStatusServer(() => {
    served += 1;
    firstRequest();
    return snapshot;
  });
  await writePluginFiles(
    path.join(root, "plugins"),
    pluginFiles({ statusUrl: status.url, statusTokenEnv: "IVOAI_STATUS_TOKEN" }),
  );
  await writeFile(path.join(root, "tui.json"), JSON.stringify(pluginConfig(path.join(root, "plugins")).tui));
}, 900_000);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

afterAll(async () => {
  const opencodePid = Number(await readFile(path.join(root, "tui.pid"), "utf8").catch(() => "0"));
  if (opencodePid > 0 && alive(opencodePid)) process.kill(opencodePid, "SIGKILL");
  if (tui?.pid !== undefined && tui.exitCode === null) {
    const exited = new Promise((resolve) => tui?.once("close", resolve));
    process.kill(-tui.pid, "SIGKILL");
    await exited;
  }
  await status?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

async function plainScreen(file: string): Promise<string> {
  return (
    (await readFile(file, "utf8").catch(() => ""))
      // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping terminal escape sequences
      .replace(/\u001b\[[0-9;?]*[ -/]*[@-~]/g, "")
  );
}

// Waits are generous for a busy host and give up with the screen, before the test's own timeout (their sum):
// OpenCode's start to its first status request, and each later step.
const START_MS = 180_000;
const STEP_MS = 60_000;

/** The last 2,000 characters drawn, blank runs squeezed (the TUI pads every redraw with spaces). */
async function screenTail(file: string): Promise<string> {
  return (await plainScreen(file)).replace(/\s+/g, " ").slice(-2000);
}

/** Waits until `text` is drawn after `offset` characters of the screen log; gives up after `ms` with the screen. */
async function waitForScreen(file: string, offset: number, text: string, ms = STEP_MS): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await plainScreen(file)).slice(offset).includes(text)) {
    if (Date.now() > deadline) {
      const tail = await screenTail(file);
      throw new Error(`${JSON.stringify(text)} not drawn within ${ms} ms; screen tail:\n${tail}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Settles like `work`, or fails after `ms` with the screen so far. */
async function within<T>(work: Promise<T>, ms: number, what: string, file: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<never>((_, reject) => {
    timer = setTimeout(async () => {
      const tail = await screenTail(file);
      reject(new Error(`no ${what} within ${ms} ms; screen tail:\n${tail}`));
    }, ms);
  });
  try {
    return await Promise.race([work, gaveUp]);
  } finally {
    clearTimeout(timer);
  }
}

describe("ivoai's TUI plugin in the real OpenCode TUI", () => {
  it(
    "is loaded, draws the status fetched with the token, opens /ivoai and survives the endpoint going away",
    async () => {
      const home = path.join(root, "home");
      const screen = path.join(root, "screen.txt");
      // The shell records its pid, which `exec` hands to OpenCode (script runs it in a session of its own).
      const command = `stty cols 160 rows 50; echo $$ > ${JSON.stringify(path.join(root, "tui.pid"))}; exec ${JSON.stringify(path.join(bin, "opencode"))}`;
      tui = spawn("script", ["-qfec", command, screen], {
        cwd: path.join(root, "project"),
        detached: true,
        env: {
          PATH: process.env.PATH ?? "",
          TERM: "xterm-256color",
          HOME: home,
          XDG_CONFIG_HOME: path.join(home, ".config"),
          XDG_DATA_HOME: path.join(home, ".local/share"),
          XDG_CACHE_HOME: path.join(home, ".cache"),
          XDG_STATE_HOME: path.join(home, ".local/state"),
          OPENCODE_CONFIG_CONTENT: JSON.stringify({ share: "disabled", autoupdate: false }),
          OPENCODE_TUI_CONFIG: path.join(root, "tui.json"),
          OPENCODE_DISABLE_PROJECT_CONFIG: "1",
          IVOAI_STATUS_TOKEN: status.token,
        },
        stdio: ["pipe", "ignore", "ignore"],
      });
      const exitedEarly = new Promise<never>((_, reject) =>
        tui?.once("close", (code) => reject(new Error(`the TUI exited (${code})`))),
      );
      // Only an authorised request counts (startStatusServer refuses others before calling the snapshot).
      await within(
        Promise.race([requested, exitedEarly]),
        START_MS,
        "status request from the plugin",
        screen,
      );
      expect(served).toBeGreaterThan(0);
      // The compact status reaches the screen (redrawn: wait for the text, bounded, rather than a fixed time).
      await waitForScreen(screen, 0, "✖ unhealthy wiki");
      expect(await plainScreen(screen)).toContain("sources 1/2 connected");
      // `/ivoai` opens the panel with the details.
      let offset = (await plainScreen(screen)).length;
      tui.stdin?.write("/ivoai");
      // Enter only once the completion lists the command (its description): an Enter before it opens is dropped.
      await waitForScreen(screen, offset, "ivoai status");
      tui.stdin?.write("\r");
      await waitForScreen(screen, offset, "Executor: codex");
      expect((await plainScreen(screen)).slice(offset)).toContain("(memory) — connection refused");
      tui.stdin?.write("\u001b");
      // The status endpoint goes away: the next poll shows it, and the TUI keeps running.
      offset = (await plainScreen(screen)).length;
      await status.close();
      await waitForScreen(screen, offset, "ivoai status unavailable");
      expect(tui.exitCode).toBeNull();
    },
    START_MS + 5 * STEP_MS,
  );
});
