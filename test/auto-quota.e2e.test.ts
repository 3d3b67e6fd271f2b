// `ivoai executors` and `ivoai hook statusline` from the built binary, with the fake codex (its app-server)
// on PATH: quota windows and models as the fake reports them, the registry cache and --refresh, a logged-out
// codex, and Claude's statusline payload feeding the shared quota store from concurrent processes.
import { spawn } from "node:child_process";
import { appendFile, chmod, mkdir, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildInjection } from "../src/client/agents/inject.js";
import { BIN, runIvoai, tempDir } from "./helpers.js";

const FAKE_CODEX = path.resolve("test/fixtures/fake-codex.mjs");
let dir: string;
let cleanup: () => Promise<void>;
let env: NodeJS.ProcessEnv;
let scriptFile: string;
let logFile: string;

const script = (codex: Record<string, unknown>) => writeFile(scriptFile, JSON.stringify({ codex }));
const probes = async () =>
  (await readFile(logFile, "utf8").catch(() => ""))
    .split("\n")
    .filter(Boolean)
    .filter((line) => JSON.parse(line).role === "app-server").length;

interface Report {
  executors: {
    name: string;
    path: string | null;
    login: string;
    admitted: boolean;
    admission: string;
    quota: {
      window: string;
      used_percent: number | null;
      status: string | null;
      resets_at: string | null;
      source: string;
    }[];
    catalogue: string;
    models: {
      id: string;
      model: string;
      effort: string;
      tier: number;
      source: string;
      verified: boolean;
      usable: boolean;
    }[];
    problems: string[];
  }[];
}
async function executors(...args: string[]): Promise<Report> {
  const result = await runIvoai(["executors", "--json", ...args], { env, timeoutMs: 60_000 });
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as Report;
}
const codexOf = (report: Report) => report.executors.find((entry) => entry.name === "codex");
const claudeOf = (report: Report) => report.executors.find((entry) => entry.name === "claude");

const LIMITS = {
  rateLimits: {
    primary: { usedPercent: 42, windowDurationMins: 300, resetsAt: 4102444800 },
    secondary: { usedPercent: 10, windowDurationMins: 10080, resetsAt: 4103049600 },
  },
};

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir("ivoai-auto-quota-"));
  const bin = path.join(dir, "bin");
  await mkdir(bin);
  await writeFile(path.join(bin, "codex"), `#!/bin/sh\nexec "${process.execPath}" "${FAKE_CODEX}" "$@"\n`);
  // A stand-in for Claude Code's two read-only commands the registry asks (real output shapes).
  await writeFile(
    path.join(bin, "claude"),
    '#!/bin/sh\ncase "$1" in\n  --version) echo "2.1.332 (Claude Code)" ;;\n' +
      '  auth) echo \'{"loggedIn":true,"authMethod":"claude.ai"}\' ;;\n  *) exit 2 ;;\nesac\n',
  );
  await chmod(path.join(bin, "codex"), 0o755);
  await chmod(path.join(bin, "claude"), 0o755);
  scriptFile = path.join(dir, "script.json");
  logFile = path.join(dir, "log.jsonl");
  env = {
    HOME: dir,
    XDG_CONFIG_HOME: path.join(dir, "config"),
    XDG_STATE_HOME: path.join(dir, "state"),
    XDG_DATA_HOME: path.join(dir, "data"),
    XDG_CACHE_HOME: path.join(dir, "cache"),
    PATH: `${bin}:${process.env.PATH ?? ""}`,
    FAKE_AUTO_SCRIPT: scriptFile,
    FAKE_AUTO_LOG: logFile,
    OPENAI_API_KEY: "sk-never-printed-0123456789",
  };
});
afterAll(() => cleanup());

describe("ivoai executors", () => {
  it("shows codex's quota windows (pushes merged) and its runtime-verified models, and claude's catalogue", async () => {
    await script({
      rate_limits: LIMITS,
      rate_limit_updates: [
        { rateLimits: { primary: { usedPercent: 47, windowDurationMins: null, resetsAt: null } } },
      ],
      models: [
        { model: "gpt-9-sol", isDefault: true, efforts: ["low", "medium", "high"] },
        { model: "gpt-9-luna", efforts: ["low", "medium"] },
      ],
    });
    const result = await runIvoai(["executors", "--json"], { env, timeoutMs: 60_000 });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout + result.stderr).not.toContain("sk-never-printed");
    const report = JSON.parse(result.stdout) as Report;
    const codex = codexOf(report);
    expect(codex).toMatchObject({ path: path.join(dir, "bin", "codex"), login: "logged_in", admitted: true });
    expect(codex?.quota).toEqual([
      expect.objectContaining({
        window: "primary",
        used_percent: 47,
        resets_at: "2100-01-01T00:00:00.000Z",
        source: "app-server",
      }),
      expect.objectContaining({ window: "secondary", used_percent: 10, source: "app-server" }),
    ]);
    expect(codex?.catalogue).toBe("model/list");
    expect(codex?.models.map((model) => `${model.model}/${model.effort}/${model.tier}`)).toEqual([
      "gpt-9-sol/low/1",
      "gpt-9-sol/medium/2",
      "gpt-9-sol/high/3",
      "gpt-9-luna/low/1",
      "gpt-9-luna/medium/1",
    ]);
    expect(codex?.models.every((model) => model.verified && /^mdl_[0-9a-f]{8}$/.test(model.id))).toBe(true);
    const claude = claudeOf(report);
    expect(claude).toMatchObject({
      login: "logged_in",
      admitted: true,
      admission: "no quota data",
      quota: [],
    });
    // Seed 000: only what was verified at run time counts as verified. Claude's aliases are ivoai's static
    // catalogue: usable once logged in, never shown as verified.
    expect(claude?.models.length).toBeGreaterThan(0);
    for (const model of claude?.models ?? [])
      expect(model).toMatchObject({ source: "catalogue", verified: false, usable: true });
    expect(codex?.models.every((model) => model.source === "model/list" && model.usable)).toBe(true);
    const text = await runIvoai(["executors"], { env, timeoutMs: 60_000 });
    expect(text.code, text.stderr).toBe(0);
    const claudeText = text.stdout.slice(text.stdout.indexOf("claude:"));
    expect(claudeText).toContain("models (ivoai's static catalogue: not verified at run time):");
    const opusRow = claudeText.split("\n").find((line) => / opus +high /.test(line)) ?? "";
    expect(opusRow.trim().split(/ +/).slice(-2), claudeText).toEqual(["catalogue", "yes"]);
    const quotaFile = path.join(dir, "state/ivoai/auto/quota.json");
    expect((await stat(quotaFile)).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(quotaFile))).mode & 0o777).toBe(0o700);
  });

  it("reuses its cache until --refresh, which picks up what changed", async () => {
    const before = await probes();
    await script({
      rate_limits: {
        rateLimits: { ...LIMITS.rateLimits, primary: { ...LIMITS.rateLimits.primary, usedPercent: 95 } },
      },
      models: [{ model: "gpt-10-astra", efforts: ["low"] }],
    });
    const cached = codexOf(await executors());
    expect(await probes()).toBe(before);
    expect(cached?.models[0]?.model).toBe("gpt-9-sol");
    expect(cached?.admitted).toBe(true);

    const refreshed = codexOf(await executors("--refresh"));
    expect(await probes()).toBe(before + 1);
    expect(refreshed?.models.map((model) => model.model)).toEqual(["gpt-10-astra"]);
    expect(refreshed?.quota.find((window) => window.window === "primary")?.used_percent).toBe(95);
    expect(refreshed?.admitted).toBe(false);
    expect(refreshed?.admission).toBe(
      "codex primary window at 95% (headroom 10%) until 2100-01-01T00:00:00.000Z",
    );
  });

  it("reports a codex that is not logged in clearly, and lists its models unverified", async () => {
    await script({ logged_in: false });
    const codex = codexOf(await executors("--refresh"));
    expect(codex?.login).toBe("logged_out");
    expect(codex?.problems).toContain("codex is not logged in");
    expect(codex?.catalogue).toBe("model/list");
    // Listed, but not usable until logged in: the scheduler must not pick them.
    expect(codex?.models.length).toBeGreaterThan(0);
    expect(codex?.models.some((model) => model.verified)).toBe(false);
    const text = await runIvoai(["executors"], { env, timeoutMs: 60_000 });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/codex: .*\n {2}login: {4}logged out — codex is not logged in/);
    expect(text.stdout).toContain("problem:  codex is not logged in");
  });

  it("has help", async () => {
    const help = await runIvoai(["executors", "--help"], { env });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("--refresh");
    expect(help.stdout).toContain("--json");
  });
});

describe("ivoai hook statusline", () => {
  const payload = (limits: Record<string, unknown>) =>
    JSON.stringify({ session_id: "s", model: { id: "claude-sonnet-5" }, rate_limits: limits });

  it("records claude's windows and prints one short line", async () => {
    const result = await runIvoai(["hook", "statusline"], {
      env,
      input: payload({
        five_hour: { used_percentage: 42, resets_at: 4102444800 },
        seven_day: { used_percentage: 95, resets_at: "2100-01-08T00:00:00Z" },
      }),
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("ivoai · 5h 42% · 7d 95%\n");
    const claude = claudeOf(await executors());
    expect(claude?.quota).toEqual([
      expect.objectContaining({
        window: "five_hour",
        used_percent: 42,
        resets_at: "2100-01-01T00:00:00.000Z",
        source: "statusline",
      }),
      expect.objectContaining({
        window: "seven_day",
        used_percent: 95,
        resets_at: "2100-01-08T00:00:00.000Z",
      }),
    ]);
    expect(claude?.admitted).toBe(false);
    expect(claude?.admission).toBe(
      "claude seven_day window at 95% (headroom 10%) until 2100-01-08T00:00:00.000Z",
    );
  });

  it("is the statusLine command ivoai gives interactive claude sessions", async () => {
    const injection = buildInjection("claude", {
      router: {
        endpoints: {
          context: "http://127.0.0.1:9/c",
          memory: "http://127.0.0.1:9/m",
          hooks: "http://127.0.0.1:9/h",
        },
      },
      runtimeDir: path.join(dir, "run"),
      hookCommand: [process.execPath, BIN],
    });
    const settings = JSON.parse(
      injection.files.find((file) => file.name === "settings.json")?.content ?? "{}",
    ) as {
      statusLine: { type: string; command: string };
    };
    expect(settings.statusLine.type).toBe("command");
    // Claude runs it through a shell with the payload on stdin and shows its first line.
    const child = spawn("sh", ["-c", settings.statusLine.command], { env: { ...process.env, ...env } });
    let stdout = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stdin.end(payload({ seven_day: { used_percentage: 33, resets_at: 4103049600 } }));
    const code = await new Promise((resolve) => child.once("close", resolve));
    expect(code).toBe(0);
    expect(stdout).toBe("ivoai · 7d 33%\n");
    const claude = claudeOf(await executors());
    expect(claude?.quota.find((window) => window.window === "seven_day")?.used_percent).toBe(33);
  });

  it("always exits 0 with a line, whatever it is fed", async () => {
    for (const input of ["", "{not json", JSON.stringify({ rate_limits: "no" })]) {
      const result = await runIvoai(["hook", "statusline"], { env, input });
      expect(result.code).toBe(0);
      expect(result.stdout).toBe("ivoai\n");
    }
  });

  it("loses no window when several sessions report at once (cross-process lock)", async () => {
    const windows = ["w_a", "w_b", "w_c", "w_d", "w_e"];
    const results = await Promise.all(
      windows.map((window, at) =>
        runIvoai(["hook", "statusline"], { env, input: payload({ [window]: { used_percentage: at } }) }),
      ),
    );
    expect(results.map((result) => result.code)).toEqual(windows.map(() => 0));
    const stored = JSON.parse(await readFile(path.join(dir, "state/ivoai/auto/quota.json"), "utf8")) as {
      snapshots: { window: string }[];
    };
    for (const window of windows) expect(stored.snapshots.map((entry) => entry.window)).toContain(window);
  });

  it("a corrupt quota file is replaced, not fatal", async () => {
    await appendFile(path.join(dir, "state/ivoai/auto/quota.json"), "garbage");
    const result = await runIvoai(["hook", "statusline"], {
      env,
      input: payload({ five_hour: { used_percentage: 5 } }),
    });
    expect(result.stdout).toBe("ivoai · 5h 5%\n");
    const report = await runIvoai(["executors", "--json"], { env, timeoutMs: 60_000 });
    expect(report.code).toBe(0);
    expect(claudeOf(JSON.parse(report.stdout) as Report)?.quota).toEqual([
      expect.objectContaining({ window: "five_hour", used_percent: 5 }),
    ]);
  });
});
