// The quota store: normalised snapshots per (executor, window) in <stateDir>/auto/quota.json, shared by every
// ivoai process (AUTO sessions, the statusline hook, `ivoai executors`) through a cross-process lock.
import { promises as fs } from "node:fs";
import path from "node:path";
import { writeFileAtomic } from "../../../shared/atomic-file.js";
import { errnoCode } from "../../../shared/errors.js";
import { createFileLock } from "../../../shared/file-lock.js";
import type { ExecutorName, QuotaSnapshot } from "../contracts.js";
import { parseQuotaSnapshot } from "./snapshot.js";

/** More (executor, window) pairs than this and the least recently observed are dropped. */
export const MAX_QUOTA_SNAPSHOTS = 64;
/** A larger file is not read: it is treated as corrupt and replaced. */
const MAX_FILE_BYTES = 256 * 1024;

/** The file's snapshots; throws when it is not `{version: 1, snapshots: [...]}` with valid snapshots. */
function parseFile(value: unknown): QuotaSnapshot[] {
  const file = value as { version?: unknown; snapshots?: unknown } | null;
  if (typeof file !== "object" || file === null || file.version !== 1)
    throw new Error("not a version 1 file");
  if (!Array.isArray(file.snapshots) || file.snapshots.length > MAX_QUOTA_SNAPSHOTS)
    throw new Error("snapshots must be a list of at most MAX_QUOTA_SNAPSHOTS");
  return file.snapshots.map(parseQuotaSnapshot);
}

export interface QuotaStoreOptions {
  /** ivoai's client state dir; the file is `<stateDir>/auto/quota.json`. */
  stateDir: string;
  /** Told (one line) when the file was unreadable and is being replaced. Default: ignored. */
  onProblem?: (message: string) => void;
}

export interface QuotaStore {
  /** Where the snapshots live. */
  readonly file: string;
  /** Merges `snapshots` into the file under the lock and returns every stored snapshot. */
  observe(snapshots: readonly QuotaSnapshot[]): Promise<QuotaSnapshot[]>;
  /** Every stored snapshot (of one executor when given), most recently observed first. */
  read(executor?: ExecutorName): Promise<QuotaSnapshot[]>;
}

export function openQuotaStore(options: QuotaStoreOptions): QuotaStore {
  const dir = path.join(options.stateDir, "auto");
  const file = path.join(dir, "quota.json");
  const report = options.onProblem ?? (() => undefined);

  const load = async (): Promise<QuotaSnapshot[]> => {
    let text: string;
    try {
      const stat = await fs.lstat(file);
      if (!stat.isFile() || stat.size > MAX_FILE_BYTES) {
        report(`${file} is not a small regular file; replacing it`);
        return [];
      }
      text = await fs.readFile(file, "utf8");
    } catch (error) {
      if (errnoCode(error) === "ENOENT") return [];
      report(`cannot read ${file} (${(error as Error).message}); starting afresh`);
      return [];
    }
    try {
      return parseFile(JSON.parse(text));
    } catch {
      report(`${file} is corrupt; it is replaced by fresh observations`);
      return [];
    }
  };

  const ready = async () => {
    await fs.mkdir(dir, { recursive: true, mode: 0o700 });
    await fs.chmod(dir, 0o700);
  };

  return {
    file,
    async observe(snapshots) {
      const incoming = snapshots.map(parseQuotaSnapshot);
      await ready();
      const lock = createFileLock(path.join(dir, ".quota.lock"));
      try {
        return await lock.withLock(async () => {
          const merged = mergeSnapshots(await load(), incoming);
          const body = { version: 1 as const, snapshots: merged };
          await writeFileAtomic(file, `${JSON.stringify(body, null, 2)}\n`, { mode: 0o600 });
          return merged;
        });
      } finally {
        lock.close();
      }
    },
    async read(executor) {
      const all = await load();
      return executor ? all.filter((snapshot) => snapshot.executor === executor) : all;
    },
  };
}

const key = (snapshot: QuotaSnapshot) => `${snapshot.executor}\u0000${snapshot.window}`;
const time = (iso: string | null) => (iso === null ? Number.NaN : Date.parse(iso));

/**
 * Merges by (executor, window): the newer observation wins field by field, and a field it does not know (null)
 * keeps the older value — codex's `account/rateLimits/updated` and claude's stream events are partial. An older
 * value is not kept when the newer observation shows the older window has already reset.
 * The result is ordered most recently observed first and bounded to MAX_QUOTA_SNAPSHOTS.
 */
export function mergeSnapshots(
  stored: readonly QuotaSnapshot[],
  incoming: readonly QuotaSnapshot[],
): QuotaSnapshot[] {
  const byKey = new Map<string, QuotaSnapshot>();
  for (const snapshot of [...stored, ...incoming]) {
    const previous = byKey.get(key(snapshot));
    byKey.set(key(snapshot), previous ? mergeOne(previous, snapshot) : snapshot);
  }
  return [...byKey.values()]
    .sort((a, b) => time(b.observed_at) - time(a.observed_at) || key(a).localeCompare(key(b)))
    .slice(0, MAX_QUOTA_SNAPSHOTS);
}

function mergeOne(a: QuotaSnapshot, b: QuotaSnapshot): QuotaSnapshot {
  const [older, newer] = time(b.observed_at) >= time(a.observed_at) ? [a, b] : [b, a];
  // The older window ended before the newer observation: its usage and status say nothing about now.
  const olderExpired =
    older.resets_at !== null &&
    time(older.resets_at) <= time(newer.observed_at) &&
    older.resets_at !== newer.resets_at;
  const keep = <T>(value: T | null, fallback: T | null): T | null =>
    value !== null ? value : olderExpired ? null : fallback;
  return {
    executor: newer.executor,
    window: newer.window,
    used_percent: keep(newer.used_percent, older.used_percent),
    status: keep(newer.status, older.status),
    resets_at: keep(newer.resets_at, older.resets_at),
    observed_at: newer.observed_at,
    source: newer.source,
  };
}
