import { describe, expect, it } from "vitest";
import { initialAutoState } from "../session/auto-state.js";
import type { Executor, ModelProfile, PlanTask } from "./contracts.js";
import type { EngineContext } from "./engine-context.js";
import { decideAll } from "./plan-run.js";
import { autoSettingsSchema } from "./settings.js";

const profiles: ModelProfile[] = [1, 2, 3].map((tier) => ({
  id: `mdl_codex_${tier}`,
  executor: "codex",
  model: `codex-m${tier}`,
  effort: "medium",
  tier: tier as 1 | 2 | 3,
  contextWindow: 200_000,
  verified: true,
}));

/** The parts of a session the delegation decisions read: settings, the primary, installed executors, profiles. */
function session(): EngineContext {
  return {
    settings: autoSettingsSchema.parse({}),
    recorder: { state: initialAutoState("codex", 3) },
    profiles,
    executors: { codex: { name: "codex", path: "/bin/true" } as unknown as Executor },
  } as unknown as EngineContext;
}

const task = (
  id: string,
  est: number,
  depends: string[] = [],
  kind: PlanTask["kind"] = "research",
): PlanTask => ({
  id,
  kind,
  instructions: `do ${id}`,
  depends_on: depends,
  signals: { complexity: 0.5, context_need: 0.5, risk: 0.2, ambiguity: 0.2, est_tokens: est },
});

describe("delegation decided per task", () => {
  it("sends a tiny root to a worker when large worker tasks build on it, instead of pulling them all into the primary", () => {
    const plan = [
      task("root", 300),
      task("a", 30_000, ["root"]),
      task("b", 30_000, ["root"]),
      task("c", 30_000, ["root"]),
    ];
    const decisions = decideAll(session(), plan);
    expect([...decisions.values()].map((decision) => decision.run)).toEqual([
      "worker",
      "worker",
      "worker",
      "worker",
    ]);
    expect(decisions.get("root")?.reason).toMatch(
      /est\. 300 tokens is small, but a, b, c build on it on workers/,
    );
  });

  it("keeps a tiny task nobody builds on in the primary", () => {
    const decisions = decideAll(session(), [task("tiny", 300), task("big", 30_000)]);
    expect(decisions.get("tiny")?.run).toBe("primary");
    expect(decisions.get("tiny")?.reason).toMatch(/uneconomic/);
    expect(decisions.get("big")?.run).toBe("worker");
  });

  it("keeps tasks that build on a change in the primary: only the primary applies changes", () => {
    const decisions = decideAll(session(), [
      task("edit", 30_000, [], "change"),
      task("check", 30_000, ["edit"]),
    ]);
    expect(decisions.get("edit")?.run).toBe("primary");
    expect(decisions.get("check")).toMatchObject({
      run: "primary",
      reason: "depends on edit, which the primary does",
    });
  });

  it("keeps a tiny root in the primary when its dependents would be the primary's anyway", () => {
    const decisions = decideAll(session(), [task("root", 300), task("edit", 30_000, ["root"], "change")]);
    expect(decisions.get("root")?.run).toBe("primary");
  });
});
