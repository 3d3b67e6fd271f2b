// What people watching and resuming AUTO wait for (issue 30): how soon a task's state change reaches stderr as a
// line in a real headless `ivoai auto` (goal p95 ≤ 50 ms), and how long `ivoai session resume` of a 12-task
// session killed with -9 takes beyond its executors' time (goal ≤ 2 s). The built binary runs with the fake
// codex/claude as real child processes; the same run measures its references (a bare pipe, a bare CLI start).
import { closeSync, openSync, readFileSync, writeSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describeAutoEvent } from "../src/cli/commands/auto-events.js";
import { openEventStream } from "../src/client/auto/event-stream.js";
import type { AutoEvent } from "../src/client/auto/events.js";
import { type AutoState, type AutoTask, initialAutoState } from "../src/client/session/auto-state.js";
import { openSessionStore, type SessionStore } from "../src/client/session/store.js";
import { type FakeClis, type FakeScript, installFakeClis } from "../test/fake-clis.js";
import { percentile } from "./lib/ir.js";
import { machineLine } from "./lib/server-tree.js";
import { type StampedLine, spawnStamped, unionMs } from "./lib/stamped-process.js";

const rounds = Number(process.argv.find((arg) => arg.startsWith("--rounds="))?.slice(9) ?? "5");
const BIN = path.resolve("dist/ivoai.mjs");
const TASK = "Add a canary stage to the wombat pipeline";
const LATENCY_GOAL_MS = 50;
const RESUME_GOAL_MS = 2_000;

interface Bench {
  env: NodeJS.ProcessEnv;
  fakes: FakeClis;
  stateDir: string;
  cwd: string;
  store: SessionStore;
  root: string;
}

async function openBench(): Promise<Bench> {
  const root = await mkdtemp(path.join(tmpdir(), "ivoai-bench-progress-"));
  const fakes = await installFakeClis(path.join(root, "fakes"));
  const cwd = path.join(root, "work");
  await mkdir(cwd);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...fakes.env,
    XDG_CONFIG_HOME: path.join(root, "config"),
    XDG_STATE_HOME: path.join(root, "state"),
    XDG_DATA_HOME: path.join(root, "data"),
    XDG_CACHE_HOME: path.join(root, "cache"),
    HOME: root,
    // TERM to KILL for executor groups, as the e2e tests have it: a hung fake is ended quickly.
    IVOAI_KILL_AFTER_MS: "500",
  };
  const stateDir = path.join(root, "state", "ivoai");
  return { env, fakes, stateDir, cwd, store: openSessionStore(stateDir), root };
}

const signals = { complexity: 0.5, context_need: 0.5, risk: 0.3, ambiguity: 0.2, est_tokens: 30_000 };
const planTask = (id: string, depends_on: string[] = []) => ({
  id,
  kind: "research",
  instructions: `Survey part ${id} of the wombat pipeline`,
  depends_on,
  signals,
});
/** The plan of test/auto-progress.e2e.test.ts: eleven independent tasks and a twelfth building on two. */
const TWELVE = [
  ...Array.from({ length: 11 }, (_, index) => planTask(`t${index + 1}`)),
  planTask("t12", ["t1", "t2"]),
];
const worker = (delay: number) => ({
  delay_ms: delay,
  reply: { summary: "finding for {task}", findings: ["f1"], state_delta: [] },
});

/** A fresh script and log; AUTO's caches (registry, quota, artifacts, journals) dropped, as the e2e bench does. */
async function scenario(bench: Bench, script: FakeScript): Promise<void> {
  await bench.fakes.reset();
  await bench.fakes.script(script);
  await rm(path.join(bench.stateDir, "auto"), { recursive: true, force: true });
}

async function sessionIds(bench: Bench): Promise<Set<string>> {
  const names = await readdir(path.join(bench.stateDir, "sessions")).catch(() => [] as string[]);
  return new Set(
    names.filter((name) => /^ses_[0-9a-f]{16}\.json$/.test(name)).map((name) => name.slice(0, -5)),
  );
}

async function newSession(bench: Bench, before: Set<string>): Promise<string> {
  const fresh = [...(await sessionIds(bench))].filter((id) => !before.has(id));
  if (fresh.length !== 1)
    throw new Error(`expected one new session, found ${fresh.length}: ${fresh.join(", ")}`);
  return fresh[0] as string;
}

async function readEvents(bench: Bench, id: string): Promise<AutoEvent[]> {
  const text = await readFile(path.join(bench.stateDir, "sessions", `${id}.events.jsonl`), "utf8");
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as AutoEvent);
}

const TASK_LINE =
  /^ivoai auto: \[\d+\/\d+\] (\S+) (started|done|failed|skipped|cancelled|escalated|added|goes to the primary)\b/;

/** The task event a headless stderr line tells ("t3 done" → "t3 task.done"), or null for other lines. */
function lineKey(text: string): string | null {
  const match = TASK_LINE.exec(text);
  if (!match) return null;
  return `${match[1]} ${match[2] === "goes to the primary" ? "task.primary" : `task.${match[2]}`}`;
}

/** Arrival of each task event's line minus the event's `at`, pairing the n-th line of a task and type with its n-th event. */
function pairLatencies(events: readonly AutoEvent[], lines: readonly StampedLine[]): number[] {
  const arrivals = new Map<string, number[]>();
  for (const line of lines) {
    const key = lineKey(line.text);
    if (key !== null) arrivals.set(key, [...(arrivals.get(key) ?? []), line.arrivedAt]);
  }
  const latencies: number[] = [];
  for (const event of events) {
    if (!event.type.startsWith("task.") || !("task_id" in event)) continue;
    const key = `${event.task_id} ${event.type}`;
    const arrived = arrivals.get(key)?.shift();
    if (arrived === undefined) throw new Error(`event ${event.seq} (${key}) has no line on stderr`);
    latencies.push(arrived - Date.parse(event.at));
  }
  const unpaired = [...arrivals].filter(([, left]) => left.length > 0).map(([key]) => key);
  if (unpaired.length > 0) throw new Error(`stderr lines without an event: ${unpaired.join(", ")}`);
  return latencies;
}

/** One headless `ivoai auto` of the 12-task plan on three workers: every task event's latency to stderr. */
async function latencyRound(bench: Bench): Promise<number[]> {
  await scenario(bench, {
    codex: {
      turns: { plan: [{ reply: { tasks: TWELVE } }], worker: [worker(100)], consolidate: [{ reply: "ok" }] },
    },
    claude: {},
  });
  const before = await sessionIds(bench);
  const run = spawnStamped(process.execPath, [BIN, "auto", "--workers", "3", "--print", TASK], bench.env);
  const exit = await run.exited;
  const stderr = run.lines.map((line) => line.text).join("\n");
  if (exit.code !== 0 || run.stdout().trim() !== "ok")
    throw new Error(`auto exited ${exit.code}:\n${stderr}`);
  const latencies = pairLatencies(await readEvents(bench, await newSession(bench, before)), run.lines);
  if (latencies.length !== 24)
    throw new Error(`expected 24 task events (12 started, 12 done), got ${latencies.length}`);
  return latencies;
}

/**
 * The floor of this measurement: a bare node child writing 24 ISO-stamped lines to its stderr pipe (as far apart
 * as task events come), read and stamped here exactly as the `ivoai auto` lines are.
 */
async function pipeFloorRound(bench: Bench): Promise<number[]> {
  const script =
    "let n = 0; const tick = () => { process.stderr.write(new Date().toISOString() + '\\n'); if (++n < 24) setTimeout(tick, 40); }; tick();";
  const run = spawnStamped(process.execPath, ["-e", script], bench.env);
  await run.exited;
  return run.lines.map((line) => line.arrivedAt - Date.parse(line.text));
}

const pendingTask = (id: string): AutoTask => ({
  id,
  kind: "research",
  origin: "plan",
  depends_on: [],
  signals: { ...signals, risk: 0.2 },
  score: 0.5,
  tier: 2,
  profile: { id: "mdl_1", executor: "codex", model: "gpt-5.1-codex-mini", effort: "low" },
  profile_origin: "scores",
  state: "pending",
  reason: null,
  started_at: null,
  ended_at: null,
  duration_ms: null,
  executor_ms: null,
  escalations: [],
  refs: [],
  usage: null,
});

/**
 * ivoai's own cost per recorded change, in process: the stream's observe (diff of a 12-task state), the event's
 * append to the session's events file, and the headless listener (the line, written to /dev/null). Microseconds.
 */
async function emitCost(bench: Bench, sessions: number): Promise<number[]> {
  const sink = openSync("/dev/null", "w");
  const costs: number[] = [];
  try {
    for (let round = 0; round < sessions; round++) {
      const state: AutoState = initialAutoState("codex", 3);
      state.plan = { attempts: 1, repaired: false, tasks: 12 };
      state.tasks = TWELVE.map((task) => pendingTask(task.id));
      state.phase = "running";
      const file = path.join(bench.root, `emit-${round}.events.jsonl`);
      const stream = openEventStream({
        file,
        sessionId: "ses_0123456789abcdef",
        initial: structuredClone(state),
        lastSeq: 0,
        startedAt: performance.now(),
        listener: (event) => {
          const line = describeAutoEvent(event);
          if (line !== null) writeSync(sink, `ivoai auto: ${line}\n`);
        },
      });
      const change = (apply: () => void) => {
        apply();
        const began = performance.now();
        stream.observe(state);
        costs.push((performance.now() - began) * 1000);
      };
      for (const task of state.tasks) {
        change(() => Object.assign(task, { state: "running", started_at: new Date().toISOString() }));
        change(() =>
          Object.assign(task, {
            state: "done",
            duration_ms: 1234,
            executor_ms: 1200,
            usage: { input_tokens: 12_000, cached_input_tokens: 0, output_tokens: 300, cost_usd: null },
          }),
        );
      }
      stream.close();
      await rm(file, { force: true });
    }
  } finally {
    closeSync(sink);
  }
  return costs;
}

/** The kill: eight tasks done and three hanging (every worker slot held), t12 still waiting for a slot. */
const RESUME_SCRIPT: FakeScript = {
  codex: {
    turns: {
      plan: [{ reply: { tasks: TWELVE } }],
      worker: [worker(50)],
      consolidate: [{ reply: "Resumed and done." }],
    },
    // Hang the first time, answer when the resumed session tries again.
    worker_by_task: Object.fromEntries(["t9", "t10", "t11"].map((id) => [id, [{ hang: true }, worker(50)]])),
  },
  claude: {},
};

/** Polls `check` (files written by other processes) every 20 ms until it holds; says what it saw when it gives up. */
async function until(what: string, check: () => Promise<string | true>): Promise<void> {
  let seen = "";
  for (const began = performance.now(); performance.now() - began < 60_000; ) {
    const result = await check();
    if (result === true) return;
    seen = result;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`gave up after 60 s waiting for ${what}; last saw: ${seen}`);
}

const count = (tasks: readonly AutoTask[], state: AutoTask["state"]) =>
  tasks.filter((task) => task.state === state).length;

/** Starts the 12-task session and kills its ivoai with -9 once 8 tasks are done and 3 hang, on record. */
async function killedSession(bench: Bench): Promise<string> {
  await scenario(bench, RESUME_SCRIPT);
  const before = await sessionIds(bench);
  const run = spawnStamped(process.execPath, [BIN, "auto", "--workers", "3", "--print", TASK], bench.env);
  const keys = (lines: readonly StampedLine[]) => lines.map((line) => lineKey(line.text));
  await run.until("eight tasks done and t9, t10, t11 started", (lines) => {
    const told = keys(lines);
    return (
      told.filter((key) => key?.endsWith(" task.done")).length === 8 &&
      ["t9", "t10", "t11"].every((task) => told.includes(`${task} task.started`))
    );
  });
  const id = await newSession(bench, before);
  // The kill comes once the record (written at most every 100 ms) says so and the three fakes are running.
  await until("8 done and 3 running on record, the 3 hanging fakes started", async () => {
    const tasks = (await bench.store.get(id)).auto?.tasks ?? [];
    const hanging = (await bench.fakes.log()).filter(
      (turn) => turn.role === "worker" && turn.ended_at === null,
    );
    const ready = count(tasks, "done") === 8 && count(tasks, "running") === 3 && hanging.length === 3;
    return (
      ready || `${tasks.map((task) => `${task.id}:${task.state}`).join(" ")}; ${hanging.length} fakes hanging`
    );
  });
  run.child.kill("SIGKILL");
  await run.exited;
  return id;
}

/** Every fake left hanging by a killed run: ended at the latest when the bench ends. */
const killedRunFakes = new Set<number>();

interface ResumeRound {
  wallMs: number;
  /** Wall time during which at least one executor turn ran, by ivoai's turn records (spawn to exit of each). */
  executorMs: number;
  /** The same by the fakes' own clocks (from their start-up done to their exit). */
  fakeMs: number;
  /** Where the rest went: spawn → the first turn's spawn, and the last turn's exit → ivoai's exit. */
  beforeMs: number;
  afterMs: number;
  turns: number;
}

/** One round: the killed session, then `ivoai session resume ID` timed from spawn to exit. */
async function resumeRound(bench: Bench): Promise<ResumeRound> {
  const id = await killedSession(bench);
  const hung = (await bench.fakes.log()).filter((turn) => turn.ended_at === null).map((turn) => turn.pid);
  for (const pid of hung) killedRunFakes.add(pid);
  await bench.fakes.reset();
  const began = Date.now();
  const run = spawnStamped(process.execPath, [BIN, "session", "resume", id], bench.env);
  const exit = await run.exited;
  const stderr = run.lines.map((line) => line.text).join("\n");
  if (exit.code !== 0 || run.stdout().trim() !== "Resumed and done.")
    throw new Error(`resume exited ${exit.code}: ${run.stdout()}\n${stderr}`);
  const record = await bench.store.get(id);
  const tasks = record.auto?.tasks ?? [];
  if (count(tasks, "done") !== 12)
    throw new Error(`resume left ${tasks.map((t) => `${t.id}:${t.state}`).join(" ")}`);
  const log = await bench.fakes.log();
  const rerun = log
    .filter((turn) => turn.role === "worker")
    .map((turn) => turn.task)
    .sort();
  if (rerun.join() !== "t10,t11,t12,t9" || log.some((turn) => turn.role === "plan"))
    throw new Error(
      `the resumed run's turns were ${log.map((turn) => `${turn.role}:${turn.task}`).join(" ")}`,
    );
  const turns = (record.auto?.turns ?? []).filter((turn) => Date.parse(turn.at) >= began);
  endLeftovers(hung, true);
  const spans = turns.map((turn) => [Date.parse(turn.at) - turn.duration_ms, Date.parse(turn.at)] as const);
  return {
    wallMs: exit.wallMs,
    executorMs: unionMs(spans),
    fakeMs: unionMs(log.map((turn) => [turn.started_at, turn.ended_at ?? turn.started_at])),
    beforeMs: Math.min(...spans.map(([from]) => from)) - began,
    afterMs: began + exit.wallMs - Math.max(...spans.map(([, to]) => to)),
    turns: turns.length,
  };
}

/**
 * The hung fakes of the killed run, if the resume's recovery did not end them (it should: they are on record).
 * Only a process that is still one of our fakes is killed (its pid could have been reused meanwhile).
 */
function endLeftovers(pids: Iterable<number>, warn: boolean): void {
  for (const pid of pids) {
    let cmdline = "";
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
    } catch {
      continue; // ended by the resume's recovery, as it should be
    }
    if (!/fake-(codex|claude)\.mjs/.test(cmdline)) continue;
    try {
      process.kill(-pid, "SIGKILL");
      if (warn) process.stderr.write(`note: hung fake ${pid} outlived the resume\n`);
    } catch {
      // gone meanwhile
    }
  }
}

/** Spawn-to-exit wall time of `args` (a CLI start, for reference). */
async function startMs(bench: Bench, args: string[]): Promise<number> {
  const run = spawnStamped(process.execPath, args, bench.env);
  const exit = await run.exited;
  if (exit.code !== 0) throw new Error(`${args.join(" ")} exited ${exit.code}`);
  return exit.wallMs;
}

const sorted = (values: readonly number[]) => [...values].sort((a, b) => a - b);
const p = (values: readonly number[], at: number) => percentile(sorted(values), at);
const fmt = (value: number, digits = 1) => value.toFixed(digits);

function latencyRows(latency: number[], floor: number[], cost: number[]): string[] {
  const p95 = p(latency, 95);
  return [
    "| measure | n | p50 | p95 | max | reference in this run (p50 / p95) | goal |",
    "|---|---|---|---|---|---|---|",
    `| task state change (event \`at\`) → its line read from \`ivoai auto\`'s stderr, ms | ${latency.length} | ${fmt(p(latency, 50), 0)} | **${fmt(p95, 0)}** | ${fmt(Math.max(...latency), 0)} | bare node stderr pipe: ${fmt(p(floor, 50), 0)} / ${fmt(p(floor, 95), 0)} | p95 ≤ ${LATENCY_GOAL_MS}: ${p95 <= LATENCY_GOAL_MS ? "yes" : "NO"} |`,
    `| in process: observe + append + line per recorded change, µs | ${cost.length} | ${fmt(p(cost, 50))} | ${fmt(p(cost, 95))} | ${fmt(Math.max(...cost))} |  |  |`,
  ];
}

function resumeRows(resumes: ResumeRound[], node: number[], version: number[]): string[] {
  const beyond = resumes.map((round) => round.wallMs - round.executorMs);
  const strict = resumes.map((round) => round.wallMs - round.fakeMs);
  const worst = Math.max(...beyond);
  const row = (label: string, values: number[], extra = "|  |  |") =>
    `| ${label} | ${fmt(p(values, 50), 0)} | ${fmt(Math.max(...values), 0)} ${extra}`;
  return [
    "| measure, ms | p50 | max | reference in this run (p50) | goal |",
    "|---|---|---|---|---|",
    row(
      "`ivoai session resume ID`, spawn → exit",
      resumes.map((round) => round.wallMs),
    ),
    row(
      "executor time: wall time with ≥ 1 executor turn running (ivoai's turn records, spawn → exit)",
      resumes.map((round) => round.executorMs),
    ),
    row(
      "**resume beyond executor time**",
      beyond,
      `| \`node -e 0\`: ${fmt(p(node, 50), 0)}; \`ivoai --version\`: ${fmt(p(version, 50), 0)} | ≤ ${RESUME_GOAL_MS} (max): ${worst <= RESUME_GOAL_MS ? "yes" : "NO"} |`,
    ),
    row(
      "of which before the first turn (start-up, recovery, journal, probes)",
      resumes.map((round) => round.beforeMs),
    ),
    row(
      "of which after the last turn (the final record, clean-up, exit)",
      resumes.map((round) => round.afterMs),
    ),
    row("the same against the fakes' own clocks (their node start-up counted as ivoai's)", strict),
    "",
    `Per round (wall / executor / beyond, ms): ${resumes.map((round) => `${fmt(round.wallMs, 0)} / ${fmt(round.executorMs, 0)} / ${fmt(round.wallMs - round.executorMs, 0)}`).join("; ")}; ${resumes[0]?.turns ?? 0} turns each (t9, t10, t11, t12, the consolidation).`,
  ];
}

async function main(): Promise<void> {
  const bench = await openBench();
  try {
    const latency: number[] = [];
    const floor: number[] = [];
    for (let round = 0; round < rounds; round++) {
      latency.push(...(await latencyRound(bench)));
      floor.push(...(await pipeFloorRound(bench)));
    }
    const cost = await emitCost(bench, 200);
    const resumes: ResumeRound[] = [];
    const node: number[] = [];
    const version: number[] = [];
    for (let round = 0; round < rounds; round++) {
      resumes.push(await resumeRound(bench));
      node.push(await startMs(bench, ["-e", "0"]));
      version.push(await startMs(bench, [BIN, "--version"]));
    }
    const lines = [
      "# auto-progress",
      "",
      `The built \`ivoai\` with the fake codex/claude as real child processes, ${rounds} rounds each. ${machineLine()}, ${new Date().toISOString()}.`,
      "",
      "## Event latency",
      "",
      "Headless `ivoai auto --workers 3` of a 12-task plan (eleven independent tasks, one on two of them; workers",
      "answer after 100 ms). Each task event's line is stamped here as it arrives on the reading end of stderr",
      "and paired with the same event in the session's events file; latency = arrival − the event's `at` (the",
      "moment the recorder applied the change; both wall clock, ms resolution). The reference is a bare node",
      "child writing ISO-stamped lines to its stderr, measured the same way: the floor of the method.",
      "",
      ...latencyRows(latency, floor, cost),
      "",
      "## Resume",
      "",
      "The same plan where t9, t10 and t11 hang (holding the 3 worker slots) after t1–t8 are done; once the record",
      "says so, `kill -9` of ivoai, then `ivoai session resume ID` runs t9–t11 again (50 ms each), t12 and the",
      "consolidation (each round checked: all 12 done, no done task and no planning turn run again). Executor",
      "time is the critical path: parallel turns count once; what is neither before the first turn nor after the",
      "last is between turns (admission, records, the scheduler). The references are bare starts on this host.",
      "",
      ...resumeRows(resumes, node, version),
    ];
    process.stdout.write(`${lines.join("\n")}\n`);
    await writeFile(path.resolve("bench/results/auto-progress.md"), `${lines.join("\n")}\n`);
  } finally {
    // A round that failed half-way may leave a hanging fake behind.
    const running = (await bench.fakes.log())
      .filter((turn) => turn.ended_at === null)
      .map((turn) => turn.pid);
    endLeftovers(new Set([...running, ...killedRunFakes]), false);
    await rm(bench.root, { recursive: true, force: true });
  }
}

await main();
