// `ivoai usage` and `ivoai session show` in process over real session records in a temp XDG state dir: the
// table and its totals, --json, the --since/--until bounds, bad flags refused as usage errors (exit 2), and a
// price an executor never reported shown as unknown or a lower bound, never $0.00.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AutoState } from "../../client/session/auto-state.js";
import { stateWith, turn, usage, writeSession } from "../../client/session/usage.test-kit.js";
import { describeError } from "../error-text.js";
import { runInProcess } from "../invoke.test-kit.js";
import { sessionGroup } from "./agents.js";
import { usageCommand } from "./usage.js";

describe("ivoai usage", () => {
  let xdg = "";
  let env: NodeJS.ProcessEnv = {};
  beforeEach(async () => {
    xdg = await mkdtemp(path.join(tmpdir(), "ivoai-usage-cli-"));
    env = { HOME: xdg, XDG_STATE_HOME: path.join(xdg, "state") };
  });
  afterEach(async () => {
    await rm(xdg, { recursive: true, force: true });
  });

  const session = (startedAt: string, auto?: AutoState) =>
    writeSession(path.join(xdg, "state", "ivoai"), startedAt, auto);
  const run = (...argv: string[]) => runInProcess([usageCommand, sessionGroup], argv, env);
  /** The exit status and line the CLI would print for a refused command line. */
  const refusal = async (...argv: string[]) => {
    const error = await run(...argv).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error, `ivoai ${argv.join(" ")} was accepted`).toBeDefined();
    return describeError(error, { server: false });
  };
  const ago = (hours: number) => new Date(Date.now() - hours * 3_600_000).toISOString();

  it("prints a table by UTC day and executor with totals, codex's price unknown and the total a lower bound", async () => {
    await session("2026-12-01T10:00:00.000Z", stateWith([turn("claude", usage(900, 400, 30, 0.0123))]));
    await session(
      "2026-12-01T12:00:00.000Z",
      stateWith([turn("codex", usage(2000, 0, 70, null)), turn("claude", usage(100, 0, 10, 0.01))]),
    );
    const { code, stdout } = await run("usage");
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/UTC day/);
    expect(lines[1]).toMatch(/^DAY\s+EXECUTOR\s+SESSIONS\s+TURNS\s+INPUT\s+CACHED\s+OUTPUT\s+COST$/);
    expect(lines.slice(2, 7).map((line) => line.split(/\s{2,}/))).toEqual([
      ["2026-12-01", "codex", "1", "1", "2000", "0", "70", "unknown"],
      ["2026-12-01", "claude", "2", "2", "1000", "400", "40", "$0.0223"],
      ["total", "codex", "1", "1", "2000", "0", "70", "unknown"],
      ["total", "claude", "2", "2", "1000", "400", "40", "$0.0223"],
      ["total", "all", "2", "3", "3000", "400", "110", "≥ $0.0223"],
    ]);
    expect(lines[7]).toMatch(/^≥: a lower bound/);
    expect(stdout).not.toContain("$0.0000");
  });

  it("gives the same figures with --json, cost_complete false where a price is unknown", async () => {
    await session("2026-12-01T10:00:00.000Z", stateWith([turn("codex", usage(2000, 5, 70, null))]));
    const { stdout } = await run("usage", "--json");
    const report = JSON.parse(stdout);
    expect(report).toMatchObject({ since: null, until: null, time_zone: "UTC" });
    expect(report.rows).toEqual([
      {
        day: "2026-12-01",
        executor: "codex",
        sessions: 1,
        turns: 1,
        turns_complete: true,
        input_tokens: 2000,
        cached_input_tokens: 5,
        output_tokens: 70,
        cost_usd: null,
        cost_complete: false,
      },
    ]);
    expect(report.totals).toMatchObject({ sessions: 1, turns: 1, cost_usd: null, cost_complete: false });
  });

  it("--since takes a duration back from now, --until an ISO time; an empty range says so", async () => {
    await session(ago(72), stateWith([turn("claude", usage(1, 0, 1, 0.5))]));
    await session(ago(1), stateWith([turn("claude", usage(2, 0, 2, 0.25))]));
    const recent = JSON.parse((await run("usage", "--since", "2d", "--json")).stdout);
    expect(recent.rows.map((row: { input_tokens: number }) => row.input_tokens)).toEqual([2]);
    expect(Date.parse(recent.since)).toBeLessThan(Date.now() - 47 * 3_600_000);
    const older = JSON.parse((await run("usage", "--until", ago(24), "--json")).stdout);
    expect(older.rows.map((row: { input_tokens: number }) => row.input_tokens)).toEqual([1]);
    const none = await run("usage", "--since", "30m");
    expect(none.code).toBe(0);
    expect(none.stdout).toMatch(/^no usage: no orchestrated session started since \S+ spent any tokens\n$/);
  });

  it("refuses a bad --since, an unknown flag and a reversed range as usage errors (exit 2)", async () => {
    expect(await refusal("usage", "--since", "yesterday")).toMatchObject({
      exitCode: 2,
      message: expect.stringMatching(/--since/),
    });
    expect((await refusal("usage", "--sinse", "1d")).exitCode).toBe(2);
    expect(await refusal("usage", "--since", "1h", "--until", "2h")).toMatchObject({
      exitCode: 2,
      message: expect.stringMatching(/--since .* must be before --until/),
    });
  });
});

describe("ivoai session show's usage", () => {
  let xdg = "";
  beforeEach(async () => {
    xdg = await mkdtemp(path.join(tmpdir(), "ivoai-usage-show-"));
  });
  afterEach(async () => {
    await rm(xdg, { recursive: true, force: true });
  });

  async function show(auto: AutoState): Promise<string> {
    const id = await writeSession(path.join(xdg, "state", "ivoai"), "2026-12-01T10:00:00.000Z", auto);
    const shown = await runInProcess([usageCommand, sessionGroup], ["session", "show", id], {
      HOME: xdg,
      XDG_STATE_HOME: path.join(xdg, "state"),
    });
    expect(shown.code).toBe(0);
    return shown.stdout;
  }

  /** A session with tasks t1 (codex) and t2 (claude), each holding its turns' sum. */
  function planned(turns: ReturnType<typeof turn>[], total = turns.length): AutoState {
    const state = stateWith(turns, total);
    const task = (id: string, executor: "codex" | "claude", used: AutoState["tasks"][number]["usage"]) => ({
      id,
      kind: "research" as const,
      origin: "plan" as const,
      depends_on: [],
      signals: { complexity: 0.5, context_need: 0.5, risk: 0.3, ambiguity: 0.2, est_tokens: 1000 },
      score: 0.5,
      tier: 2,
      profile: { id: `${executor}-p`, executor, model: "m", effort: "low" },
      profile_origin: "scores" as const,
      state: "done" as const,
      reason: null,
      started_at: null,
      ended_at: null,
      duration_ms: 1000,
      executor_ms: 900,
      escalations: [],
      refs: [],
      usage: used,
    });
    state.tasks = [
      task("t1", "codex", usage(1500, 100, 60, null)),
      task("t2", "claude", usage(900, 800, 30, 0.0125)),
    ];
    return state;
  }

  it("shows tokens and cost per task, every turn, and the session's totals per executor", async () => {
    const text = await show(
      planned([
        turn("codex", usage(1500, 100, 60, null), "t1"),
        turn("claude", usage(900, 800, 30, 0.0125), "t2"),
      ]),
    );
    expect(text).toMatch(/TASK .*TIME\s+TOKENS\s+COST\s+REFS/);
    expect(text).toMatch(/t1\s+research .*1\.0s\s+1500\/100\/60\s+-\s+0\n/);
    expect(text).toMatch(/t2\s+research .*1\.0s\s+900\/800\/30\s+\$0\.0125\s+0\n/);
    expect(text).toMatch(/turns: {7}2\n/);
    expect(text).toMatch(/KIND\s+TASK\s+EXECUTOR\s+STATUS\s+TIME\s+TOKENS\s+COST/);
    expect(text).toMatch(/worker\s+t1\s+codex\s+completed\s+1\.0s\s+1500\/100\/60\s+-\n/);
    expect(text).toMatch(
      /usage: {7}2400\/900\/90 tokens \(in\/cached\/out\) in 2 turn\(s\), cost ≥ \$0\.0125\n/,
    );
    expect(text).toMatch(/codex: {5}1500\/100\/60 tokens, cost unknown \(codex reported none\)/);
    expect(text).toMatch(/claude: {4}900\/800\/30 tokens, cost \$0\.0125/);
    expect(text).not.toContain("$0.00");
  });

  it("says when older turns are no longer listed", async () => {
    const text = await show(planned([turn("claude", usage(900, 800, 30, 0.0125), "t2")], 70));
    expect(text).toMatch(/turns: {7}70 \(the 69 oldest no longer listed; the totals count them all\)\n/);
  });
});
