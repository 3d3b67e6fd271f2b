// AUTO end to end: the built ivoai against a real ivoai server, with fake `codex` and `claude` executables
// that honour the official CLIs' contracts (JSONL / stream-json events, app-server rate limits, resume ids).
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { autoClientEnv } from "./auto-harness.js";
import { writeTree } from "./context-helpers.js";
import { type FakeClis, installFakeClis } from "./fake-clis.js";
import {
  autoJsonLines,
  BIN,
  createCode,
  initWithDocs,
  OUTSIDE_REPO,
  type RunningServer,
  runIvoai,
  startServer,
  tempDir,
} from "./helpers.js";

interface SessionJson {
  id: string;
  mode: string;
  live: boolean;
  status: string;
  exit_code: number | null;
  knowledge_sources: string[];
  auto: {
    phase: string;
    checkpoint: { seq: number };
    route: { kind: string; reason: string } | null;
    primary: string;
    knowledge: { memory: string; context: string; brief_bytes: number } | null;
    plan: { attempts: number; repaired: boolean; tasks: number } | null;
    tasks: {
      id: string;
      state: string;
      tier: number;
      score: number;
      profile: { executor: string; model: string } | null;
      profile_origin: string;
      reason: string | null;
      refs: { ref: string; sha256: string }[];
    }[];
    failovers: { from: string; to: string; reason: string; scope: string; handoff_ms: number | null }[];
    error: string | null;
    processes: { pid: number; start_ticks: string | null }[];
  };
}

/** Whether a process still runs (a zombie nobody reaped counts as ended). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/^[ZX]$/.test(stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3));
  } catch {
    return false;
  }
}

const task = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  kind: "research",
  instructions: `Survey part ${id} of the wombat pipeline`,
  depends_on: [],
  signals: { complexity: 0.5, context_need: 0.5, risk: 0.3, ambiguity: 0.2, est_tokens: 30_000 },
  ...extra,
});

describe("ivoai auto", () => {
  const cleanups: (() => Promise<void>)[] = [];
  let server: RunningServer;
  let serverRoot: string;
  let fakes: FakeClis;
  let env: NodeJS.ProcessEnv;
  const auto = (args: string[], timeoutMs = 90_000) => runIvoai(["auto", ...args], { env, timeoutMs });
  const show = async (id: string): Promise<SessionJson> => {
    const shown = await runIvoai(["session", "show", id, "--json"], { env });
    expect(shown.code).toBe(0);
    return JSON.parse(shown.stdout) as SessionJson;
  };
  /** A fresh script and log for one scenario; the registry cache is dropped so every run probes again. */
  const scenario = async (script: Parameters<FakeClis["script"]>[0]) => {
    await fakes.reset();
    await fakes.script(script);
    await rm(path.join(env.XDG_STATE_HOME as string, "ivoai", "auto"), { recursive: true, force: true });
  };
  const turns = async () => (await fakes.log()).filter((line) => line.role !== "app-server");
  const approvals = async () =>
    JSON.parse((await runIvoai(["server", "approvals", "list", "--root", serverRoot, "--json"])).stdout)
      .approvals as unknown[];

  beforeAll(async () => {
    const made = await tempDir();
    const docs = await tempDir("ivoai-docs-");
    const xdg = await tempDir("ivoai-client-");
    cleanups.push(made.cleanup, docs.cleanup, xdg.cleanup);
    serverRoot = made.dir;
    await writeTree(docs.dir, {
      "deploy.md": "# Deploy\n\nWe deploy with the wombat pipeline: build, canary, then the full fleet.",
    });
    await initWithDocs(made.dir, docs.dir);
    server = await startServer(made.dir);
    fakes = await installFakeClis(path.join(xdg.dir, "fakes"));
    env = autoClientEnv(xdg.dir, fakes);
    const { code } = await createCode(made.dir);
    const added = await runIvoai(
      ["connect", "server", "add", "acme", "--url", server.url, "--purpose", "acme", "--code-stdin"],
      { env, input: `${code}\n` },
    );
    expect(added.code).toBe(0);
  });
  afterAll(async () => {
    await fakes?.killAll();
    await server?.stop();
    for (const cleanup of cleanups) await cleanup();
  });

  it("answers a simple knowledge question through classic RAG: memory then context once, one executor turn", async () => {
    await scenario({
      codex: { turns: { answer: [{ reply: "We deploy with the wombat pipeline." }] } },
      claude: {},
    });
    const result = await auto([
      "--knowledge-source",
      "acme",
      "--print",
      "What is the wombat pipeline?",
      "--json",
    ]);
    expect(result.stderr).not.toMatch(/ivoai_cap_/);
    expect(result.code).toBe(0);
    const out = autoJsonLines(result.stdout).result as {
      session_id: string;
      answer: string;
      route: { kind: string };
    };
    expect(out.answer).toBe("We deploy with the wombat pipeline.");
    expect(out.route.kind).toBe("rag");
    const logged = await turns();
    expect(logged.map((turn) => [turn.executor, turn.role])).toEqual([["codex", "answer"]]);
    // The brief carried what Context found, fenced as untrusted data.
    expect(logged[0]?.prompt).toContain("wombat pipeline: build, canary");
    const session = await show(out.session_id);
    expect(session.mode).toBe("orchestrated");
    expect(session.knowledge_sources).toEqual(["acme"]);
    expect(session.auto.knowledge).toMatchObject({ memory: "empty", context: "ok" });
    expect(session.auto.phase).toBe("done");
    // Exactly one memory query and one context search reached the server.
    const audit = await runIvoai(["server", "audit", "--root", serverRoot, "--json"]);
    const events = (JSON.parse(audit.stdout) as { events: { tool: string }[] }).events;
    expect(events.filter((event) => event.tool === "memory_query")).toHaveLength(1);
    expect(events.filter((event) => event.tool === "context_search")).toHaveLength(1);
  });

  it("plans a 12-task DAG, runs workers at most 3 at once, and hands the primary refs, not bodies", async () => {
    const tasks = [
      ...Array.from({ length: 9 }, (_, index) => task(`t${index + 1}`)),
      task("t10", { kind: "analysis", depends_on: ["t1", "t2"] }),
      task("small", {
        signals: { complexity: 0.1, context_need: 0.1, risk: 0.1, ambiguity: 0.1, est_tokens: 200 },
      }),
      task("apply", { kind: "change", depends_on: ["t10"] }),
    ];
    await scenario({
      codex: {
        turns: {
          plan: [{ reply: { tasks } }],
          worker: [
            {
              delay_ms: 400,
              reply: { summary: "finding for {task}: SECRET-BODY-{task}", findings: ["f1"], state_delta: [] },
            },
          ],
          consolidate: [
            {
              reply: "All done.",
              mcp_calls: [{ server: "ivoai-orchestrator", tool: "task_status", args: {} }],
            },
          ],
        },
      },
      claude: {
        turns: {
          worker: [
            {
              delay_ms: 400,
              reply: { summary: "finding for {task}: SECRET-BODY-{task}", findings: ["f1"], state_delta: [] },
            },
          ],
        },
      },
    });
    const result = await auto([
      "--knowledge-source",
      "acme",
      "--workers",
      "3",
      "--json",
      "--",
      "Implement a canary stage in the wombat pipeline and write tests for it",
    ]);
    expect(result.code).toBe(0);
    const out = autoJsonLines(result.stdout).result as { session_id: string; answer: string };
    expect(out.answer).toBe("All done.");
    const logged = await turns();
    const workers = logged.filter((turn) => turn.role === "worker");
    expect(workers).toHaveLength(10);
    // Never more than 3 workers at once, and the cap was reached.
    const edges = workers.flatMap((turn) => [
      [turn.started_at, 1],
      [turn.ended_at, -1],
    ]) as [number, number][];
    edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let running = 0;
    let peak = 0;
    for (const [, delta] of edges) {
      running += delta;
      peak = Math.max(peak, running);
    }
    expect(peak).toBe(3);
    // t10 ran only after both of its dependencies had finished.
    const at = (id: string) => workers.find((turn) => turn.task === id);
    expect(at("t10")?.started_at).toBeGreaterThanOrEqual(
      Math.max(at("t1")?.ended_at ?? 0, at("t2")?.ended_at ?? 0),
    );
    // Workers were read-only and never reached the orchestrator; no capability or token is ever in argv.
    for (const worker of workers) {
      expect(worker.read_only).toBe(true);
      expect(worker.env_ivoai).not.toContain("IVOAI_ORCHESTRATOR_TOKEN");
      expect(worker.env_ivoai).not.toContain("IVOAI_ORCHESTRATOR_SOCKET");
    }
    expect(logged.find((turn) => turn.role === "plan")?.env_ivoai).toContain("IVOAI_ORCHESTRATOR_TOKEN");
    expect(JSON.stringify(logged.map((turn) => turn.argv))).not.toMatch(/ivoai_cap_|ivoai_orc_/);
    expect(result.stdout + result.stderr).not.toMatch(/ivoai_cap_|ivoai_orc_/);
    const session = await show(out.session_id);
    expect(session.auto.plan).toMatchObject({ attempts: 1, tasks: 12 });
    const byId = Object.fromEntries(session.auto.tasks.map((entry) => [entry.id, entry]));
    expect(byId.apply?.state).toBe("primary");
    expect(byId.small?.state).toBe("primary");
    expect(byId.small?.reason).toMatch(/uneconomic/);
    expect(byId.t1).toMatchObject({ state: "done", profile_origin: "scores" });
    expect(byId.t1?.refs[0]?.ref).toMatch(/^art_[0-9a-f]{32}$/);
    // The primary saw refs through the orchestrator MCP; the session record never holds a worker's answer.
    const consolidate = logged.find((turn) => turn.role === "consolidate");
    expect(consolidate?.mcp_results[0]).toMatchObject({ tool: "task_status", ok: true });
    expect(consolidate?.mcp_results[0]?.text).toContain(byId.t1?.refs[0]?.ref);
    const record = await readFile(
      path.join(env.XDG_STATE_HOME as string, "ivoai/sessions", `${out.session_id}.json`),
      "utf8",
    );
    expect(record).not.toContain("SECRET-BODY");
    expect(record).not.toMatch(/ivoai_cap_|ivoai_orc_/);
    expect(record).not.toContain("Survey part");
    expect(record).not.toContain("canary stage");
    const text = await runIvoai(["session", "show", out.session_id], { env });
    expect(text.stdout).toMatch(/t10\s+analysis\s+t1,t2/);
  });

  it("refuses a worker's write: nothing reaches the approval gate", async () => {
    await scenario({
      codex: {
        turns: {
          plan: [{ reply: { tasks: [task("w1")] } }],
          worker: [
            {
              mcp_calls: [
                {
                  server: "ivoai-memory",
                  tool: "memory_write_page",
                  args: { path: "notes/w", body: "worker" },
                },
                {
                  server: "ivoai-memory",
                  tool: "memory_write_page",
                  args: { path: "notes/w", body: "worker" },
                  bypass: true,
                },
                { server: "ivoai-context", tool: "context_search", args: { query: "wombat" } },
              ],
              reply: { summary: "read only", findings: [], state_delta: [] },
            },
          ],
          consolidate: [{ reply: "ok" }],
        },
      },
      claude: {},
    });
    const result = await auto(["--knowledge-source", "acme", "--print", "Refactor the deploy docs"]);
    expect(result.code).toBe(0);
    const worker = (await turns()).find((turn) => turn.role === "worker");
    expect(worker?.mcp_results[0]).toMatchObject({ tool: "memory_write_page", ok: false });
    // A CLI that ignored its read-only configuration still meets the router's read-only capability.
    expect(worker?.mcp_results[1]).toMatchObject({ tool: "memory_write_page", ok: false });
    expect(worker?.mcp_results[1]?.error).toMatch(/READ_ONLY_WORKER/);
    expect(worker?.mcp_results[2]).toMatchObject({ tool: "context_search", ok: true });
    expect(await approvals()).toEqual([]);
  });

  it("fails over to the other vendor on a hard limit mid-plan, keeping the knowledge selection", async () => {
    const small = task("note", {
      signals: { complexity: 0.1, context_need: 0.1, risk: 0.1, ambiguity: 0.1, est_tokens: 100 },
    });
    await scenario({
      codex: { turns: { plan: [{ limit: "usage", events_before: 1 }] } },
      claude: {
        turns: {
          handoff: [
            {
              reply: { tasks: [small] },
              mcp_calls: [{ server: "ivoai-context", tool: "context_search", args: { query: "wombat" } }],
            },
          ],
          consolidate: [{ reply: "Answer from claude." }],
        },
      },
    });
    const result = await auto([
      "--knowledge-source",
      "acme",
      "--print",
      "Implement the canary stage of the wombat pipeline",
      "--json",
    ]);
    expect(result.code).toBe(0);
    const out = autoJsonLines(result.stdout).result as { session_id: string; answer: string };
    expect(out.answer).toBe("Answer from claude.");
    const logged = await turns();
    expect(logged.map((turn) => [turn.executor, turn.role])).toEqual([
      ["codex", "plan"],
      ["claude", "handoff"],
      ["claude", "consolidate"],
    ]);
    // The alternate plans from the start, with the same brief, through the same knowledge selection.
    expect(logged[1]?.prompt.split("\n")[0]).toBe("[ivoai:handoff] [ivoai:plan]");
    expect(logged[1]?.prompt).toContain("wombat pipeline: build, canary");
    expect(logged[1]?.mcp_results[0]).toMatchObject({ ok: true });
    expect(logged[1]?.mcp_results[0]?.text).toContain("wombat");
    // The consolidation resumed claude's own conversation, not codex's.
    expect(logged[2]?.resume).toBe(logged[1]?.thread_id);
    const session = await show(out.session_id);
    expect(session.knowledge_sources).toEqual(["acme"]);
    expect(session.auto.primary).toBe("claude");
    expect(session.auto.failovers).toHaveLength(1);
    expect(session.auto.failovers[0]).toMatchObject({ from: "codex", to: "claude", scope: "primary" });
    expect(session.auto.failovers[0]?.reason).toMatch(/usage/);
    // Recorded (its speed is bench/auto.ts's to measure, not a test's on a shared host).
    expect(session.auto.failovers[0]?.handoff_ms).toBeGreaterThanOrEqual(0);
  });

  it("moves workers that hit the same limit together to the other vendor as one failover", async () => {
    await scenario({
      claude: {
        turns: {
          plan: [{ reply: { tasks: [task("a"), task("b"), task("c")] } }],
          worker: [{ delay_ms: 200, limit: "usage" }],
        },
      },
      codex: {
        turns: {
          worker: [{ reply: { summary: "from codex", findings: [], state_delta: [] } }],
          handoff: [{ reply: "Consolidated by codex." }],
        },
      },
    });
    const result = await auto([
      "--planner",
      "claude",
      "--workers",
      "3",
      "--print",
      "Implement the three parts",
      "--json",
    ]);
    expect(result.code).toBe(0);
    const out = autoJsonLines(result.stdout).result as { session_id: string; answer: string };
    expect(out.answer).toBe("Consolidated by codex.");
    const session = await show(out.session_id);
    expect(session.auto.failovers).toHaveLength(1);
    expect(session.auto.primary).toBe("codex");
    expect(session.auto.tasks.map((entry) => [entry.state, entry.profile?.executor])).toEqual([
      ["done", "codex"],
      ["done", "codex"],
      ["done", "codex"],
    ]);
  });

  it("stops cleanly after two failovers when the third limit comes", async () => {
    // Limits that have already reset by the time ivoai re-probes: each vendor is admitted again, so only the
    // failover cap stops the ping-pong.
    const limit = { limit: "usage", resets_at: Math.floor(Date.now() / 1000) - 1 };
    await scenario({
      codex: { turns: { answer: [limit], handoff: [limit] } },
      claude: { turns: { handoff: [limit] } },
    });
    const result = await auto([
      "--knowledge-source",
      "acme",
      "--print",
      "What is the wombat pipeline?",
      "--json",
    ]);
    expect(result.code).toBe(75);
    expect(result.stderr).toMatch(/stopped after 2 failovers/);
    const out = autoJsonLines(result.stdout).result as { session_id: string };
    const session = await show(out.session_id);
    expect(session.auto.failovers.map((entry) => `${entry.from}>${entry.to}`)).toEqual([
      "codex>claude",
      "claude>codex",
    ]);
    expect(session.auto.phase).toBe("stopped");
    expect((await turns()).map((turn) => turn.executor)).toEqual(["codex", "claude", "codex"]);
  });

  it("prints nothing on stdout when a headless run fails, and says why on stderr in one line", async () => {
    const limit = { limit: "usage", resets_at: Math.floor(Date.now() / 1000) - 1 };
    await scenario({
      codex: { turns: { answer: [limit], handoff: [limit] } },
      claude: { turns: { handoff: [limit] } },
    });
    const result = await auto(["--knowledge-source", "acme", "--print", "What is the wombat pipeline?"]);
    expect(result.code, result.stderr).toBe(75);
    expect(result.stdout).toBe("");
    const reasons = result.stderr.split("\n").filter((line) => /stopped after 2 failovers/.test(line));
    expect(reasons, result.stderr).toHaveLength(1);
  });

  it("says on exit 75 when each executor at its limit resets, in text and in --json", async () => {
    // Limits that reset in the future: after codex → claude, claude's limit finds codex still refused.
    const codexReset = Math.floor(Date.now() / 1000) + 2 * 3600 + 10 * 60 + 40;
    const claudeReset = Math.floor(Date.now() / 1000) + 3 * 3600 + 5 * 60 + 40;
    await scenario({
      codex: { turns: { answer: [{ limit: "usage", resets_at: codexReset }] } },
      claude: { turns: { handoff: [{ limit: "usage", resets_at: claudeReset }] } },
    });
    const result = await auto([
      "--knowledge-source",
      "acme",
      "--print",
      "What is the wombat pipeline?",
      "--json",
    ]);
    expect(result.code, result.stderr).toBe(75);
    const codexIso = new Date(codexReset * 1000).toISOString();
    const claudeIso = new Date(claudeReset * 1000).toISOString();
    expect(result.stderr).toMatch(/no executor can continue/);
    expect(result.stderr).toContain(`codex resets at ${codexIso} (in `);
    expect(result.stderr).toContain(`claude resets at ${claudeIso} (in `);
    expect(result.stderr).toMatch(/codex resets at \S+ \(in \d+h \d+m\)/);
    const out = autoJsonLines(result.stdout).result as {
      quota_resets: { executor: string; resets_at: string | null }[];
    };
    expect(out.quota_resets.map(({ executor, resets_at }) => ({ executor, resets_at }))).toEqual([
      { executor: "codex", resets_at: codexIso },
      { executor: "claude", resets_at: claudeIso },
    ]);
  });

  it("asks once for a repair of an invalid plan, then fails clearly", async () => {
    await scenario({
      codex: {
        turns: {
          plan: [{ reply: { tasks: [task("a", { depends_on: ["b"] }), task("b", { depends_on: ["a"] })] } }],
          repair: [{ reply: "still not a plan" }],
        },
      },
      claude: {},
    });
    const result = await auto(["--knowledge-source", "acme", "--print", "Implement the canary stage"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/invalid after one repair/);
    const logged = await turns();
    expect(logged.map((turn) => turn.role)).toEqual(["plan", "repair"]);
    // The repair resumed the planner's own conversation.
    expect(logged[1]?.resume).toBe(logged[0]?.thread_id);
  });

  it("keeps its last checkpoint when ivoai is killed, and the next start ends what it left running", async () => {
    await scenario({
      codex: {
        turns: {
          plan: [{ reply: { tasks: [task("slow")] } }],
          worker: [{ hang: true, grandchild: true }],
        },
      },
      claude: {},
    });
    const child = spawn(
      process.execPath,
      [BIN, "auto", "--knowledge-source", "acme", "--print", "Implement it"],
      {
        cwd: OUTSIDE_REPO,
        env: { ...process.env, ...env },
        stdio: "ignore",
      },
    );
    const exited = new Promise((resolve) => child.once("exit", resolve));
    // Wait (by polling the record, not by sleeping) until the worker runs.
    let session: SessionJson | undefined;
    for (let attempt = 0; attempt < 600 && !session; attempt++) {
      const list = await runIvoai(["session", "list", "--json"], { env });
      const ids = (
        JSON.parse(list.stdout) as { sessions: { id: string; mode: string; live: boolean }[] }
      ).sessions
        .filter((entry) => entry.mode === "orchestrated" && entry.live)
        .map((entry) => entry.id);
      for (const id of ids) {
        const candidate = await show(id);
        if (candidate.auto.tasks[0]?.state === "running" && candidate.auto.processes.length > 0)
          session = candidate;
      }
    }
    expect(session).toBeDefined();
    child.kill("SIGKILL");
    await exited;
    const after = await show(session?.id as string);
    expect(after.live).toBe(false);
    expect(after.auto.phase).toBe("running");
    expect(after.auto.tasks[0]?.state).toBe("running");
    expect(after.auto.checkpoint.seq).toBeGreaterThanOrEqual(session?.auto.checkpoint.seq ?? 0);
    const text = await runIvoai(["session", "show", session?.id as string], { env });
    expect(text.stdout).toMatch(/gone/);
    expect(text.stdout).toMatch(/checkpoint \d+/);
    const worker = (await turns()).find((turn) => turn.role === "worker");
    expect(running(worker?.grandchild_pid as number)).toBe(true);

    // The next AUTO start closes the session and ends the worker's process group it recorded.
    await scenario({ codex: { turns: { answer: [{ reply: "fine" }] } }, claude: {} });
    const next = await auto(["--knowledge-source", "acme", "--print", "What is the wombat pipeline?"]);
    expect(next.code).toBe(0);
    expect(next.stderr).toContain(`closed ${session?.id}`);
    for (const pid of [worker?.pid, worker?.grandchild_pid] as number[]) expect(running(pid)).toBe(false);
    const recovered = await show(session?.id as string);
    expect(recovered.status).toBe("failed");
    expect(recovered.auto.phase).toBe("running");
    expect(recovered.auto.checkpoint.seq).toBe(after.auto.checkpoint.seq);
  });

  it("stops on SIGTERM: the worker's whole process group ends and the session says it was stopped", async () => {
    await scenario({
      codex: {
        turns: {
          plan: [{ reply: { tasks: [task("slow")] } }],
          worker: [{ hang: true, grandchild: true, ignore_term: true }],
        },
      },
      claude: {},
    });
    const child = spawn(
      process.execPath,
      [BIN, "auto", "--knowledge-source", "acme", "--print", "Implement it"],
      {
        cwd: OUTSIDE_REPO,
        env: { ...process.env, ...env },
        stdio: "ignore",
      },
    );
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    let worker: Awaited<ReturnType<typeof turns>>[number] | undefined;
    // Polls the fakes' log until the worker (and its grandchild) run.
    for (const deadline = Date.now() + 30_000; !worker?.grandchild_pid && Date.now() < deadline; ) {
      worker = (await turns()).find((turn) => turn.role === "worker");
      if (!worker?.grandchild_pid) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(
      worker?.grandchild_pid,
      `no worker in 30 s; turns: ${JSON.stringify(await turns())}`,
    ).toBeGreaterThan(0);
    child.kill("SIGTERM");
    expect(await exited).toBe(143);
    for (const pid of [worker?.pid, worker?.grandchild_pid] as number[]) expect(running(pid)).toBe(false);
    const sessions = JSON.parse((await runIvoai(["session", "list", "--json"], { env })).stdout) as {
      sessions: { id: string }[];
    };
    const session = await show(sessions.sessions[0]?.id as string);
    expect(session.auto.phase).toBe("stopped");
    expect(session.auto.error).toMatch(/SIGTERM/);
    expect(session.auto.tasks[0]?.state).toBe("cancelled");
    expect(session.live).toBe(false);
  });

  it("runs tasks the primary delegates beside the plan's, and ends them with the session", async () => {
    const orchestrator = (tool: string, args: Record<string, unknown>) => ({
      server: "ivoai-orchestrator",
      tool,
      args,
    });
    await scenario({
      codex: {
        turns: {
          plan: [
            {
              reply: { tasks: [task("t1")] },
              mcp_calls: [orchestrator("delegate", { instructions: "look at the tests", kind: "review" })],
            },
          ],
          worker: [{ reply: { summary: "ok {task}", findings: [], state_delta: [] } }],
          consolidate: [
            {
              reply: "Done, without waiting for the last one.",
              await_task: "del:2",
              mcp_calls: [
                orchestrator("delegate", { instructions: "a long look", kind: "research" }),
                orchestrator("task_status", {}),
              ],
            },
          ],
        },
        worker_by_task: { "del:2": [{ hang: true, grandchild: true }] },
      },
      claude: {},
    });
    const result = await auto([
      "--knowledge-source",
      "acme",
      "--workers",
      "1",
      "--print",
      "Implement it",
      "--json",
    ]);
    expect(result.code).toBe(0);
    const out = autoJsonLines(result.stdout).result as { session_id: string };
    const logged = await turns();
    const hung = logged.find((turn) => turn.task === "del:2");
    expect(hung?.grandchild_pid).toBeGreaterThan(0);
    // ivoai ended the delegated worker's whole process group before it exited.
    for (const pid of [hung?.pid, hung?.grandchild_pid] as number[]) expect(running(pid)).toBe(false);
    const session = await show(out.session_id);
    expect(session.auto.tasks.map((entry) => [entry.id, entry.state])).toEqual([
      ["del:1", "done"],
      ["t1", "done"],
      ["del:2", "cancelled"],
    ]);
    // With one worker slot, the delegated task and the plan's task never ran at the same time.
    const first = logged.find((turn) => turn.task === "del:1");
    const planned = logged.find((turn) => turn.task === "t1");
    const [early, late] = [first, planned].sort((a, b) => (a?.started_at ?? 0) - (b?.started_at ?? 0));
    expect(late?.started_at).toBeGreaterThanOrEqual(early?.ended_at ?? Number.POSITIVE_INFINITY);
  });

  it("session start --mode orchestrated runs the same engine with the executor as planner", async () => {
    await scenario({ codex: {}, claude: { turns: { answer: [{ reply: "From claude." }] } } });
    const result = await runIvoai(
      [
        "session",
        "start",
        "--executor",
        "claude",
        "--mode",
        "orchestrated",
        "--knowledge-source",
        "acme",
        "--",
        "What is the wombat pipeline?",
      ],
      { env, timeoutMs: 60_000 },
    );
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe("From claude.");
    expect((await turns()).map((turn) => turn.executor)).toEqual(["claude"]);
    const bad = await runIvoai(["auto", "--workers", "5", "--print", "x"], { env });
    expect(bad.code).toBe(2);
  });
});
