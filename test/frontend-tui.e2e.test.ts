// `ivoai auto` on a terminal, for real: tmux gives it a TTY, the pinned OpenCode TUI attaches to ivoai's managed
// server, a typed prompt is answered by the fake executor through the bridge and the AUTO engine (the sidebar
// showing the tokens the executors reported), ^C ends it all and nothing is left running. Secrets (bridge secret,
// server password) are in no argv and not in OpenCode's resolved config. Without a terminal, `ivoai auto` still
// reads its task from stdin.
import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { chmod, mkdir, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TESTED_VERSIONS } from "../src/client/agents/catalog.js";
import { type FakeClis, installFakeClis } from "./fake-clis.js";
import { BIN, runIvoai } from "./helpers.js";
import { ensureAgentClis } from "./npm-tools.js";

const signals = { complexity: 0.1, context_need: 0.1, risk: 0.1, ambiguity: 0.1, est_tokens: 10 };
const plan = { tasks: [{ id: "n", kind: "research", instructions: "x", depends_on: [], signals }] };
const ANSWER = "canary answer from the fake executor";

let bin = "";
let root = "";
let fakes: FakeClis;
let runs = 0;

function exec(program: string, args: string[], env?: NodeJS.ProcessEnv, cwd?: string) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(program, args, { env, cwd, timeout: 60_000, maxBuffer: 8 << 20 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** Environment of every process started by one run (the marker lets /proc tell them apart). */
function processEnvs(marker: string): { pid: number; cmdline: string; env: Map<string, string> }[] {
  const found = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const environ = readFileSync(`/proc/${name}/environ`, "utf8").split("\0");
      if (!environ.includes(`IVOAI_TUI_TEST=${marker}`)) continue;
      const env = new Map(
        environ.map((entry) => [entry.split("=")[0] ?? "", entry.slice(entry.indexOf("=") + 1)]),
      );
      const cmdline = readFileSync(`/proc/${name}/cmdline`, "utf8").replaceAll("\0", " ");
      found.push({ pid: Number(name), cmdline, env });
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

function allCmdlines(): string[] {
  const lines: string[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      lines.push(readFileSync(`/proc/${name}/cmdline`, "utf8"));
    } catch {
      // gone
    }
  }
  return lines;
}

// Waits are generous for a busy host (each gives up with what it saw, before the test's own timeout, which is
// the sum of its waits): OpenCode's first screen, each later step, and a turn through ivoai to its answer.
const START_MS = 180_000;
const STEP_MS = 60_000;
const ANSWER_MS = 180_000;

/** The command lines of the processes started for the TUI run `marker` (what a process wait saw). */
const runningFor = (marker: string) =>
  processEnvs(marker)
    .map((proc) => proc.cmdline)
    .join("\n") || "(none)";

async function until<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  ms: number,
  seen: () => Promise<string> | string,
) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; seen:\n${await seen()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** `ivoai auto ARGS` in a fresh tmux server (its own socket), 120×40 unless given, the pane kept after exit. */
async function startTui(args: string[], extraPath = "", stderrToFile = false, size = { x: 120, y: 40 }) {
  runs += 1;
  const dir = path.join(root, `run${runs}`);
  await mkdir(dir, { recursive: true });
  const sock = path.join(dir, "tmux.sock");
  const marker = dir;
  const script = [
    `cd '${path.join(root, "project")}'`,
    `export IVOAI_TUI_TEST='${marker}' TERM=xterm-256color HOME='${root}'`,
    `export PATH='${extraPath}${fakes.binDir}:${bin}:${process.env.PATH ?? ""}'`,
    `export XDG_CONFIG_HOME='${root}/config' XDG_STATE_HOME='${root}/state' XDG_DATA_HOME='${root}/data'`,
    `export FAKE_AUTO_SCRIPT='${fakes.env.FAKE_AUTO_SCRIPT}' FAKE_AUTO_LOG='${fakes.env.FAKE_AUTO_LOG}'`,
    `export FAKE_AUTO_STATE='${fakes.env.FAKE_AUTO_STATE}' IVOAI_KILL_AFTER_MS=2000`,
    // An error printed at once can be lost to tmux's first redraw: the failing cases keep stderr in a file.
    `'${process.execPath}' '${BIN}' auto ${args.join(" ")}${stderrToFile ? ` 2>'${dir}/stderr.txt'` : ""}`,
    `code=$?; echo "$code" > '${dir}/exit.txt'; echo "IVOAI-EXIT=$code"`,
  ].join("\n");
  await writeFile(path.join(dir, "run.sh"), `${script}\n`);
  await writeFile(path.join(dir, "tmux.conf"), "set -g remain-on-exit on\n");
  const tmux = (...rest: string[]) => exec("tmux", ["-S", sock, ...rest]);
  const started = await exec("tmux", [
    "-S",
    sock,
    "-f",
    path.join(dir, "tmux.conf"),
    "new-session",
    "-d",
    "-x",
    String(size.x),
    "-y",
    String(size.y),
    `sh '${path.join(dir, "run.sh")}'`,
  ]);
  expect(started.code, started.stderr).toBe(0);
  const screen = async () => (await tmux("capture-pane", "-p")).stdout;
  return {
    marker,
    tmux,
    screen,
    waitScreen: (text: string | RegExp, ms = STEP_MS) =>
      until(
        `${text} on screen`,
        async () => {
          const shown = await screen();
          return (typeof text === "string" ? shown.includes(text) : text.test(shown)) ? shown : undefined;
        },
        ms,
        screen,
      ),
    stderr: () => readFileSync(path.join(dir, "stderr.txt"), "utf8"),
    /** ivoai's exit status, once it has exited (a file: early screen output can be lost to tmux's first redraw). */
    exited: (ms = STEP_MS) =>
      until(
        "ivoai to exit",
        () => {
          try {
            return Number(readFileSync(path.join(dir, "exit.txt"), "utf8").trim());
          } catch {
            return undefined;
          }
        },
        ms,
        screen,
      ),
    close: () => tmux("kill-server"),
  };
}

beforeAll(async () => {
  bin = path.join(path.dirname(await ensureAgentClis(TESTED_VERSIONS)), ".bin");
  root = await mkdtemp(path.join(os.tmpdir(), "ivoai-frontend-tui-"));
  await mkdir(path.join(root, "project"), { recursive: true });
  fakes = await installFakeClis(path.join(root, "fakes"));
  // The user's own OpenCode config, which the managed OpenCode must not read.
  await mkdir(path.join(root, ".opencode"), { recursive: true });
  await writeFile(path.join(root, ".opencode/opencode.json"), '{"username":"users-own-opencode"}');
  await mkdir(path.join(root, "config/opencode"), { recursive: true });
  await writeFile(path.join(root, "config/opencode/opencode.json"), '{"username":"users-own-opencode"}');
}, 900_000);

afterAll(async () => {
  await fakes?.killAll();
  if (root) await rm(root, { recursive: true, force: true });
});

describe("ivoai auto on a terminal: the managed OpenCode TUI", () => {
  it(
    "answers a typed prompt through ivoai, keeps secrets out of argv and config, and ^C leaves nothing running",
    async () => {
      await fakes.script({
        codex: {
          turns: {
            plan: [{ reply: plan }],
            answer: [{ reply: ANSWER }],
            consolidate: [{ reply: ANSWER }],
          },
        },
        claude: {},
      });
      const tui = await startTui([]);
      try {
        const home = await tui.waitScreen("Ask anything", START_MS);
        expect(home).toContain("ivoai auto");
        // ivoai's TUI plugin draws the compact status it reads from the launcher's status endpoint, and `/ivoai`
        // opens the panel with the executors.
        await tui.waitScreen("ivoai · sources");
        // Enter only once the completion lists the command: before that OpenCode would send "/ivoai" as a prompt.
        await tui.tmux("send-keys", "-l", "/ivoai");
        await tui.waitScreen(/\/ivoai +ivoai status/);
        await tui.tmux("send-keys", "Enter");
        await tui.waitScreen("Executor: codex");
        await tui.tmux("send-keys", "Escape");

        // While it runs: the secrets live only in the server's environment.
        const server = await until(
          "the opencode server",
          () => processEnvs(tui.marker).find((proc) => proc.cmdline.includes(" serve ")),
          STEP_MS,
          () => runningFor(tui.marker),
        );
        expect(server.cmdline).toMatch(/serve --hostname 127\.0\.0\.1 --port \d+/);
        const secret = server.env.get("IVOAI_BRIDGE_SECRET") ?? "";
        const password = server.env.get("OPENCODE_SERVER_PASSWORD") ?? "";
        expect(secret.length).toBeGreaterThan(40);
        expect(password.length).toBeGreaterThan(30);
        expect(server.env.get("XDG_CONFIG_HOME")).toBe(
          path.join(root, "state/ivoai/frontend/opencode/config"),
        );
        expect(server.env.get("OPENCODE_DISABLE_PROJECT_CONFIG")).toBe("1");
        for (const cmdline of allCmdlines()) {
          expect(cmdline.includes(secret) || cmdline.includes(password)).toBe(false);
        }
        const attach = processEnvs(tui.marker).find((proc) => proc.cmdline.includes(" attach "));
        expect(attach?.env.get("OPENCODE_SERVER_PASSWORD")).toBe(password);
        expect(attach?.env.has("IVOAI_BRIDGE_SECRET")).toBe(false);
        const resolved = await exec(
          path.join(bin, "opencode"),
          ["debug", "config"],
          Object.fromEntries(server.env),
          path.join(root, "project"),
        );
        expect(resolved.code, resolved.stderr).toBe(0);
        expect(resolved.stdout).toContain('"ivoai"');
        expect(resolved.stdout).toContain('"share": "disabled"');
        expect(resolved.stdout).not.toContain("users-own-opencode");
        expect(resolved.stdout.includes(secret) || resolved.stdout.includes(password)).toBe(false);
        // The server answers only with its password.
        const url = `http://127.0.0.1:${/--port (\d+)/.exec(server.cmdline)?.[1]}`;
        expect((await fetch(`${url}/config`)).status).toBe(401);
        const auth = `Basic ${Buffer.from(`opencode:${password}`).toString("base64")}`;
        expect((await fetch(`${url}/config`, { headers: { authorization: auth } })).status).toBe(200);
        const home700 = await stat(path.join(root, "state/ivoai/frontend/opencode"));
        expect(home700.mode & 0o777).toBe(0o700);

        await tui.tmux("send-keys", "-l", "Implement the canary stage");
        await tui.waitScreen("Implement the canary stage");
        await tui.tmux("send-keys", "Enter");
        await tui.waitScreen(ANSWER, ANSWER_MS);
        const turns = (await fakes.log()).filter((line) => line.role !== "app-server");
        expect(turns.length).toBeGreaterThan(0);
        expect(turns.every((line) => line.executor === "codex")).toBe(true);

        // One ^C on the empty prompt quits OpenCode; ivoai then ends the server and the bridge.
        await tui.tmux("send-keys", "C-c");
        expect(await tui.exited()).toBe(0);
        expect((await tui.tmux("display", "-p", "#{pane_dead}")).stdout.trim()).toBe("1");
        expect(processEnvs(tui.marker).map((proc) => proc.cmdline)).toEqual([]);
      } finally {
        await tui.close();
      }
    },
    START_MS + 5 * STEP_MS + ANSWER_MS + STEP_MS + STEP_MS,
  );

  it(
    "shows a turn's plan progress and running tasks, then its outcome, in the sidebar and /ivoai; Esc is a stop",
    async () => {
      await fakes.reset();
      // Two large tasks (workers, one after the other), each held until the test releases it.
      const large = { complexity: 0.5, context_need: 0.5, risk: 0.3, ambiguity: 0.2, est_tokens: 30_000 };
      const planned = (id: string, depends_on: string[]) => ({
        id,
        kind: "research",
        instructions: `Survey part ${id} of the canary stage`,
        depends_on,
        signals: large,
      });
      const release = (id: string) => path.join(root, `release-${id}`);
      const workers = {
        t1: [{ await_file: release("t1"), reply: "t1 surveyed" }],
        t2: [{ await_file: release("t2"), reply: "t2 surveyed" }],
        h1: [{ hang: true }],
      };
      const turns = {
        plan: [
          { reply: { tasks: [planned("t1", []), planned("t2", ["t1"])] } },
          { reply: { tasks: [planned("h1", []), planned("h2", ["h1"])] } },
        ],
        answer: [{ reply: ANSWER }],
        consolidate: [{ reply: ANSWER }],
      };
      await fakes.script({
        codex: { turns, worker_by_task: workers },
        claude: { turns, worker_by_task: workers },
      });
      // Two configured servers the session cannot use: one disabled, one without a stored credential.
      const clientConfig = path.join(root, "config/ivoai/config.toml");
      await mkdir(path.dirname(clientConfig), { recursive: true, mode: 0o700 });
      await writeFile(
        clientConfig,
        [
          "[servers.srv_spare]",
          'alias = "spare"',
          'url = "http://127.0.0.1:9"',
          'purpose = "docs"',
          "enabled = false",
          "[servers.srv_bare]",
          'alias = "bare"',
          'url = "http://127.0.0.1:9"',
          'purpose = "notes"',
          "",
        ].join("\n"),
        { mode: 0o600 },
      );
      // Wide enough for OpenCode's session sidebar (shown beyond 120 columns).
      const tui = await startTui([], "", false, { x: 170, y: 50 });
      try {
        await tui.waitScreen("Ask anything", START_MS);
        // Before any turn, /ivoai lists the configured sources and why each is left out.
        await tui.tmux("send-keys", "-l", "/ivoai");
        await tui.waitScreen(/\/ivoai +ivoai status/);
        await tui.tmux("send-keys", "Enter");
        const before = await tui.waitScreen("Configured: bare");
        expect(before).toContain("AUTO: no turn yet");
        expect(before).toContain("spare — disabled");
        expect(before).toContain("bare — no stored credential; connect it again");
        await tui.tmux("send-keys", "Enter");
        await tui.tmux("send-keys", "-l", "Implement the canary stage");
        await tui.waitScreen("Implement the canary stage");
        await tui.tmux("send-keys", "Enter");
        // The sidebar: n/m, the running task, the time so far.
        await tui.waitScreen(/AUTO 0\/2 · running t1 · \d+(m\d\ds|s)/, ANSWER_MS);
        await writeFile(release("t1"), "");
        await tui.waitScreen(/AUTO 1\/2 · running t2 · /);
        // The panel while it runs: progress, the running task with its profile, the sources.
        await tui.tmux("send-keys", "-l", "/ivoai");
        await tui.waitScreen(/\/ivoai +ivoai status/);
        await tui.tmux("send-keys", "Enter");
        const panel = await tui.waitScreen("Progress: 1/2 tasks");
        expect(panel).toMatch(/Running: t2 \((codex|claude)[^)]*\)/);
        expect(panel).toContain("Sources:");
        expect(panel).toContain("Selected:");
        await tui.tmux("send-keys", "Enter");
        await writeFile(release("t2"), "");
        await tui.waitScreen(ANSWER, ANSWER_MS);
        await tui.waitScreen(/AUTO done 2\/2 · \d/);

        // A second turn whose worker never answers: Esc stops it, recorded as stopped by the user, not failed.
        await tui.tmux("send-keys", "-l", "Implement the next stage");
        await tui.waitScreen("Implement the next stage");
        await tui.tmux("send-keys", "Enter");
        await tui.waitScreen(/AUTO 0\/2 · running h1 · /, ANSWER_MS);
        // OpenCode interrupts on a second Esc, once it has asked for it.
        await tui.tmux("send-keys", "Escape");
        await tui.waitScreen(/esc again/i);
        await tui.tmux("send-keys", "Escape");
        await tui.waitScreen(/AUTO stopped 0\/2 · /);
        const env = {
          ...process.env,
          HOME: root,
          XDG_CONFIG_HOME: path.join(root, "config"),
          XDG_STATE_HOME: path.join(root, "state"),
          XDG_DATA_HOME: path.join(root, "data"),
        };
        const list = JSON.parse((await runIvoai(["session", "list", "--json"], { env })).stdout) as {
          sessions: { id: string; status: string; exit_code: number | null }[];
        };
        const shown = await Promise.all(
          list.sessions.map(
            async (entry) =>
              JSON.parse((await runIvoai(["session", "show", entry.id, "--json"], { env })).stdout) as {
                status: string;
                exit_code: number | null;
                auto: { phase: string; error: string | null; tasks: { id: string; state: string }[] };
              },
          ),
        );
        const stopped = shown.find((entry) => entry.auto.tasks.some((task) => task.id === "h1"));
        expect(stopped, JSON.stringify(shown)).toMatchObject({
          status: "exited",
          exit_code: 130,
          auto: { phase: "stopped", error: "cancelled by the user" },
        });
        expect(shown.find((entry) => entry.auto.tasks.some((task) => task.id === "t1"))).toMatchObject({
          exit_code: 0,
          auto: { phase: "done" },
        });
      } finally {
        await tui.close();
        await fakes.killAll();
        await rm(clientConfig, { force: true });
      }
    },
    START_MS + 6 * STEP_MS + 3 * ANSWER_MS,
  );

  it(
    "shows in OpenCode's sidebar the tokens the executors reported for the turn",
    async () => {
      await fakes.reset();
      await fakes.script({
        codex: { turns: { plan: [{ reply: plan }], consolidate: [{ reply: ANSWER }] } },
        claude: {},
      });
      // OpenCode draws its sidebar only on a terminal wider than 120 columns.
      const tui = await startTui([], "", false, { x: 160, y: 40 });
      try {
        await tui.waitScreen("Ask anything", START_MS);
        await tui.tmux("send-keys", "-l", "Implement the counted stage");
        await tui.waitScreen("Implement the counted stage");
        await tui.tmux("send-keys", "Enter");
        await tui.waitScreen(ANSWER, ANSWER_MS);
        const turns = (await fakes.log()).filter((line) => line.role !== "app-server");
        expect(turns.map((line) => line.role)).toEqual(["plan", "consolidate"]);
        // What the fake codex reports per turn (test/fixtures/fake-auto-turn.mjs), summed over the turn's calls.
        const total = turns.reduce((sum, line) => {
          const reply = line.role === "plan" ? JSON.stringify(plan) : ANSWER;
          return (
            sum + 1000 + Math.ceil(Buffer.byteLength(line.prompt) / 4) + 20 + Math.ceil(reply.length / 4)
          );
        }, 0);
        const shown = await tui.waitScreen(`${total.toLocaleString("en-US")} tokens`);
        expect(shown).toContain("Context");
        expect(shown).not.toMatch(/(?:^|\s)0 tokens/m);
      } finally {
        await tui.close();
      }
    },
    START_MS + 2 * STEP_MS + ANSWER_MS + STEP_MS,
  );

  it(
    "ends the TUI, the server and the bridge when ivoai gets SIGTERM",
    async () => {
      await fakes.reset();
      const tui = await startTui([]);
      try {
        await tui.waitScreen("Ask anything", START_MS);
        const ivoai = processEnvs(tui.marker).find((proc) => proc.cmdline.includes(`${BIN} auto`));
        expect(ivoai).toBeDefined();
        process.kill(ivoai?.pid ?? 0, "SIGTERM");
        expect(await tui.exited()).toBe(143);
        expect(processEnvs(tui.marker).map((proc) => proc.cmdline)).toEqual([]);
      } finally {
        await tui.close();
      }
    },
    START_MS + 2 * STEP_MS,
  );

  it(
    "ends, on the next start, the OpenCode server of an ivoai that was killed",
    async () => {
      await fakes.reset();
      const first = await startTui([]);
      let orphan: number | undefined;
      try {
        await first.waitScreen("Ask anything", START_MS);
        const ivoai = processEnvs(first.marker).find((proc) => proc.cmdline.includes(`${BIN} auto`));
        orphan = processEnvs(first.marker).find((proc) => proc.cmdline.includes(" serve "))?.pid;
        expect(orphan).toBeGreaterThan(0);
        // SIGKILL leaves ivoai no chance to end its server: it survives in its own process group.
        process.kill(ivoai?.pid ?? 0, "SIGKILL");
        await until(
          "ivoai to die",
          () =>
            processEnvs(first.marker).some((proc) => proc.cmdline.includes(`${BIN} auto`)) ? undefined : true,
          STEP_MS,
          () => runningFor(first.marker),
        );
        expect(processEnvs(first.marker).some((proc) => proc.pid === orphan)).toBe(true);
      } finally {
        await first.close();
      }
      const second = await startTui([]);
      try {
        await second.waitScreen("Ask anything", START_MS);
        // The start sent SIGKILL to the orphan's group; on a loaded host its end may lag the TUI's first screen.
        await until(
          "the orphaned OpenCode server to end",
          () => (processEnvs(first.marker).some((proc) => proc.pid === orphan) ? undefined : true),
          STEP_MS,
          () => runningFor(first.marker),
        );
      } finally {
        await second.close();
        for (const proc of [...processEnvs(first.marker), ...processEnvs(second.marker)]) {
          try {
            process.kill(proc.pid, "SIGKILL");
          } catch {
            // gone
          }
        }
      }
    },
    2 * START_MS + 2 * STEP_MS,
  );

  it(
    "refuses an OpenCode other than the pinned version, with a clear message, before starting anything",
    async () => {
      const other = path.join(root, "other-opencode");
      await mkdir(other, { recursive: true });
      await writeFile(path.join(other, "opencode"), "#!/bin/sh\necho 0.0.1\n");
      await chmod(path.join(other, "opencode"), 0o755);
      const tui = await startTui([], `${other}:`, true);
      try {
        expect(await tui.exited()).toBe(1);
        expect(tui.stderr()).toContain(
          `is opencode 0.0.1; ivoai auto needs the pinned ${TESTED_VERSIONS.opencode}`,
        );
      } finally {
        await tui.close();
      }
    },
    2 * STEP_MS,
  );

  it(
    "fails before the frontend starts when an explicitly selected knowledge source is unavailable",
    async () => {
      const tui = await startTui(["--knowledge-source", "nosuch"], "", true);
      try {
        expect(await tui.exited()).toBe(1);
        expect(tui.stderr()).toContain("knowledge source nosuch is not connected");
        expect(processEnvs(tui.marker)).toEqual([]);
        expect(await tui.screen()).not.toContain("Ask anything");
      } finally {
        await tui.close();
      }
    },
    2 * STEP_MS,
  );

  it(
    "without a terminal, `ivoai auto` with no task still reads the task from stdin",
    async () => {
      await fakes.reset();
      await fakes.script({
        codex: {
          turns: { plan: [{ reply: plan }], answer: [{ reply: ANSWER }], consolidate: [{ reply: ANSWER }] },
        },
        claude: {},
      });
      const result = await runIvoai(["auto"], {
        input: "Implement the canary stage\n",
        env: {
          ...fakes.env,
          PATH: `${fakes.binDir}:${bin}:${process.env.PATH ?? ""}`,
          HOME: root,
          XDG_CONFIG_HOME: path.join(root, "config"),
          XDG_STATE_HOME: path.join(root, "state"),
          XDG_DATA_HOME: path.join(root, "data"),
        },
        timeoutMs: ANSWER_MS,
      });
      expect(result.code, `${result.stderr}\n${result.stdout}`).toBe(0);
      expect(result.stdout).toContain(ANSWER);
      const prompts = (await fakes.log())
        .filter((line) => line.role !== "app-server")
        .map((line) => line.prompt);
      expect(prompts.some((prompt) => prompt.includes("Implement the canary stage"))).toBe(true);
    },
    ANSWER_MS + STEP_MS,
  );
});
