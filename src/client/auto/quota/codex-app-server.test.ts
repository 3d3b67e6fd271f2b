import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { NOT_LOGGED_IN, probeCodexAppServer } from "./codex-app-server.js";

const FAKE = path.resolve("test/fixtures/fake-codex.mjs");
let dir: string;
let codex: string;
let scriptFile: string;

const writeScript = (codexScript: unknown) =>
  fs.writeFile(scriptFile, JSON.stringify({ codex: codexScript }));
const env = () => ({ PATH: process.env.PATH ?? "", HOME: dir, FAKE_AUTO_SCRIPT: scriptFile });

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "ivoai-appserver-"));
  codex = path.join(dir, "codex");
  scriptFile = path.join(dir, "script.json");
  await fs.writeFile(codex, `#!/bin/sh\nexec "${process.execPath}" "${FAKE}" "$@"\n`, { mode: 0o755 });
});
afterEach(() => fs.rm(dir, { recursive: true, force: true }));

describe("probeCodexAppServer against the fake app-server", () => {
  it("reads both windows, merges the partial pushes and lists every page of models", async () => {
    await writeScript({
      rate_limits: {
        rateLimits: {
          primary: { usedPercent: 42, windowDurationMins: 300, resetsAt: 1796029200 },
          secondary: { usedPercent: 10, windowDurationMins: 10080, resetsAt: 1796500000 },
        },
      },
      rate_limit_updates: [
        { rateLimits: { primary: { usedPercent: 47, windowDurationMins: null, resetsAt: null } } },
        {
          rateLimits: {
            primary: null,
            secondary: { usedPercent: 12, windowDurationMins: 10080, resetsAt: null },
          },
        },
      ],
    });
    const probe = await probeCodexAppServer({ cliPath: codex, env: env(), pageSize: 2 });
    expect(probe.problems).toEqual([]);
    expect(probe.account).toBe("logged_in");
    expect(probe.snapshots).toEqual([
      expect.objectContaining({
        executor: "codex",
        window: "primary",
        used_percent: 47,
        status: "allowed",
        resets_at: "2026-11-30T09:00:00.000Z",
        source: "app-server",
      }),
      expect.objectContaining({
        window: "secondary",
        used_percent: 12,
        resets_at: new Date(1796500000 * 1000).toISOString(),
      }),
    ]);
    // Three default models over two pages of two.
    expect(probe.models?.map((model) => model.model)).toEqual(["gpt-6.2-sol", "gpt-6.2-astra", "gpt-6-luna"]);
    expect(probe.models?.[0]).toMatchObject({ isDefault: true, defaultEffort: "low" });
    expect(probe.models?.[2]?.efforts).toEqual(["low", "medium", "high", "xhigh", "max"]);
  });

  it("marks every window rejected when the backend says usage is blocked, and leaves hidden models out", async () => {
    await writeScript({
      rate_limits: {
        rateLimits: {
          primary: { usedPercent: 100, windowDurationMins: 300, resetsAt: 1796029200 },
          secondary: { usedPercent: 60, windowDurationMins: 10080, resetsAt: 1796500000 },
          rateLimitReachedType: "rate_limit_reached",
        },
      },
      models: [{ model: "gpt-x-sol" }, { model: "gpt-secret", hidden: true }],
    });
    const probe = await probeCodexAppServer({ cliPath: codex, env: env() });
    expect(probe.snapshots.map((snapshot) => snapshot.status)).toEqual(["rejected", "rejected"]);
    expect(probe.models?.map((model) => model.model)).toEqual(["gpt-x-sol"]);
  });

  it("reports a codex that is not logged in as such, and still lists its models", async () => {
    await writeScript({ logged_in: false });
    const probe = await probeCodexAppServer({ cliPath: codex, env: env() });
    expect(probe.account).toBe("logged_out");
    expect(probe.problems).toEqual([NOT_LOGGED_IN]);
    expect(probe.snapshots).toEqual([]);
    expect(probe.models?.length).toBe(3);
  });

  it("gives up on a silent app-server in bounded time and reaps its process group", async () => {
    const silent = path.join(dir, "silent-codex");
    const pidFile = path.join(dir, "pid");
    await fs.writeFile(silent, `#!/bin/sh\necho $$ > "${pidFile}"\nsleep 60\n`, { mode: 0o755 });
    const probe = await probeCodexAppServer({
      cliPath: silent,
      env: env(),
      timeoutMs: 500,
      killAfterMs: 200,
    });
    // Its own 500 ms timer ended it (the fake would answer nothing for 60 s): the problem says so.
    expect(probe.account).toBe("unknown");
    expect(probe.problems.join("\n")).toMatch(/no answer within 500 ms/);
    const pid = Number(await fs.readFile(pidFile, "utf8"));
    // Killed members may linger as zombies until init reaps them: wait (bounded) for the group to vanish.
    const gone = async () => {
      for (const deadline = Date.now() + 30_000; Date.now() < deadline; ) {
        try {
          process.kill(-pid, 0);
        } catch {
          return true;
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return false;
    };
    expect(await gone(), `process group ${pid} still there after 30 s`).toBe(true);
  });

  it("reports a CLI that cannot start", async () => {
    const probe = await probeCodexAppServer({ cliPath: path.join(dir, "missing"), env: env() });
    expect(probe.problems.join("\n")).toMatch(/codex app-server: cannot start/);
    expect(probe.models).toBeNull();
  });
});
