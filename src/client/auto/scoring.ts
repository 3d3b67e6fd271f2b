// Which model runs a task (capability score → tier → the smallest sufficient verified profile, or the primary
// when delegating does not pay), how a weak answer escalates, and whether a request needs a plan at all.
import {
  type ExecutorName,
  type ModelProfile,
  otherExecutor,
  type PlanTask,
  type TaskSignals,
  type Tier,
} from "./contracts.js";

/**
 * Weights of the capability score. Complexity dominates (it decides whether a light model can reason it
 * through); risk next (a wrong answer costs a rework); ambiguity (light models guess); context need least
 * (a large context is mostly a window-size question, checked separately against est_tokens).
 */
export const SCORE_WEIGHTS = { complexity: 0.4, risk: 0.25, ambiguity: 0.2, context_need: 0.15 } as const;

/** Scores below `tier2` need tier 1, below `tier3` tier 2, the rest tier 3. */
export const TIER_THRESHOLDS = { tier2: 0.35, tier3: 0.7 } as const;

/** Below this many estimated tokens, starting a worker costs more than it saves. */
export const DEFAULT_MIN_WORKER_TOKENS = 4_000;

/** Weighted capability need of a task, 0 to 1 (rounded to 3 decimals so records stay stable). */
export function capabilityScore(signals: TaskSignals): number {
  const clamp = (value: number) => (Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : 1);
  const score =
    SCORE_WEIGHTS.complexity * clamp(signals.complexity) +
    SCORE_WEIGHTS.risk * clamp(signals.risk) +
    SCORE_WEIGHTS.ambiguity * clamp(signals.ambiguity) +
    SCORE_WEIGHTS.context_need * clamp(signals.context_need);
  return Math.round(Math.min(1, score) * 1000) / 1000;
}

/** The lowest tier able to take a task of this score. */
export function requiredTier(score: number): Tier {
  if (score < TIER_THRESHOLDS.tier2) return 1;
  if (score < TIER_THRESHOLDS.tier3) return 2;
  return 3;
}

export interface DelegationOptions {
  primaryExecutor: ExecutorName;
  profiles: readonly ModelProfile[];
  /** Quota admission of a worker on this executor now. */
  admitted: (executor: ExecutorName) => boolean;
  minWorkerTokens?: number;
}

export type Delegation =
  | { run: "primary"; reason: string }
  | { run: "worker"; profile: ModelProfile; origin: "scores"; score: number; tier: Tier; reason: string };

/**
 * Where a task runs. Change tasks and uneconomic ones stay in the primary; otherwise the smallest sufficient
 * verified, admitted profile: lowest tier at or above the required one, then lowest effort, then the primary's
 * executor before the other, with a context window that holds the task's estimate.
 */
export function decideDelegation(task: PlanTask, options: DelegationOptions): Delegation {
  if (task.kind === "change") {
    return { run: "primary", reason: "change task: only the primary applies changes" };
  }
  const minTokens = options.minWorkerTokens ?? DEFAULT_MIN_WORKER_TOKENS;
  if (task.signals.est_tokens < minTokens) {
    return {
      run: "primary",
      reason: `uneconomic: est. ${task.signals.est_tokens} tokens is below the ${minTokens}-token minimum for a worker`,
    };
  }
  const score = capabilityScore(task.signals);
  const tier = requiredTier(score);
  const verified = options.profiles.filter((profile) => profile.verified);
  if (verified.length === 0) return { run: "primary", reason: "no verified worker profile" };
  const admittedProfiles = verified.filter((profile) => options.admitted(profile.executor));
  if (admittedProfiles.length === 0) {
    return { run: "primary", reason: "no executor admitted for a worker (quota headroom)" };
  }
  const fitting = admittedProfiles.filter((profile) => fitsWindow(profile, task.signals.est_tokens));
  const sufficient = fitting.filter((profile) => profile.tier >= tier);
  const chosen = smallest(sufficient, options.primaryExecutor);
  if (!chosen) {
    const why =
      fitting.length === 0 ? `holds est. ${task.signals.est_tokens} tokens` : `reaches tier ${tier}`;
    return {
      run: "primary",
      reason: `score ${score} needs tier ${tier}: no admitted verified profile ${why}`,
    };
  }
  return {
    run: "worker",
    profile: chosen,
    origin: "scores",
    score,
    tier,
    reason: `score ${score} needs tier ${tier}: smallest sufficient profile ${describe(chosen)}`,
  };
}

/**
 * The profile for a retry after a weak or failed answer: the lowest tier above the current one, on the same
 * executor when it has one, else the other; undefined at the top.
 */
export function escalate(
  profile: ModelProfile,
  profiles: readonly ModelProfile[],
  admitted: (executor: ExecutorName) => boolean = () => true,
): { profile: ModelProfile; reason: string } | undefined {
  const higher = profiles.filter(
    (candidate) => candidate.verified && candidate.tier > profile.tier && admitted(candidate.executor),
  );
  const sameExecutor = higher.filter((candidate) => candidate.executor === profile.executor);
  const next = smallest(sameExecutor, profile.executor) ?? smallest(higher, otherExecutor(profile.executor));
  if (!next) return undefined;
  return {
    profile: next,
    reason: `escalated from ${describe(profile)} to ${describe(next)} after a weak or failed answer`,
  };
}

function fitsWindow(profile: ModelProfile, estTokens: number): boolean {
  return profile.contextWindow <= 0 || profile.contextWindow >= estTokens;
}

/** Reasoning efforts of both CLIs on one scale (codex: minimal…xhigh; claude: low…max). */
const EFFORT_RANK: Record<string, number> = { minimal: 0, low: 1, medium: 2, high: 3, xhigh: 4, max: 4 };

function effortRank(effort: string): number {
  return EFFORT_RANK[effort.toLowerCase()] ?? 2;
}

function smallest(profiles: readonly ModelProfile[], preferred: ExecutorName): ModelProfile | undefined {
  return [...profiles].sort(
    (a, b) =>
      a.tier - b.tier ||
      effortRank(a.effort) - effortRank(b.effort) ||
      Number(a.executor !== preferred) - Number(b.executor !== preferred) ||
      a.id.localeCompare(b.id),
  )[0];
}

function describe(profile: ModelProfile): string {
  return `${profile.executor} ${profile.model}/${profile.effort} (tier ${profile.tier})`;
}

export { MAX_RAG_CHARS, type RouteDecision, routeRequest } from "./request-route.js";
