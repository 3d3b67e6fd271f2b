// AUTO's own cost with the fake official CLIs: scheduling overhead per task beyond executor time on a
// 12-task DAG (goal ≤ 20 ms), and failover time from the hard-limit event to the alternate's first event
// (goal ≤ 2 s). The engine runs in process, exactly as `ivoai auto` runs it; the executors are real child
// processes (the fakes), so executor time includes their start-up.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { runAuto } from "../src/client/auto/supervisor.js";
import { openRegistry } from "../src/client/connections/registry.js";
import { installFakeClis } from "../test/fake-clis.js";
import { percentile } from "./lib/ir.js";
import { machineLine } from "./lib/server-tree.js";

const rounds = Number(process.argv.find((arg) => arg.startsWith("--rounds="))?.slice(9) ?? "5");
const root = await mkdtemp(path.join(tmpdir(), "ivoai-bench-auto-"));
const fakes = await installFakeClis(path.join(root, "fakes"));
const env: NodeJS.ProcessEnv = {
  ...process.env,
  ...fakes.env,
  XDG_CONFIG_HOME: path.join(root, "config"),
  XDG_STATE_HOME: path.join(root, "state"),
  XDG_DATA_HOME: path.join(root, "data"),
  XDG_CACHE_HOME: path.join(root, "cache"),
  HOME: root,
};
const signals = { complexity: 0.5, context_need: 0.5, risk: 0.3, ambiguity: 0.2, est_tokens: 30_000 };
const dag = Array.from({ length: 12 }, (_, index) => ({
  id: `t${index + 1}`,
  kind: "research",
  instructions: `part ${index + 1}`,
  // A chain every fourth task, the rest independent: the scheduler both waits and fans out.
  depends_on: index % 4 === 3 ? [`t${index}`] : [],
  signals,
}));
const run = (task: string, workers: number, planner: "codex" | "claude" = "codex") =>
  runAuto({
    task,
    workers,
    planner,
    knowledgeSources: [],
    registry: openRegistry(env),
    env,
    cwd: root,
    selfCommand: [process.execPath, path.resolve("dist/ivoai.mjs")],
    notice: () => undefined,
  });

try {
  // 1. Overhead per task: workers = 1 so that wall time, executor time and ivoai's own time add up simply.
  await fakes.script({
    codex: {
      turns: {
        plan: [{ reply: { tasks: dag } }],
        worker: [{ reply: { summary: "ok {task}", findings: [], state_delta: [] } }],
        consolidate: [{ reply: "done" }],
      },
    },
    claude: {},
  });
  const perTask: number[] = [];
  const perTaskScheduler: number[] = [];
  const dagWall: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const result = await run("Implement the twelve parts", 1);
    const tasks = result.state?.tasks ?? [];
    if (result.exitCode !== 0 || tasks.length !== 12 || tasks.some((task) => task.state !== "done")) {
      throw new Error(`round ${round}: exit ${result.exitCode}, ${result.state?.error ?? "tasks not done"}`);
    }
    for (const task of tasks) perTask.push((task.duration_ms ?? 0) - (task.executor_ms ?? 0));
    perTaskScheduler.push((result.state?.scheduling_overhead_ms ?? 0) / tasks.length);
    const starts = tasks.map((task) => Date.parse(task.started_at ?? ""));
    const ends = tasks.map((task) => Date.parse(task.ended_at ?? ""));
    const executor = tasks.reduce((sum, task) => sum + (task.executor_ms ?? 0), 0);
    dagWall.push((Math.max(...ends) - Math.min(...starts) - executor) / tasks.length);
  }

  // 2. Failover both ways: the planner hits its usage limit mid-turn while planning; the other takes over.
  // Towards codex ivoai re-probes codex's quota through its app-server first; towards claude there is no probe.
  const failover = { claude: [] as number[], codex: [] as number[] };
  for (const [from, to] of [
    ["codex", "claude"],
    ["claude", "codex"],
  ] as const) {
    await fakes.script({
      [from]: { turns: { plan: [{ limit: "usage", events_before: 1 }] } },
      [to]: {
        turns: {
          handoff: [{ reply: { tasks: [{ ...dag[0], signals: { ...signals, est_tokens: 10 } }] } }],
          consolidate: [{ reply: "done" }],
        },
      },
    });
    for (let round = 0; round < rounds * 2; round++) {
      // Quota observed by the previous round would refuse the planner up front: every round starts clean.
      await rm(path.join(root, "state", "ivoai", "auto", "quota.json"), { force: true });
      const result = await run("Implement the canary stage", 2, from);
      const ms = result.state?.failovers[0]?.handoff_ms;
      if (result.exitCode !== 0 || ms === null || ms === undefined) {
        throw new Error(
          `failover ${from}→${to} round ${round}: exit ${result.exitCode}, ${result.state?.error}`,
        );
      }
      failover[to].push(ms);
    }
  }

  const fmt = (value: number) => value.toFixed(2);
  const p = (values: number[], at: number) =>
    percentile(
      [...values].sort((a, b) => a - b),
      at,
    );
  const lines = [
    "# auto",
    "",
    `AUTO engine in process, fake codex/claude as real child processes; ${rounds} rounds of a 12-task DAG with one worker at a time, ${rounds * 2} failovers each way. ${machineLine()}, ${new Date().toISOString()}.`,
    "",
    "| measure | p50 ms | p95 ms | max ms | goal |",
    "|---|---|---|---|---|",
    `| ivoai per task beyond executor time (task wall − executor turn) | ${fmt(p(perTask, 50))} | ${fmt(p(perTask, 95))} | ${fmt(Math.max(...perTask))} | ≤ 20 |`,
    `| DAG wall time beyond executor time, per task | ${fmt(p(dagWall, 50))} | ${fmt(p(dagWall, 95))} | ${fmt(Math.max(...dagWall))} | ≤ 20 |`,
    `| scheduler's own time per task | ${fmt(p(perTaskScheduler, 50))} | ${fmt(p(perTaskScheduler, 95))} | ${fmt(Math.max(...perTaskScheduler))} |  |`,
    `| failover codex → claude: hard-limit event → alternate's first event | ${fmt(p(failover.claude, 50))} | ${fmt(p(failover.claude, 95))} | ${fmt(Math.max(...failover.claude))} | ≤ 2000 |`,
    `| failover claude → codex (re-probes codex's app-server first) | ${fmt(p(failover.codex, 50))} | ${fmt(p(failover.codex, 95))} | ${fmt(Math.max(...failover.codex))} | ≤ 2000 |`,
    "",
    "Executor time is each fake's whole process lifetime (node start-up included), so the overhead rows are ivoai's",
    "own work per task: admission, the recorder's checkpoints, the artifact write, the WorkerResult and the scheduler.",
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
  if (!process.argv.includes("--no-save"))
    await writeFile(path.resolve("bench/results/auto.md"), `${lines.join("\n")}\n`);
} finally {
  await rm(root, { recursive: true, force: true });
}
