// AUTO people can watch and resume: the event stream of a 12-task plan with a failover mid-plan (headless
// lines, --json JSON Lines, `session watch` from another process), usage summed per task and session, and
// kill -9 followed by `session resume`, which finishes the plan without running done tasks again.
import { appendFile, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AutoBench, openAutoBench, planTask } from "./auto-harness.js";
import { autoJsonLines } from "./helpers.js";

interface Usage {
  input_tokens: number;
  cached_input_tokens: number;
  output_tokens: number;
  cost_usd: number | null;
}
interface Event {
  v: number;
  seq: number;
  session: string;
  type: string;
  task_id?: string | null;
  executor?: string | null;
  usage?: Usage | null;
  progress?: { done: number; total: number; running: string[] };
  [key: string]: unknown;
}
interface Session {
  id: string;
  state: string;
  status: string;
  auto: {
    phase: string;
    checkpoint: { seq: number };
    tasks: { id: string; state: string; usage: Usage | null; profile: { executor: string } | null }[];
    usage: Usage & { turns: number };
    turns: { kind: string; task_id: string | null; usage: Usage | null }[];
    failovers: {
      task_id: string | null;
      from: string;
      to: string;
      limit_kind: string;
      resets_at: string | null;
    }[];
    resumes: { from_checkpoint: number }[];
    threads: { codex: string | null; claude: string | null };
  };
}

const worker = (delay = 150) => ({
  delay_ms: delay,
  reply: { summary: "finding for {task}", findings: ["f1"], state_delta: [] },
});
const twelve = () => [
  ...Array.from({ length: 11 }, (_, index) => planTask(`t${index + 1}`)),
  planTask("t12", { kind: "analysis", depends_on: ["t1", "t2"] }),
];

/** Polls (never sleeps blindly) until `check` gives a value; says what it last saw when it gives up. */
async function until<T>(
  what: string,
  check: () => Promise<T | undefined>,
  seen: () => Promise<string>,
): Promise<T> {
  for (let attempt = 0; attempt < 1200; attempt++) {
    const value = await check();
    if (value !== undefined) return value;
    await sleep(100);
  }
  throw new Error(`gave up waiting for ${what}; last saw: ${await seen()}`);
}

const sum = (usages: (Usage | null | undefined)[]) =>
  usages.reduce(
    (total, usage) => ({
      input_tokens: total.input_tokens + (usage?.input_tokens ?? 0),
      output_tokens: total.output_tokens + (usage?.output_tokens ?? 0),
    }),
    { input_tokens: 0, output_tokens: 0 },
  );

describe("ivoai auto progress, watch and resume", () => {
  let bench: AutoBench;
  beforeAll(async () => {
    bench = await openAutoBench();
  });
  afterAll(async () => {
    await bench?.close();
  });

  const liveSession = () =>
    until(
      "a live orchestrated session",
      async () => {
        const listed = await bench.ivoai(["session", "list", "--json"]);
        const rows = (
          JSON.parse(listed.stdout) as { sessions: { id: string; mode: string; state: string }[] }
        ).sessions;
        return rows.find((row) => row.mode === "orchestrated" && row.state === "running")?.id;
      },
      async () => (await bench.ivoai(["session", "list"])).stdout,
    );

  it("streams every task event of a 12-task plan with a failover mid-plan, the same to --json, stderr and session watch", async () => {
    await bench.scenario({
      codex: {
        turns: { plan: [{ reply: { tasks: twelve() } }], worker: [worker()] },
        worker_by_task: { t5: [{ delay_ms: 100, limit: "usage" }] },
      },
      claude: { turns: { worker: [worker()], handoff: [{ reply: "Consolidated by claude." }] } },
    });
    const began = performance.now();
    const run = bench.spawnIvoai([
      "auto",
      "--workers",
      "3",
      "--json",
      "--print",
      "Add a canary stage to the wombat pipeline",
    ]);
    const id = await liveSession();
    const watched = await bench.ivoai(["session", "watch", id, "--json"], 120_000);
    expect(await run.exited).toBe(0);
    const { result, events } = autoJsonLines<{
      session_id: string;
      answer: string;
      usage: Usage & { turns: number };
    }>(run.stdout());
    expect(result.session_id).toBe(id);
    expect(result.answer).toBe("Consolidated by claude.");
    expect(watched.code, watched.stderr).toBe(0);
    expect(autoJsonLinesOf(watched.stdout)).toEqual(events);

    // One versioned stream: numbered from 1 without gaps, started first and ended last.
    expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index + 1));
    expect(new Set(events.map((event) => event.session))).toEqual(new Set([id]));
    expect(events[0]?.type).toBe("session.started");
    expect(events.at(-1)).toMatchObject({ type: "session.ended", exit_code: 0, phase: "done" });
    // Elapsed time is the run's own: never more than the test has waited for it.
    const elapsed = (events.at(-1) as Event).progress as unknown as { elapsed_ms: number };
    expect(elapsed.elapsed_ms).toBeLessThanOrEqual(performance.now() - began);
    const plan = events.findIndex((event) => event.type === "plan");
    expect(events[plan]).toMatchObject({ tasks: 12, on_workers: 12, in_primary: 0 });
    const typed = events as Event[];
    for (const task of twelve()) {
      const mine = typed.filter((event) => event.task_id === task.id && event.type.startsWith("task."));
      const started = mine.findIndex((event) => event.type === "task.started");
      const done = mine.findIndex((event) => event.type === "task.done");
      expect(started, task.id).toBeGreaterThanOrEqual(0);
      expect(done, task.id).toBeGreaterThan(started);
      expect(typed.indexOf(mine[started] as Event)).toBeGreaterThan(plan);
      expect(mine[done]?.usage?.input_tokens, task.id).toBeGreaterThan(0);
      expect(mine.filter((event) => event.type === "task.failed")).toEqual([]);
    }
    // t12 builds on t1 and t2: it starts only after both are done.
    const at = (type: string, task: string) =>
      typed.findIndex((event) => event.type === type && event.task_id === task);
    expect(at("task.started", "t12")).toBeGreaterThan(Math.max(at("task.done", "t1"), at("task.done", "t2")));
    // The failover names both executors, the limit and when it resets, and t5 is done by claude.
    const failover = typed.find((event) => event.type === "failover" && event.task_id === "t5");
    expect(failover).toMatchObject({ from: "codex", to: "claude", limit_kind: "usage_limit", scope: "task" });
    expect(Date.parse(failover?.resets_at as string)).toBeGreaterThan(Date.now());
    expect(typed.find((event) => event.type === "task.done" && event.task_id === "t5")?.executor).toBe(
      "claude",
    );
    // Progress counts up to 12 of 12.
    const counts = typed
      .filter((event) => event.type === "task.done")
      .map((event) => event.progress?.done ?? 0);
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    expect(counts.at(-1)).toBe(12);

    // Usage: every turn is an event; the session's sums are those of its turns, each task's those of its turns.
    const turns = typed.filter((event) => event.type === "turn");
    expect(result.usage.turns).toBe(turns.length);
    expect(sum([result.usage])).toEqual(sum(turns.map((event) => event.usage)));
    const session = await bench.show<Session>(id);
    for (const task of session.auto.tasks) {
      expect(sum([task.usage]), task.id).toEqual(
        sum(session.auto.turns.filter((turn) => turn.task_id === task.id).map((turn) => turn.usage)),
      );
    }
    expect(session.auto.usage.cost_usd).toBeGreaterThan(0);

    // Without --json, people get one line per task event on stderr.
    await bench.scenario({
      codex: {
        turns: {
          plan: [{ reply: { tasks: twelve() } }],
          worker: [worker(20)],
          consolidate: [{ reply: "ok" }],
        },
      },
      claude: {},
    });
    const text = await bench.ivoai([
      "auto",
      "--workers",
      "3",
      "--print",
      "Add a canary stage to the wombat pipeline",
    ]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout.trim()).toBe("ok");
    for (const task of twelve()) {
      expect(text.stderr).toMatch(new RegExp(`ivoai auto: \\[\\d+/12\\] ${task.id} started · codex`));
      expect(text.stderr).toMatch(
        new RegExp(`ivoai auto: \\[\\d+/12\\] ${task.id} done · codex .* · \\d+\\.\\ds · \\d+ tokens`),
      );
    }
    expect(text.stderr).toMatch(/ivoai auto: session done \(exit 0\) · \[12\/12\] tasks/);
  });

  it("resumes a session killed with -9: done tasks are not run again, the rest finish, the conversation continues", async () => {
    await bench.scenario({
      codex: {
        turns: {
          plan: [{ reply: { tasks: twelve() } }],
          worker: [worker(50)],
          consolidate: [{ reply: "Resumed and done." }],
        },
        // Three tasks hang the first time (holding every worker slot), and answer when tried again.
        worker_by_task: Object.fromEntries(
          ["t9", "t10", "t11"].map((id) => [id, [{ hang: true }, worker(50)]]),
        ),
      },
      claude: {},
    });
    const run = bench.spawnIvoai([
      "auto",
      "--workers",
      "3",
      "--print",
      "Add a canary stage to the wombat pipeline",
    ]);
    const id = await liveSession();
    const before = await until(
      "eight tasks done and three hanging",
      async () => {
        const session = await bench.show<Session>(id);
        const states = session.auto.tasks.map((task) => task.state);
        const done = states.filter((state) => state === "done").length;
        const running = states.filter((state) => state === "running").length;
        return done === 8 && running === 3 ? session : undefined;
      },
      async () =>
        JSON.stringify((await bench.show<Session>(id)).auto.tasks.map((task) => [task.id, task.state])),
    );
    run.child.kill("SIGKILL");
    await run.exited;
    const listed = JSON.parse((await bench.ivoai(["session", "list", "--json"])).stdout) as {
      sessions: { id: string; state: string }[];
    };
    expect(listed.sessions.find((row) => row.id === id)?.state).toBe("interrupted");
    const watched = await bench.ivoai(["session", "watch", id]);
    expect(watched.code).toBe(1);
    expect(watched.stderr).toContain(`'ivoai session resume ${id}' continues it`);
    expect(watched.stdout).toMatch(/t1 done/);

    const resumed = await bench.ivoai(["session", "resume", id, "--json"], 120_000);
    expect(resumed.code, resumed.stderr).toBe(0);
    const { result, events } = autoJsonLines<{ answer: string; session_id: string }>(resumed.stdout);
    expect(result).toMatchObject({ answer: "Resumed and done.", session_id: id });
    expect(events[0]).toMatchObject({ type: "session.started", resumed_from: expect.any(Number) });
    expect(events[0]?.seq).toBeGreaterThan(1);

    const turns = await bench.fakes.log();
    const workerRuns = (task: string) =>
      turns.filter((turn) => turn.role === "worker" && turn.task === task).length;
    for (const task of ["t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8"])
      expect(workerRuns(task), task).toBe(1);
    for (const task of ["t9", "t10", "t11"]) expect(workerRuns(task), task).toBe(2);
    expect(workerRuns("t12")).toBe(1);
    expect(turns.filter((turn) => turn.role === "plan")).toHaveLength(1);
    const consolidations = turns.filter((turn) => turn.role === "consolidate");
    expect(consolidations).toHaveLength(1);
    // The primary's own conversation goes on: the consolidation resumes the planning turn's thread.
    expect(consolidations[0]?.resume).toBe(before.auto.threads.codex);

    const after = await bench.show<Session>(id);
    expect(after).toMatchObject({ state: "exited", status: "exited", auto: { phase: "done" } });
    expect(after.auto.tasks.every((task) => task.state === "done")).toBe(true);
    expect(after.auto.resumes).toHaveLength(1);
    expect(after.auto.resumes[0]?.from_checkpoint).toBeGreaterThanOrEqual(before.auto.checkpoint.seq);
    // The journal (task, brief, plan, results) goes once the session is done; resuming again is refused.
    await expect(stat(path.join(bench.stateDir, "auto", "resume", `${id}.json`))).rejects.toThrow(/ENOENT/);
    const again = await bench.ivoai(["session", "resume", id]);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/finished its work; nothing to resume/);
    const file = await readFile(path.join(bench.stateDir, "sessions", `${id}.events.jsonl`), "utf8");
    const seqs = file
      .trim()
      .split("\n")
      .map((line) => (JSON.parse(line) as Event).seq);
    expect(seqs).toEqual(seqs.map((_, index) => index + 1));
  });
  it("says where a quiet session stands on a heartbeat line, so a long worker is never silence", async () => {
    const config = path.join(bench.env.XDG_CONFIG_HOME as string, "ivoai", "config.toml");
    const before = await readFile(config, "utf8");
    await appendFile(config, "\n[auto]\nprogress_interval_sec = 1\n");
    try {
      await bench.scenario({
        codex: {
          turns: { plan: [{ reply: { tasks: [planTask("slow")] } }], consolidate: [{ reply: "done" }] },
          worker_by_task: { slow: [worker(4_000)] },
        },
        claude: {},
      });
      const result = await bench.ivoai(["auto", "--print", "Survey the wombat pipeline in depth"]);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toMatch(/ivoai auto: \[0\/1\] running · working on slow · \d+\.\ds so far/);
    } finally {
      await writeFile(config, before);
    }
  });
});

function autoJsonLinesOf(stdout: string): unknown[] {
  return stdout
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line));
}
