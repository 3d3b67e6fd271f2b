// The whole AUTO frontend chain with the real pinned OpenCode: `opencode run` → ivoai's bridge → the AUTO engine →
// the fake official CLIs. A turn streams back; a follow-up turn continues the same executor conversation; an
// unavailable explicit model fails with ivoai's message; a hard limit mid-answer fails over and the stream goes on,
// marked; OpenCode gets the turn's tokens, `run`'s question as typed, and an engine failure as one readable line.
import type { ChildProcess } from "node:child_process";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TESTED_VERSIONS } from "../src/client/agents/catalog.js";
import { procStat } from "../src/client/auto/executors/process.js";
import { loadExecutorRegistry } from "../src/client/auto/registry.js";
import { openRegistry } from "../src/client/connections/registry.js";
import { type Bridge, startBridge } from "../src/client/frontend/bridge.js";
import { frontendCatalogue, opencodeProviderConfig, validEfforts } from "../src/client/frontend/catalogue.js";
import { createAutoFrontendEngine } from "../src/client/frontend/engine.js";
import { writeTree } from "./context-helpers.js";
import { type FakeClis, installFakeClis } from "./fake-clis.js";
import { BIN, createCode, initWithDocs, runIvoai, startServer, tempDir } from "./helpers.js";
import { ensureAgentClis } from "./npm-tools.js";
import { opencodeEnv, runOpencode } from "./opencode.js";

const SECRET_ENV = "IVOAI_BRIDGE_SECRET";
const signals = { complexity: 0.1, context_need: 0.1, risk: 0.1, ambiguity: 0.1, est_tokens: 10 };
const plan = { tasks: [{ id: "n", kind: "research", instructions: "x", depends_on: [], signals }] };

let bin = "";
let root = "";
let env: NodeJS.ProcessEnv;
let main: Frontend;
let fakes: FakeClis;

/** Whether a process still runs (a zombie nobody reaped counts as ended). */
function isRunning(pid: number): boolean {
  const state = procStat(pid)?.state;
  return state !== undefined && state !== "Z" && state !== "X";
}

/** The bridge OpenCode talks to and OpenCode's provider entry for it. */
interface Frontend {
  bridge: Bridge;
  provider: ReturnType<typeof opencodeProviderConfig>;
}

function run(args: string[], onSpawn?: (child: ChildProcess) => void, frontend: Frontend = main) {
  const config = {
    share: "disabled",
    autoupdate: false,
    agent: { title: { disable: true } },
    // One id more than the bridge's catalogue: OpenCode may send it, ivoai must refuse it.
    provider: {
      ivoai: {
        ...frontend.provider,
        models: { ...frontend.provider.models, mdl_withdrawn: { name: "withdrawn" } },
      },
    },
  };
  return runOpencode(path.join(bin, "opencode"), args, {
    cwd: path.join(root, "project"),
    env: opencodeEnv(path.join(root, "oc-home"), config, { [SECRET_ENV]: frontend.bridge.secret }),
    ...(onSpawn ? { onSpawn } : {}),
  });
}

/** A bridge over the AUTO engine with these knowledge sources, the fakes as its executors. */
async function startFrontend(knowledgeSources: string[]): Promise<Frontend> {
  const connections = openRegistry(env);
  const executors = await loadExecutorRegistry({
    stateDir: connections.paths.stateDir,
    managedBin: path.join(connections.paths.dataDir, "bin"),
    env,
  });
  const started = await startBridge({
    engine: createAutoFrontendEngine({
      registry: connections,
      env,
      cwd: path.join(root, "project"),
      selfCommand: [process.execPath, BIN],
      knowledgeSources,
      notice: () => undefined,
      killAfterMs: 300,
    }),
    catalogue: () => frontendCatalogue(executors),
    validEfforts: validEfforts(executors),
    // OpenCode sends its own session id on every request.
    sessionHeader: "x-session-id",
  });
  return {
    bridge: started,
    provider: opencodeProviderConfig(frontendCatalogue(executors), started.url, SECRET_ENV),
  };
}
/** A real ivoai server with one ingested document, connected as knowledge source "acme". */
async function knowledgeServer() {
  const made = await tempDir();
  const docs = await tempDir("ivoai-docs-");
  await writeTree(docs.dir, {
    "deploy.md": "# Deploy\n\nWe deploy with the wombat pipeline: build, canary, then the full fleet.",
  });
  await initWithDocs(made.dir, docs.dir);
  const server = await startServer(made.dir);
  const { code } = await createCode(made.dir);
  const added = await runIvoai(
    ["connect", "server", "add", "acme", "--url", server.url, "--purpose", "acme", "--code-stdin"],
    { env, input: `${code}\n` },
  );
  expect(added.code, added.stderr).toBe(0);
  return {
    /** Forgets the connection (later tests run without knowledge), stops the server, removes its files. */
    async close() {
      const removed = await runIvoai(["disconnect", "server", "acme"], { env });
      expect(removed.code, removed.stderr).toBe(0);
      await server.stop();
      await made.cleanup();
      await docs.cleanup();
    },
  };
}
const turns = async () => (await fakes.log()).filter((line) => line.role !== "app-server");
/** A fresh log and script, and no quota memory from earlier tests' limits. */
async function fresh(script: Parameters<FakeClis["script"]>[0]) {
  await fakes.reset();
  await fakes.script(script);
  await rm(path.join(root, "state", "ivoai", "auto", "quota.json"), { force: true });
}
/** The fake codex's reported usage for one turn (test/fixtures/fake-auto-turn.mjs: runTurn). */
const fakeUsage = (prompt: string, reply: string) => ({
  input: 1000 + Math.ceil(Buffer.byteLength(prompt) / 4),
  output: 20 + Math.ceil(reply.length / 4),
});

beforeAll(async () => {
  bin = path.join(path.dirname(await ensureAgentClis(TESTED_VERSIONS)), ".bin");
  root = await mkdtemp(path.join(os.tmpdir(), "ivoai-frontend-e2e-"));
  await mkdir(path.join(root, "project"), { recursive: true });
  fakes = await installFakeClis(path.join(root, "fakes"));
  env = {
    ...process.env,
    ...fakes.env,
    XDG_CONFIG_HOME: path.join(root, "config"),
    XDG_STATE_HOME: path.join(root, "state"),
    XDG_DATA_HOME: path.join(root, "data"),
    HOME: root,
  };
  main = await startFrontend([]);
}, 900_000);

afterAll(async () => {
  await main?.bridge.close();
  await fakes?.killAll();
  if (root) await rm(root, { recursive: true, force: true });
});

describe("OpenCode → bridge → AUTO → official CLIs", () => {
  it("streams a turn back, and `--continue` resumes the same executor conversation", async () => {
    await fakes.script({
      codex: {
        turns: {
          plan: [{ reply: plan }],
          consolidate: [{ reply: "first answer from ivoai" }, { reply: "second answer from ivoai" }],
        },
      },
      claude: {},
    });
    const first = await run(["run", "-m", "ivoai/auto", "Implement the canary stage"]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain("first answer from ivoai");
    const second = await run(["run", "-c", "-m", "ivoai/auto", "Now add the tests"]);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain("second answer from ivoai");
    const plans = (await turns()).filter((line) => line.role === "plan");
    expect(plans).toHaveLength(2);
    const consolidations = (await turns()).filter((line) => line.role === "consolidate");
    expect(plans[1]?.resume).toBe(consolidations[0]?.thread_id);
  });

  it('answers `opencode run "a simple question"` through RAG when a knowledge source is selected', async () => {
    const server = await knowledgeServer();
    const knowing = await startFrontend(["acme"]);
    try {
      await fresh({
        codex: { turns: { answer: [{ reply: "We deploy with the wombat pipeline." }] } },
        claude: {},
      });
      const result = await run(
        ["run", "-m", "ivoai/auto", "What is the wombat pipeline?"],
        undefined,
        knowing,
      );
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain("We deploy with the wombat pipeline.");
      const logged = await turns();
      // Classic RAG: one answer turn with the brief, no planner.
      expect(logged.map((line) => [line.executor, line.role])).toEqual([["codex", "answer"]]);
      expect(logged[0]?.prompt).toContain("wombat pipeline: build, canary");
    } finally {
      await knowing.bridge.close();
      await server.close();
    }
  }, 300_000);

  it("reports the turn's tokens to OpenCode as the fake executors reported them", async () => {
    const answer = "answer whose tokens are counted";
    await fresh({
      codex: { turns: { plan: [{ reply: plan }], consolidate: [{ reply: answer }] } },
      claude: {},
    });
    const result = await run(["run", "--format", "json", "-m", "ivoai/auto", "Implement the usage stage"]);
    expect(result.code, result.stderr).toBe(0);
    const events = result.stdout
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as { type: string; part?: { tokens?: unknown } });
    const finish = events.find((event) => event.type === "step_finish");
    const done = await turns();
    expect(done.map((line) => line.role)).toEqual(["plan", "consolidate"]);
    const reported = done.map((line) =>
      fakeUsage(line.prompt, line.role === "plan" ? JSON.stringify(plan) : answer),
    );
    const input = reported.reduce((sum, usage) => sum + usage.input, 0);
    const output = reported.reduce((sum, usage) => sum + usage.output, 0);
    expect(finish?.part?.tokens, result.stdout).toEqual({
      total: input + output,
      input,
      output,
      reasoning: 0,
      cache: { read: 0, write: 0 },
    });
  });

  it('hands the router `opencode run "a question"` as typed, without the quotes run adds', async () => {
    await fresh({
      codex: { turns: { plan: [{ reply: plan }], consolidate: [{ reply: "the wombat pipeline" }] } },
      claude: {},
    });
    const result = await run(["run", "-m", "ivoai/auto", "What is the wombat pipeline?"]);
    expect(result.code, result.stderr).toBe(0);
    const first = (await turns())[0];
    expect(first?.prompt).toContain("What is the wombat pipeline?");
    expect(first?.prompt).not.toContain('"What is the wombat pipeline?"');
  });

  it("shows an engine failure as one readable line, not JSON, and does not re-send the turn", async () => {
    await fresh({
      codex: { turns: { plan: [{ crash: true }] } },
      claude: { turns: { plan: [{ crash: true }], handoff: [{ crash: true }] } },
    });
    const result = await run(["run", "-m", "ivoai/auto", "Implement the broken stage"]);
    expect(result.code).not.toBe(0);
    // OpenCode colours "Error: " (ANSI codes dropped here): the line is ivoai's words.
    const plain = result.stderr.replaceAll(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g"), "");
    expect(plain, result.stderr).toMatch(/^Error: ivoai: \S.*$/m);
    expect(result.stderr).not.toContain('{"message"');
    expect(result.stderr).not.toContain("ivoai_error");
    const planTurns = (await turns()).filter((line) => line.role === "plan");
    expect(planTurns.length, JSON.stringify(planTurns)).toBeLessThanOrEqual(2);
  });

  it("refuses a model the catalogue no longer has, naming it, without running any executor", async () => {
    await fakes.reset();
    const result = await run(["run", "-m", "ivoai/mdl_withdrawn", "Implement it"]);
    expect(result.code).not.toBe(0);
    expect(result.stdout + result.stderr).toMatch(/mdl_withdrawn.*not in ivoai's catalogue/);
    expect(await turns()).toEqual([]);
  });

  it("fails over mid-answer: codex's partial text, a marker naming both and the reason, then claude's answer", async () => {
    await fresh({
      codex: { turns: { plan: [{ reply: plan }], consolidate: [{ events_before: 1, limit: "usage" }] } },
      claude: { turns: { handoff: [{ reply: "answer from claude after the failover" }] } },
    });
    const result = await run(["run", "-m", "ivoai/auto", "Implement the retry stage"]);
    expect(result.code, result.stderr).toBe(0);
    // The fake codex streams "step 0" (its first event) before the usage limit.
    const partial = result.stdout.indexOf("step 0");
    const marker = result.stdout.indexOf("— ivoai: codex hit its usage limit; claude continues from here —");
    const answer = result.stdout.indexOf("answer from claude after the failover");
    expect(
      [partial, marker, answer].every((at) => at >= 0),
      result.stdout,
    ).toBe(true);
    expect(partial < marker && marker < answer, result.stdout).toBe(true);
    expect((await turns()).map((line) => [line.executor, line.role])).toEqual([
      ["codex", "plan"],
      ["codex", "consolidate"],
      ["claude", "handoff"],
    ]);
  });

  it("ends the executor's process group when OpenCode goes away mid-turn", async () => {
    await fakes.reset();
    await fakes.script({ codex: { turns: { plan: [{ hang: true, grandchild: true }] } }, claude: {} });
    // The previous test's usage limit would keep codex from being admitted.
    await rm(path.join(root, "state", "ivoai", "auto", "quota.json"), { force: true });
    let client: ChildProcess | undefined;
    const running = run(["run", "-m", "ivoai/auto", "Implement the slow stage"], (child) => {
      client = child;
    });
    let hung: Awaited<ReturnType<typeof turns>>[number] | undefined;
    for (const deadline = Date.now() + 60_000; !hung && Date.now() < deadline; ) {
      hung = (await turns()).find((line) => line.grandchild_pid);
      if (!hung) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(
      hung?.grandchild_pid,
      `no hung turn in 60 s; turns: ${JSON.stringify(await turns())}`,
    ).toBeGreaterThan(0);
    client?.kill("SIGKILL");
    await running;
    const alive = () => [hung?.pid, hung?.grandchild_pid].some((pid) => isRunning(pid as number));
    for (const deadline = Date.now() + 40_000; alive() && Date.now() < deadline; )
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(alive(), `pid ${hung?.pid} or grandchild ${hung?.grandchild_pid} still running after 40 s`).toBe(
      false,
    );
  }, 120_000);
});
