// The executor registry and model catalogue: where each official CLI is, whether it is logged in, and the
// model/effort profiles AUTO may schedule on it, with capability tiers and opaque ids. Codex's models are
// verified at runtime (`model/list`); Claude's are its CLI's aliases. Cached briefly in the state dir.
//
// Tier rule (documented in one place, here): a model has a class — 1 for light models (names with luna, mini,
// nano, lite, flash, haiku), 3 for the strongest (astra, opus, or a "pro"/"max" name part), 2 otherwise — and
// an effort shifts it: low/minimal −1, medium 0, high/xhigh +1; the result is clamped to 1..3. The "max" and
// "ultra" efforts are left out of the catalogue: their cost is never the smallest sufficient choice.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { writeFileAtomic } from "../../shared/atomic-file.js";
import { type LocatedAgent, type LoginState, locateAgent, loginStatus } from "../agents/catalog.js";
import { EXECUTORS, type ExecutorName, type ModelProfile, type Tier } from "./contracts.js";
import { type CodexModel, probeCodexAppServer } from "./quota/codex-app-server.js";
import { openQuotaStore } from "./quota/store.js";

/** Registry results younger than this are reused (`refresh` ignores them). */
export const REGISTRY_TTL_MS = 10 * 60_000;
/** …and this, when a probe reported a problem (not logged in, no answer). */
export const FAILED_PROBE_TTL_MS = 60_000;
/** model/list does not say the context window: these are the conservative sizes the catalogue assumes. */
export const CODEX_CONTEXT_WINDOW = 272_000;
export const CLAUDE_CONTEXT_WINDOW = 200_000;

const CATALOGUE_EFFORTS = ["minimal", "low", "medium", "high", "xhigh"] as const;
const EFFORT_ORDER = ["none", "minimal", "low", "medium", "high", "xhigh", "max", "ultra"];
const EFFORT_SHIFT: Record<string, number> = { minimal: -1, low: -1, medium: 0, high: 1, xhigh: 1 };

/** Used when `model/list` cannot answer: the pinned codex's current models, marked unverified. */
const CODEX_FALLBACK: CodexModel[] = [
  {
    model: "gpt-6.2-sol",
    displayName: "GPT-6.2-Sol",
    isDefault: true,
    efforts: ["low", "medium", "high", "xhigh"],
    defaultEffort: "low",
  },
  {
    model: "gpt-6.2-astra",
    displayName: "GPT-6.2-Astra",
    isDefault: false,
    efforts: ["low", "medium", "high", "xhigh"],
    defaultEffort: "low",
  },
  {
    model: "gpt-6-luna",
    displayName: "GPT-6-Luna",
    isDefault: false,
    efforts: ["low", "medium", "high", "xhigh"],
    defaultEffort: "medium",
  },
];
/** Claude Code's family aliases (`--model`) and its `--effort` levels, cheapest first. */
const CLAUDE_ALIASES = ["haiku", "sonnet", "opus"] as const;
const CLAUDE_EFFORTS = ["low", "medium", "high", "xhigh"] as const;

const profileSchema = z.object({
  id: z.string(),
  executor: z.enum(EXECUTORS),
  model: z.string(),
  effort: z.string(),
  tier: z.union([z.literal(1), z.literal(2), z.literal(3)]),
  contextWindow: z.number(),
  verified: z.boolean(),
});
const executorInfoSchema = z.object({
  name: z.enum(EXECUTORS),
  path: z.string().nullable(),
  version: z.string().nullable(),
  login: z.enum(["logged_in", "logged_out", "unknown"]),
  login_detail: z.string(),
  catalogue: z.enum(["model/list", "static"]),
  profiles: z.array(profileSchema).max(400),
  problems: z.array(z.string()).max(10),
});
const cacheSchema = z.object({ checked_at: z.string(), executors: z.array(executorInfoSchema) });

export type ExecutorInfo = z.infer<typeof executorInfoSchema>;
export interface ExecutorRegistry {
  /** When the CLIs were last probed (the cache's age). */
  checked_at: string;
  executors: ExecutorInfo[];
}

export interface RegistryOptions {
  stateDir: string;
  /** ivoai's managed bin dir (`<dataDir>/bin`), searched after PATH. */
  managedBin: string;
  env: NodeJS.ProcessEnv;
  /** Probe even when the cache is fresh. */
  refresh?: boolean;
  ttlMs?: number;
  now?: () => Date;
  /** Told when the cache or the quota store was unreadable. */
  onProblem?: (message: string) => void;
}

/**
 * Locates every executor and returns its login state and catalogue, from the state-dir cache when it is
 * younger than the TTL and the CLIs are still where they were. A codex probe also records its quota windows.
 */
export async function loadExecutorRegistry(options: RegistryOptions): Promise<ExecutorRegistry> {
  const now = options.now ?? (() => new Date());
  const file = path.join(options.stateDir, "auto", "executors.json");
  const located = await Promise.all(
    EXECUTORS.map((name) => locateAgent(name, options.managedBin, options.env)),
  );
  if (!options.refresh) {
    const cached = await readCache(file);
    // A probe that failed is retried sooner than a clean result: the catalogue would stay unverified meanwhile.
    const clean = cached?.executors.every((entry) => entry.path === null || entry.problems.length === 0);
    const ttl = Math.min(
      options.ttlMs ?? REGISTRY_TTL_MS,
      clean ? Number.POSITIVE_INFINITY : FAILED_PROBE_TTL_MS,
    );
    const fresh =
      cached &&
      now().getTime() - Date.parse(cached.checked_at) < ttl &&
      now().getTime() >= Date.parse(cached.checked_at) &&
      // Written before the login answer was parsed (a raw first line such as "{"): probe again.
      cached.executors.every((entry) => !/^[[{]/.test(entry.login_detail)) &&
      EXECUTORS.every(
        (name, at) => cached.executors.find((e) => e.name === name)?.path === (located[at]?.path ?? null),
      );
    if (fresh) return cached;
  }
  const executors = await Promise.all(
    EXECUTORS.map((name, at) => probeExecutor(name, located[at], options, now)),
  );
  const registry = { checked_at: now().toISOString(), executors };
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  await writeFileAtomic(file, `${JSON.stringify(registry, null, 2)}\n`, { mode: 0o600 });
  return registry;
}

async function readCache(file: string): Promise<ExecutorRegistry | undefined> {
  try {
    return cacheSchema.parse(JSON.parse(await fs.readFile(file, "utf8")));
  } catch {
    return undefined; // missing or unreadable: probe afresh and replace it
  }
}

async function probeExecutor(
  name: ExecutorName,
  agent: LocatedAgent | undefined,
  options: RegistryOptions,
  now: () => Date,
): Promise<ExecutorInfo> {
  if (!agent)
    return {
      name,
      path: null,
      version: null,
      login: "unknown",
      login_detail: "not installed (not on PATH)",
      catalogue: "static",
      profiles: name === "codex" ? codexProfiles(CODEX_FALLBACK, false) : claudeProfiles(false),
      problems: [`${name} is not installed (not on PATH)`],
    };
  const [version, login] = await Promise.all([
    cliVersion(agent.path, options.env),
    loginStatus(agent, options.env),
  ]);
  if (name === "claude") {
    const verified = login.state === "logged_in";
    return {
      name,
      path: agent.path,
      version,
      login: login.state,
      login_detail: login.detail,
      catalogue: "static",
      profiles: claudeProfiles(verified),
      problems: verified ? [] : ["claude is not logged in: its models are unverified"],
    };
  }
  const probe = await probeCodexAppServer({ cliPath: agent.path, env: options.env, now });
  if (probe.snapshots.length > 0) {
    await openQuotaStore({
      stateDir: options.stateDir,
      ...(options.onProblem ? { onProblem: options.onProblem } : {}),
    }).observe(probe.snapshots);
  }
  // The app-server's answer is the authority on the account; `codex login status` fills in when it could not say.
  const state: LoginState = probe.account !== "unknown" ? probe.account : login.state;
  return {
    name,
    path: agent.path,
    version,
    login: state,
    login_detail:
      probe.account === "logged_out"
        ? "codex is not logged in"
        : probe.account === "logged_in" && login.state !== "logged_in"
          ? "its app-server reads the account's rate limits"
          : login.detail,
    catalogue: probe.models ? "model/list" : "static",
    // Codex lists its models even logged out (0.171): like claude's, they count as verified only when usable.
    profiles: probe.models
      ? codexProfiles(probe.models, state !== "logged_out")
      : codexProfiles(CODEX_FALLBACK, false),
    problems: probe.problems.slice(0, 10),
  };
}

function cliVersion(file: string, env: NodeJS.ProcessEnv): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(file, ["--version"], { env, timeout: 10_000, maxBuffer: 64 * 1024 }, (error, stdout) => {
      const line = String(stdout).trim().split("\n")[0]?.trim() ?? "";
      resolve(error || !line ? null : line.slice(0, 80));
    });
  });
}

// ---------------------------------------------------------------------------------------------------------
// The catalogue.

/** Opaque, stable id of an executor/model/effort profile: "mdl_" + 8 hex of its SHA-256. */
export function profileId(executor: ExecutorName, model: string, effort: string): string {
  return `mdl_${createHash("sha256").update(`${executor}/${model}/${effort}`).digest("hex").slice(0, 8)}`;
}

/** 1 light, 2 standard, 3 strongest, from the model's name (see the file header). */
export function modelClass(model: string): Tier {
  const parts = model.toLowerCase().split(/[^a-z0-9]+/);
  if (parts.some((part) => ["luna", "mini", "nano", "lite", "flash", "haiku"].includes(part))) return 1;
  if (parts.some((part) => ["astra", "opus", "pro", "max"].includes(part))) return 3;
  return 2;
}

/** The tier of a model at an effort, or null for an effort the catalogue leaves out. */
export function profileTier(model: string, effort: string): Tier | null {
  const shift = EFFORT_SHIFT[effort];
  if (shift === undefined) return null;
  return Math.min(3, Math.max(1, modelClass(model) + shift)) as Tier;
}

function profile(
  executor: ExecutorName,
  model: string,
  effort: string,
  contextWindow: number,
  verified: boolean,
) {
  const tier = profileTier(model, effort);
  if (tier === null) return [];
  return [{ id: profileId(executor, model, effort), executor, model, effort, tier, contextWindow, verified }];
}

/** Codex profiles from `model/list` (verified) or the fallback list (not): each model × each catalogue effort. */
export function codexProfiles(models: readonly CodexModel[], verified: boolean): ModelProfile[] {
  return models.flatMap((entry) =>
    entry.efforts
      .filter((effort) => (CATALOGUE_EFFORTS as readonly string[]).includes(effort))
      .flatMap((effort) => profile("codex", entry.model, effort, CODEX_CONTEXT_WINDOW, verified)),
  );
}

/** Claude profiles: the CLI's aliases × efforts; verified when the CLI is present and logged in. */
export function claudeProfiles(verified: boolean): ModelProfile[] {
  return CLAUDE_ALIASES.flatMap((alias) =>
    CLAUDE_EFFORTS.flatMap((effort) => profile("claude", alias, effort, CLAUDE_CONTEXT_WINDOW, verified)),
  );
}

/**
 * The cheapest verified profile of `executor` whose tier is at least `minTier`: lowest tier first, then the
 * lower effort, then the lighter model, then catalogue order (codex lists its current models first).
 */
export function smallestSufficient(
  profiles: readonly ModelProfile[],
  minTier: Tier,
  executor: ExecutorName,
): ModelProfile | null {
  const candidates = profiles
    .map((entry, order) => ({ entry, order }))
    .filter(({ entry }) => entry.executor === executor && entry.verified && entry.tier >= minTier);
  candidates.sort(
    (a, b) =>
      a.entry.tier - b.entry.tier ||
      effortRank(a.entry.effort) - effortRank(b.entry.effort) ||
      modelClass(a.entry.model) - modelClass(b.entry.model) ||
      a.order - b.order,
  );
  return candidates[0]?.entry ?? null;
}

function effortRank(effort: string): number {
  const at = EFFORT_ORDER.indexOf(effort);
  return at === -1 ? EFFORT_ORDER.length : at;
}
