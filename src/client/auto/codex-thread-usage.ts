// `codex exec --json` reports in turn.completed the running total of its thread, not the turn's own usage
// (openai/codex#17539): a resumed thread's report includes every earlier turn. ivoai keeps each codex thread's
// last total privately (one small 0600 file per thread, a week) and records only what the turn added, so a
// consolidation, a follow-up turn or a resumed session is never counted twice.
import { promises as fs } from "node:fs";
import path from "node:path";
import { writeFileAtomic } from "../../shared/atomic-file.js";
import type { TokenUsage } from "./contracts.js";

const THREAD_ID = /^[A-Za-z0-9_-]{1,128}$/;
/** Totals of threads not continued for this long are forgotten (a later resume then counts its total once). */
export const THREAD_TOTALS_KEEP_MS = 7 * 24 * 3_600_000;

interface Totals {
  input: number;
  cached: number;
  output: number;
}

function dirOf(stateDir: string): string {
  return path.join(stateDir, "auto", "codex-threads");
}

/**
 * The turn's own usage from codex's report of its thread's total. `resumed`: the turn continued `threadId`
 * (a fresh thread's first report is its own usage). The new total is kept for the next turn of the thread.
 */
export async function codexTurnUsage(
  stateDir: string,
  threadId: string,
  resumed: boolean,
  reported: TokenUsage,
): Promise<TokenUsage> {
  if (!THREAD_ID.test(threadId)) return reported;
  const file = path.join(dirOf(stateDir), `${threadId}.json`);
  const before = resumed ? await readTotals(file) : null;
  const total: Totals = {
    input: reported.inputTokens,
    cached: reported.cachedInputTokens,
    output: reported.outputTokens,
  };
  await fs
    .mkdir(dirOf(stateDir), { recursive: true, mode: 0o700 })
    .then(() => writeFileAtomic(file, JSON.stringify(total), { mode: 0o600, durable: false }))
    .catch(() => undefined);
  // A total below the one kept means codex started counting afresh (a new rollout): the report is the turn's.
  if (!before || total.input < before.input || total.output < before.output) return reported;
  return {
    ...reported,
    inputTokens: total.input - before.input,
    cachedInputTokens: Math.max(0, total.cached - before.cached),
    outputTokens: total.output - before.output,
  };
}

async function readTotals(file: string): Promise<Totals | null> {
  try {
    const parsed = JSON.parse(await fs.readFile(file, "utf8")) as Partial<Totals>;
    const ok = [parsed.input, parsed.cached, parsed.output].every(
      (value) => Number.isInteger(value) && (value as number) >= 0,
    );
    return ok ? (parsed as Totals) : null;
  } catch {
    return null;
  }
}

/** Forgets thread totals not written for THREAD_TOTALS_KEEP_MS. */
export async function sweepThreadTotals(stateDir: string, now = Date.now()): Promise<void> {
  const dir = dirOf(stateDir);
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    const file = path.join(dir, name);
    const stat = await fs.lstat(file).catch(() => null);
    if (stat?.isFile() && now - stat.mtimeMs > THREAD_TOTALS_KEEP_MS) await fs.rm(file, { force: true });
  }
}
