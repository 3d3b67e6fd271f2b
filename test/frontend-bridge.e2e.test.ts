// The real pinned OpenCode (`opencode run`) against the bridge with a scripted engine: a turn streams back, the
// title costs no turn, an unknown model fails with ivoai's message, an engine error is shown, a killed client
// aborts the turn, and the bridge secret stays out of argv and OpenCode's resolved config.
import type { ChildProcess } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TESTED_VERSIONS } from "../src/client/agents/catalog.js";
import { type Bridge, startBridge } from "../src/client/frontend/bridge.js";
import type { CatalogueEntry, FrontendTurn, FrontendTurnResult } from "../src/client/frontend/contracts.js";
import { ensureAgentClis } from "./npm-tools.js";
import { type OpencodeRun, opencodeEnv, runOpencode } from "./opencode.js";

const SECRET_ENV = "IVOAI_BRIDGE_SECRET";
const CATALOGUE: CatalogueEntry[] = [{ id: "auto", name: "ivoai auto", selection: { kind: "auto" } }];

let bin = "";
let root = "";
let bridge: Bridge;
const turns: FrontendTurn[] = [];
/** What the engine does with the next turns; set by each test. */
let script: (turn: FrontendTurn) => Promise<FrontendTurnResult> = async () => ({
  finish: "stop",
  text: "",
  error: null,
});

/** OpenCode's own config, isolated: the ivoai provider (plus one id the catalogue does not have), no sharing. */
function bridgeConfig() {
  return {
    $schema: "https://opencode.ai/config.json",
    share: "disabled",
    autoupdate: false,
    provider: {
      ivoai: {
        npm: "@ai-sdk/openai-compatible",
        name: "ivoai",
        options: { baseURL: bridge.url, apiKey: `{env:${SECRET_ENV}}` },
        models: {
          auto: {
            name: "ivoai auto",
            // A variant reaches the wire as `reasoning_effort` only through this mapping.
            variants: { low: { reasoningEffort: "low" }, high: { reasoningEffort: "high" } },
          },
          mdl_withdrawn: { name: "withdrawn profile" },
        },
      },
    },
  };
}

function opencode(args: string[], onSpawn?: (child: ChildProcess) => void): Promise<OpencodeRun> {
  return runOpencode(path.join(bin, "opencode"), args, {
    cwd: path.join(root, "project"),
    env: opencodeEnv(path.join(root, "home"), bridgeConfig(), { [SECRET_ENV]: bridge.secret }),
    ...(onSpawn ? { onSpawn } : {}),
  });
}

/** Every process command line on this machine that contains `needle` (the secret must be in none). */
async function commandLinesContaining(needle: string): Promise<string[]> {
  const found: string[] = [];
  for (const pid of (await readdir("/proc")).filter((name) => /^\d+$/.test(name))) {
    const line = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
    if (line.includes(needle)) found.push(line.replaceAll("\0", " "));
  }
  return found;
}

beforeAll(async () => {
  bin = path.join(path.dirname(await ensureAgentClis(TESTED_VERSIONS)), ".bin");
  root = await mkdtemp(path.join(os.tmpdir(), "ivoai-bridge-e2e-"));
  await mkdir(path.join(root, "project"), { recursive: true });
  bridge = await startBridge({
    engine: {
      turn(turn) {
        turns.push(turn);
        return script(turn);
      },
    },
    catalogue: () => CATALOGUE,
    validEfforts: ["low", "medium", "high"],
    // Keep-alive comments between deltas must not disturb OpenCode's SSE parser.
    heartbeatMs: 5,
  });
}, 900_000);

afterAll(async () => {
  await bridge?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

describe("the real OpenCode against the bridge", () => {
  it("streams the engine's answer back for `opencode run -m ivoai/auto`, the title costing no turn", async () => {
    turns.length = 0;
    let argvLeak: string[] = [];
    script = async (turn) => {
      argvLeak = await commandLinesContaining(bridge.secret);
      turn.onText("ivoai-");
      // A quiet spell (not synchronisation): a few dozen keep-alive comments go out between the deltas.
      await new Promise((resolve) => setTimeout(resolve, 200));
      for (const delta of ["fake ", "answer"]) turn.onText(delta);
      return { finish: "stop", text: "ivoai-fake answer", error: null };
    };
    const result = await opencode(["run", "-m", "ivoai/auto", "--variant", "high", "say hi"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("ivoai-fake answer");
    expect(turns).toHaveLength(1);
    expect(turns[0]).toMatchObject({
      prompt: expect.stringContaining("say hi"),
      selection: { kind: "auto" },
    });
    expect(turns[0]?.effort).toBe("high");
    expect(argvLeak).toEqual([]);
  });

  it("fails with ivoai's message for a model id the catalogue does not hold", async () => {
    turns.length = 0;
    const result = await opencode(["run", "-m", "ivoai/mdl_withdrawn", "say hi"]);
    expect(result.code).not.toBe(0);
    expect(result.stdout + result.stderr).toContain("model mdl_withdrawn is not in ivoai's catalogue");
    expect(turns).toHaveLength(0);
  });

  it("shows an engine error once, without OpenCode re-sending the turn", async () => {
    turns.length = 0;
    script = async (turn) => {
      turn.onText("partial ");
      return { finish: "error", text: "partial ", error: "no executor left (codex: usage limit)" };
    };
    const result = await opencode(["run", "-m", "ivoai/auto", "do it"]);
    expect(result.code).not.toBe(0);
    expect(result.stdout + result.stderr).toContain("ivoai: no executor left (codex: usage limit)");
    expect(turns).toHaveLength(1);
    // Words OpenCode's retry policy matches ("rate limit", "unavailable", 5xx codes) reach it broken up.
    turns.length = 0;
    script = async () => ({
      finish: "error",
      text: "",
      error: "claude: rate limit, codex unavailable (HTTP 503)",
    });
    const again = await opencode(["run", "-m", "ivoai/auto", "do it"]);
    expect(again.code).not.toBe(0);
    expect((again.stdout + again.stderr).replaceAll("\u200b", "")).toContain(
      "claude: rate limit, codex unavailable",
    );
    expect(turns).toHaveLength(1);
  });

  it("aborts the turn when OpenCode goes away mid-stream", async () => {
    let started: () => void = () => {};
    const turnStarted = new Promise<void>((resolve) => {
      started = resolve;
    });
    let ended: (reason: string) => void = () => {};
    const turnEnded = new Promise<string>((resolve) => {
      ended = resolve;
    });
    script = async (turn) => {
      turn.onText("working…");
      started();
      await new Promise<void>((resolve) =>
        turn.signal.addEventListener("abort", () => resolve(), { once: true }),
      );
      ended("aborted");
      return { finish: "error", text: "", error: "cancelled" };
    };
    let child: ChildProcess | undefined;
    const run = opencode(["run", "-m", "ivoai/auto", "a long job"], (spawned) => {
      child = spawned;
    });
    await turnStarted;
    child?.kill("SIGKILL");
    await run;
    expect(await turnEnded).toBe("aborted");
  });

  it("keeps the bridge secret out of OpenCode's resolved config", async () => {
    const result = await opencode(["debug", "config"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(bridge.url);
    expect(result.stdout).not.toContain(bridge.secret);
  });
});
