// Usage end to end: a real headless `ivoai auto` over the fake codex and claude, whose turns report distinct
// tokens (and claude a price) through the vendors' real events; what `session show --json` records per task and
// per session, and what `ivoai usage --json` adds up by executor, equal the sums of what the fakes reported.
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { autoClientEnv } from "./auto-harness.js";
import { type FakeClis, type FakeLogLine, type FakeUsage, installFakeClis } from "./fake-clis.js";
import { autoJsonLines, runIvoai, tempDir } from "./helpers.js";

type Usage = FakeUsage;

interface SessionJson {
  started_at: string;
  auto: {
    phase: string;
    tasks: { id: string; state: string; profile: { executor: string } | null; usage: Usage | null }[];
    turns: { executor: string; task_id: string | null; usage: Usage | null }[];
    usage: Usage & { turns: number };
    usage_by_executor: { codex?: Usage; claude?: Usage };
  };
}

interface UsageJson {
  rows: ({ day: string; executor: string } & Usage & { sessions: number; cost_complete: boolean })[];
  by_executor: ({ executor: string; turns: number; cost_complete: boolean } & Usage)[];
  totals: Usage & { sessions: number; turns: number; cost_complete: boolean };
}

const task = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  kind: "research",
  instructions: `Survey part ${id} of the wombat pipeline`,
  depends_on: [],
  signals: { complexity: 0.5, context_need: 0.5, risk: 0.3, ambiguity: 0.2, est_tokens: 30_000 },
  ...extra,
});

/** Signals scoring below tier 2 (0.35): a light profile suffices. */
const LIGHT = { complexity: 0.1, context_need: 0.1, risk: 0.1, ambiguity: 0.1, est_tokens: 30_000 };

/** A worker step whose final event reports these distinct figures. */
const worker = (input: number, cached: number, output: number, cost: number) => [
  {
    reply: { summary: "finding for {task}", findings: ["f1"], state_delta: [] },
    usage: { input, cached, output, cost_usd: cost },
  },
];

/** The sum of what `turns` reported, as ivoai should have added it up. */
function sumOf(turns: readonly FakeLogLine[]): Usage {
  const reported = turns.flatMap((turn) => (turn.usage ? [turn.usage] : []));
  const costs = reported.flatMap((usage) => (usage.cost_usd === null ? [] : [usage.cost_usd]));
  return {
    input_tokens: reported.reduce((sum, usage) => sum + usage.input_tokens, 0),
    cached_input_tokens: reported.reduce((sum, usage) => sum + usage.cached_input_tokens, 0),
    output_tokens: reported.reduce((sum, usage) => sum + usage.output_tokens, 0),
    cost_usd: costs.length === 0 ? null : costs.reduce((sum, cost) => sum + cost, 0),
  };
}

/** Tokens exactly, the price to a millionth of a dollar (the record rounds it there). */
function expectSameUsage(actual: Usage | null | undefined, expected: Usage, what: string) {
  expect(actual, what).toBeDefined();
  const tokens = (usage: Usage) => [usage.input_tokens, usage.cached_input_tokens, usage.output_tokens];
  expect(tokens(actual as Usage), `${what}: in/cached/out`).toEqual(tokens(expected));
  const cost = (actual as Usage).cost_usd;
  const want = expected.cost_usd;
  if (want === null) expect(cost, what).toBeNull();
  else expect(cost, what).toBeCloseTo(want, 6);
}

describe("usage of an ivoai auto session", () => {
  const cleanups: (() => Promise<void>)[] = [];
  let fakes: FakeClis;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    const xdg = await tempDir("ivoai-client-");
    cleanups.push(xdg.cleanup);
    fakes = await installFakeClis(path.join(xdg.dir, "fakes"));
    env = autoClientEnv(xdg.dir, fakes);
  });
  afterAll(async () => {
    await fakes?.killAll();
    for (const cleanup of cleanups) await cleanup();
  });

  it("records per task and per session what the executors reported, and ivoai usage adds it up by executor", async () => {
    // The same distinct figures for a task on either executor: whichever runs it, the task's sum is known.
    const byTask = {
      a: worker(3001, 1200, 101, 0.0211),
      b: worker(5003, 0, 203, 0.0433),
      c: worker(7007, 4000, 307, 0.0655),
    };
    await fakes.script({
      codex: {
        // Codex lists one light model only: the light task a runs on it, the tier-2 tasks b and c on claude.
        models: [{ model: "gpt-6-luna", isDefault: true, defaultReasoningEffort: "low", efforts: ["low"] }],
        turns: {
          plan: [
            {
              reply: { tasks: [task("a", { signals: LIGHT }), task("b"), task("c", { depends_on: ["a"] })] },
            },
          ],
          consolidate: [{ reply: "All done.", usage: { input: 1500, cached: 500, output: 77 } }],
        },
        worker_by_task: byTask,
      },
      claude: { worker_by_task: byTask },
    });
    const result = await runIvoai(["auto", "--workers", "2", "--json", "--", "Survey the wombat pipeline"], {
      env,
      timeoutMs: 120_000,
    });
    expect(result.code, result.stderr).toBe(0);
    const { session_id: id } = autoJsonLines(result.stdout).result as { session_id: string };
    const shown = await runIvoai(["session", "show", id, "--json"], { env });
    expect(shown.code).toBe(0);
    const { auto, started_at: startedAt } = JSON.parse(shown.stdout) as SessionJson;
    expect(auto.phase).toBe("done");

    const logged = (await fakes.log()).filter((turn) => turn.role !== "app-server");
    // Every turn reported its usage, and the record counts every turn.
    expect(logged.map((turn) => [turn.executor, turn.role, turn.usage !== null])).toEqual(
      logged.map((turn) => [turn.executor, turn.role, true]),
    );
    expect(auto.usage.turns).toBe(logged.length);
    expect(auto.turns).toHaveLength(logged.length);

    for (const id of ["a", "b", "c"]) {
      const entry = auto.tasks.find((candidate) => candidate.id === id);
      expect(entry?.state, `task ${id}`).toBe("done");
      const mine = logged.filter((turn) => turn.role === "worker" && turn.task === id);
      expect(mine, `worker turns of ${id}`).toHaveLength(1);
      expectSameUsage(entry?.usage, sumOf(mine), `task ${id}`);
      expect(entry?.profile?.executor).toBe(mine[0]?.executor);
    }
    // Both executors took part: codex planned, consolidated and ran a; claude ran b and c.
    const ran = (id: string) => logged.find((turn) => turn.task === id)?.executor;
    expect([ran("a"), ran("b"), ran("c")]).toEqual(["codex", "claude", "claude"]);
    expectSameUsage(auto.usage, sumOf(logged), "the session");
    for (const executor of ["codex", "claude"] as const) {
      const mine = logged.filter((turn) => turn.executor === executor);
      if (mine.length === 0) expect(auto.usage_by_executor[executor]).toBeUndefined();
      else expectSameUsage(auto.usage_by_executor[executor], sumOf(mine), executor);
    }
    // Codex planned and consolidated: its part of the price is unknown, never $0.
    expect(auto.usage_by_executor.codex?.cost_usd).toBeNull();

    const text = await runIvoai(["session", "show", id], { env });
    const a = auto.tasks.find((candidate) => candidate.id === "a")?.usage as Usage;
    expect(text.stdout).toContain(`${a.input_tokens}/${a.cached_input_tokens}/${a.output_tokens}`);
    const claudeCost = sumOf(logged.filter((turn) => turn.executor === "claude")).cost_usd ?? 0;
    const { input_tokens: input, cached_input_tokens: cached, output_tokens: output } = auto.usage;
    expect(text.stdout).toContain(
      `usage:       ${input}/${cached}/${output} tokens (in/cached/out) in ${logged.length} turn(s), ` +
        `cost ≥ $${claudeCost.toFixed(4)}`,
    );
    expect(text.stdout).toMatch(/codex: +\d+\/\d+\/\d+ tokens, cost unknown/);
    expect(text.stdout).not.toContain("$0.0000");

    const usage = await runIvoai(["usage", "--json"], { env });
    expect(usage.code, usage.stderr).toBe(0);
    const report = JSON.parse(usage.stdout) as UsageJson;
    const executors = Object.keys(auto.usage_by_executor);
    expect(report.by_executor.map((entry) => entry.executor).sort()).toEqual([...executors].sort());
    for (const entry of report.by_executor) {
      const recorded = auto.usage_by_executor[entry.executor as "codex" | "claude"] as Usage;
      expectSameUsage(
        {
          input_tokens: entry.input_tokens,
          cached_input_tokens: entry.cached_input_tokens,
          output_tokens: entry.output_tokens,
          cost_usd: entry.cost_usd,
        },
        sumOf(logged.filter((turn) => turn.executor === entry.executor)),
        `ivoai usage, ${entry.executor}`,
      );
      expect(entry.cost_usd).toBe(recorded.cost_usd);
      expect(entry.turns).toBe(logged.filter((turn) => turn.executor === entry.executor).length);
    }
    expect(report.rows.every((row) => row.day === startedAt.slice(0, 10))).toBe(true);
    expect(report.totals).toMatchObject({ sessions: 1, turns: logged.length, cost_complete: false });
    expectSameUsage(
      {
        input_tokens: report.totals.input_tokens,
        cached_input_tokens: report.totals.cached_input_tokens,
        output_tokens: report.totals.output_tokens,
        cost_usd: report.totals.cost_usd,
      },
      sumOf(logged),
      "ivoai usage, totals",
    );
  });
});
