import { describe, expect, it } from "vitest";
import type { ExecutorName, ModelProfile, PlanTask, TaskSignals, Tier } from "./contracts.js";
import {
  capabilityScore,
  DEFAULT_MIN_WORKER_TOKENS,
  decideDelegation,
  escalate,
  requiredTier,
  SCORE_WEIGHTS,
} from "./scoring.js";

const signals = (s: Partial<TaskSignals> = {}): TaskSignals => ({
  complexity: 0,
  context_need: 0,
  risk: 0,
  ambiguity: 0,
  est_tokens: 20_000,
  ...s,
});
const task = (s: Partial<TaskSignals> = {}, kind: PlanTask["kind"] = "research"): PlanTask => ({
  id: "t",
  kind,
  instructions: "x",
  depends_on: [],
  signals: signals(s),
});
const profile = (
  id: string,
  executor: ExecutorName,
  tier: Tier,
  effort: string,
  extra: Partial<ModelProfile> = {},
): ModelProfile => ({
  id,
  executor,
  model: `${executor}-m${tier}`,
  effort,
  tier,
  contextWindow: 200_000,
  verified: true,
  ...extra,
});

const PROFILES = [
  profile("c3", "codex", 3, "high"),
  profile("c2h", "codex", 2, "high"),
  profile("c2l", "codex", 2, "low"),
  profile("c1", "codex", 1, "minimal"),
  profile("a3", "claude", 3, "high"),
  profile("a2", "claude", 2, "medium"),
  profile("a1", "claude", 1, "low"),
];
const all = () => true;

describe("capability score and tier", () => {
  it("weights sum to 1 and the score follows them", () => {
    expect(Object.values(SCORE_WEIGHTS).reduce((a, b) => a + b, 0)).toBeCloseTo(1);
    expect(capabilityScore(signals())).toBe(0);
    expect(capabilityScore(signals({ complexity: 1, risk: 1, ambiguity: 1, context_need: 1 }))).toBe(1);
    expect(capabilityScore(signals({ complexity: 1 }))).toBe(0.4);
    expect(capabilityScore(signals({ risk: 1 }))).toBe(0.25);
    expect(capabilityScore(signals({ ambiguity: 1 }))).toBe(0.2);
    expect(capabilityScore(signals({ context_need: 1 }))).toBe(0.15);
    expect(capabilityScore(signals({ complexity: 0.5, risk: 0.5 }))).toBe(0.325);
  });

  it("maps scores to tiers at the documented thresholds", () => {
    expect([0, 0.349, 0.35, 0.699, 0.7, 1].map(requiredTier)).toEqual([1, 1, 2, 2, 3, 3]);
  });
});

describe("decideDelegation", () => {
  const options = { primaryExecutor: "codex" as ExecutorName, profiles: PROFILES, admitted: all };

  it("keeps change tasks in the primary", () => {
    expect(decideDelegation(task({ complexity: 0.1 }, "change"), options)).toEqual({
      run: "primary",
      reason: "change task: only the primary applies changes",
    });
  });

  it("rejects uneconomic delegation", () => {
    const decision = decideDelegation(task({ est_tokens: DEFAULT_MIN_WORKER_TOKENS - 1 }), options);
    expect(decision.run).toBe("primary");
    expect(decision.reason).toMatch(/^uneconomic: est\. 3999 tokens is below the 4000-token minimum/);
    expect(decideDelegation(task({ est_tokens: 500 }), { ...options, minWorkerTokens: 100 }).run).toBe(
      "worker",
    );
  });

  it("picks the smallest sufficient profile: lowest tier, then lowest effort, then the primary's executor", () => {
    const light = decideDelegation(task({ complexity: 0.2 }), options);
    expect(light).toMatchObject({ run: "worker", origin: "scores", score: 0.08, tier: 1 });
    expect(light.run === "worker" && light.profile.id).toBe("c1");
    const standard = decideDelegation(task({ complexity: 0.6, risk: 0.5 }), options);
    expect(standard.run === "worker" && standard.profile.id).toBe("c2l");
    expect(standard.reason).toBe(
      "score 0.365 needs tier 2: smallest sufficient profile codex codex-m2/low (tier 2)",
    );
    const hard = decideDelegation(task({ complexity: 1, risk: 1 }), options);
    expect(hard).toMatchObject({ tier: 2, score: 0.65 });
    expect(hard.run === "worker" && hard.profile.id).toBe("c2l");
    const top = decideDelegation(task({ complexity: 1, risk: 1, ambiguity: 1 }), options);
    expect(top).toMatchObject({ tier: 3 });
    expect(top.run === "worker" && top.profile.id).toBe("c3");
  });

  it("prefers the primary's executor only on a tie, and uses the other when the primary's is not admitted", () => {
    const claudeFirst = decideDelegation(task({ complexity: 1, risk: 1, ambiguity: 1 }), {
      ...options,
      primaryExecutor: "claude",
    });
    expect(claudeFirst.run === "worker" && claudeFirst.profile.id).toBe("a3");
    const codexOut = decideDelegation(task({ complexity: 1, risk: 1 }), {
      ...options,
      admitted: (executor) => executor !== "codex",
    });
    expect(codexOut.run === "worker" && codexOut.profile.id).toBe("a2");
  });

  it("falls back to a higher tier when the required one is missing, skips unverified and too-small windows", () => {
    const profiles = [
      profile("c1", "codex", 1, "low", { verified: false }),
      profile("small", "codex", 2, "low", { contextWindow: 8_000 }),
      profile("c3", "codex", 3, "high"),
    ];
    const decision = decideDelegation(task({ complexity: 0.1 }), { ...options, profiles });
    expect(decision.run === "worker" && decision.profile.id).toBe("c3");
  });

  it("runs in the primary, with the reason, when no profile fits", () => {
    const reason = (
      profiles: ModelProfile[],
      admitted = all,
      s: Partial<TaskSignals> = { complexity: 1, risk: 1, ambiguity: 1 },
    ) => decideDelegation(task(s), { ...options, profiles, admitted }).reason;
    expect(reason([profile("x", "codex", 3, "high", { verified: false })])).toBe(
      "no verified worker profile",
    );
    expect(reason(PROFILES, () => false)).toBe("no executor admitted for a worker (quota headroom)");
    expect(reason([profile("c2", "codex", 2, "high")])).toBe(
      "score 0.85 needs tier 3: no admitted verified profile reaches tier 3",
    );
    expect(reason([profile("c3", "codex", 3, "high", { contextWindow: 10_000 })])).toBe(
      "score 0.85 needs tier 3: no admitted verified profile holds est. 20000 tokens",
    );
  });
});

describe("escalate", () => {
  it("goes one tier up on the same executor, then the other, and stops at the top", () => {
    const c1 = PROFILES.find((p) => p.id === "c1") as ModelProfile;
    expect(escalate(c1, PROFILES)?.profile.id).toBe("c2l");
    expect(escalate(c1, PROFILES)?.reason).toBe(
      "escalated from codex codex-m1/minimal (tier 1) to codex codex-m2/low (tier 2) after a weak or failed answer",
    );
    const onlyClaudeAbove = [c1, profile("a2", "claude", 2, "medium"), profile("a3", "claude", 3, "high")];
    expect(escalate(c1, onlyClaudeAbove)?.profile.id).toBe("a2");
    expect(escalate(PROFILES[0] as ModelProfile, PROFILES)).toBeUndefined();
    expect(escalate(c1, PROFILES, (e) => e === "claude")?.profile.id).toBe("a2");
    expect(escalate(c1, [c1, profile("c2", "codex", 2, "low", { verified: false })])).toBeUndefined();
  });
});
