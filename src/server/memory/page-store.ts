// The memory pages on the SQL layer (SQLite or PostgreSQL): pages with every previous version, graph edges,
// feedback counts and episodes, plus the generation counter and tombstones the in-memory index catches up by.
// Writers serialise on the generation row, so page keys are handed out in commit order on both backends: an
// index that reads "keys above the highest seen" after a generation change misses no page of another replica.
import { IvoaiError } from "../../shared/errors.js";
import type { ApprovalRecord } from "../approvals/store.js";
import { containsPattern, likeOperator, type SqlDatabase, type SqlExecutor } from "../store/sql.js";
import { newEventId } from "./schema.js";

export type FeedbackKind = "helpful" | "not_helpful" | "stale" | "wrong";
export const FEEDBACK_KINDS: readonly FeedbackKind[] = ["helpful", "not_helpful", "stale", "wrong"];

export interface PageRecord {
  key: number;
  scope: string;
  path: string;
  title: string;
  tags: string[];
  relations: Record<string, string[]>;
  expires_at: string | null;
  body: string;
  version: number;
  author: string;
  created_at: string;
  updated_at: string;
  feedback: Record<FeedbackKind, number>;
}

/** A stored version's content: what an approver compares a proposed change with. */
export type PageVersionContent = Pick<
  PageRecord,
  "title" | "tags" | "relations" | "expires_at" | "body" | "version"
> & { deleted: boolean };

/** What ranking reads of a page: no body, title or metadata. */
export type PageHead = Pick<PageRecord, "key" | "scope" | "path" | "feedback">;

/** A page as written: the record's content fields plus what indexing and the graph need. */
export type PageWrite = Pick<
  PageRecord,
  "scope" | "path" | "title" | "tags" | "relations" | "expires_at" | "body" | "author"
> & {
  /** Analysed terms for the lexical index, and the page's language. */
  terms: string;
  language: string;
  /** Typed edges out of this page: [type, target path]. */
  edges: [string, string][];
};

export interface EpisodeInput {
  session_id: string;
  project: string;
  kind: string;
  recorded_at: string;
  valid_from: string | null;
  valid_to: string | null;
  data: Record<string, unknown>;
  /** The credential that recorded the event: the only one that reads it back. */
  credential_id: string;
}

export interface EpisodeRecord extends EpisodeInput {
  /** Random, unguessable id (`evt_…`); the order of events is kept internally. */
  id: string;
}

/** Links followed from one query's seed pages at most (graph expansion is a bonus, not a crawl). */
export const MAX_NEIGHBOURS = 500;

export interface MemoryPageStore {
  getPage(scope: string, path: string): Promise<PageRecord | undefined>;
  pagesByKeys(keys: readonly number[]): Promise<Map<number, PageRecord>>;
  /** Path and feedback of each page, without reading bodies (memory_query ranks 50 candidates, shows 10). */
  pageHeads(keys: readonly number[]): Promise<Map<number, PageHead>>;
  recentPages(scopes: readonly string[], limit: number): Promise<PageRecord[]>;
  /** Pages linked to or from these, in the given scopes, at most MAX_NEIGHBOURS: [source path, edge type, head]. */
  neighbours(
    scopes: readonly string[],
    paths: readonly string[],
  ): Promise<{ from: string; type: string; page: PageHead }[]>;
  backlinks(scope: string, path: string): Promise<{ from: string; type: string }[]>;
  /** Pages most recently updated first, one keyset page at a time; `q` matches title or path (a bad cursor is USAGE). */
  listPages(query: { q?: string; scope?: string; limit: number; cursor?: string }): Promise<{
    pages: PageRecord[];
    next_cursor: string | null;
  }>;
  /**
   * Scopes holding pages that start with `prefix` (bytewise order), at most `limit`, and how many there are,
   * counted up to MAX_COUNTED_COMPLETIONS.
   */
  pageScopes(prefix: string, limit: number): Promise<{ scopes: string[]; total: number }>;
  /** Paths of one scope's pages that start with `prefix` (bytewise order), at most `limit`, and how many (capped alike). */
  pagePaths(scope: string, prefix: string, limit: number): Promise<{ paths: string[]; total: number }>;
  /** Every stored version of a page (deletions included), newest first, metadata only. */
  pageVersions(
    scope: string,
    path: string,
  ): Promise<{ version: number; title: string; author: string; at: string; deleted: boolean }[]>;
  /** One stored version's content (deleted versions included), or undefined when there is no such version. */
  pageVersion(scope: string, path: string, version: number): Promise<PageVersionContent | undefined>;
  /** Title of each page that exists at one of the paths in one of the scopes (metadata only, one query). */
  pageTitles(
    scopes: readonly string[],
    paths: readonly string[],
  ): Promise<{ scope: string; path: string; title: string }[]>;
  /** Edges of these scopes that start or end at one of the paths (targets need not exist), at most `limit`. */
  edgesAround(
    scopes: readonly string[],
    paths: readonly string[],
    limit?: number,
  ): Promise<{ scope: string; from: string; type: string; to: string }[]>;
  /** The index feed: each page's analysed terms and scope, in key order after `afterKey`. */
  pageTermsAfter(afterKey: number, limit: number): Promise<{ key: number; terms: string; scope: string }[]>;
  /** Keys and scopes of pages with key > `afterKey`, in key order, at most `limit` (memory's vectors catch up by). */
  pageKeysAfter(afterKey: number, limit: number): Promise<{ key: number; scope: string }[]>;
  /** Keys of pages removed or replaced after `generation` (by any process or replica). */
  removedSince(generation: number): Promise<number[]>;
  /** Counts every page write of every process or replica. */
  generation(): Promise<number>;
  /** This database's identity (seeded at first open), which an index snapshot must match. */
  instance(): Promise<string | undefined>;
  /** How many pages the store holds (an index snapshot caught up must hold as many). */
  pageCount(): Promise<number>;
  languages(): Promise<string[]>;
  /** Applies a write directly: for expiry, tests and benchmarks; agents only ever write through approvals. */
  writePage(write: PageWrite, at: string): Promise<PageRecord>;
  /** Applies many writes in one transaction, each exactly as writePage would (imports and benchmarks). */
  writePages(writes: readonly PageWrite[], at: string): Promise<void>;
  expirePages(now: string): Promise<{ scope: string; path: string }[]>;
  /**
   * Applies an approved request inside the caller's transaction (the one that marks it applied): a conflict
   * message when the page changed since the request or no longer exists, else undefined.
   */
  applyApproval(
    tx: SqlExecutor,
    approval: ApprovalRecord,
    decision: { actor: string; at: string },
    prepare: (approval: ApprovalRecord) => PageWrite | undefined,
  ): Promise<string | undefined>;

  /** Records an event; returns its random id. */
  addEpisode(input: EpisodeInput): Promise<string>;
  /** Events the credential recorded itself, and no others. */
  episodes(query: {
    credential_id: string;
    session_id?: string;
    project?: string;
    as_of: string;
    limit: number;
    kinds?: readonly string[];
  }): Promise<EpisodeRecord[]>;
  /** An operator's view of one session: its events from every credential, as of a time, newest first. */
  sessionEpisodes(query: { session_id: string; as_of: string; limit: number }): Promise<EpisodeRecord[]>;
  /** One event, only for the credential that recorded it (anyone else gets undefined, as for an unknown id). */
  getEpisode(id: string, credentialId: string): Promise<EpisodeRecord | undefined>;
}

type Row = Record<string, unknown>;

/** `$n` parameters collected in order of use (a list used twice binds twice, as SQLite's `?` did). */
class Params {
  readonly values: unknown[] = [];
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
  list(values: readonly unknown[]): string {
    return values.map((value) => this.add(value)).join(", ");
  }
}

/** Completion counts its matches up to this many: a keystroke never counts every page. */
export const MAX_COUNTED_COMPLETIONS = 1000;

/**
 * `column` starts with `prefix`: a range an index can serve (U+10FFFF sorts after every other character,
 * bytewise) and the exact test beside it, with no LIKE wildcards to escape.
 */
function startsWith(column: string, prefix: string, params: Params): string {
  const from = params.add(prefix);
  const to = params.add(`${prefix}\u{10FFFF}`);
  return `${column} >= ${from} AND ${column} < ${to} AND substr(${column}, 1, length(${params.add(prefix)})) = ${params.add(prefix)}`;
}

/** The page list cursor: the (updated_at, key) of the last page shown, opaque to callers. */
function encodePageCursor(page: { updated_at: string; key: number }): string {
  return Buffer.from(JSON.stringify([page.updated_at, page.key])).toString("base64url");
}

function decodePageCursor(cursor: string): { updated_at: string; key: number } {
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown;
    if (Array.isArray(value) && typeof value[0] === "string" && Number.isSafeInteger(value[1])) {
      return { updated_at: value[0], key: value[1] as number };
    }
  } catch {
    // falls through to the usage error
  }
  throw new IvoaiError("USAGE", "invalid cursor: pass the next_cursor of the previous page unchanged");
}

const HEAD_COLUMNS = "key, scope, path, helpful, not_helpful, stale, wrong";
/** A page's columns as records show them: all but the analysed terms, which only the index reads. */
const PAGE_COLUMNS =
  "key, scope, path, title, tags, relations, expires_at, body, version, author, created_at, updated_at, helpful, not_helpful, stale, wrong";
const PAGE_BY_PATH = `SELECT ${PAGE_COLUMNS} FROM pages WHERE scope = $1 AND path = $2`;
/** Edges per INSERT (4 parameters each: far below both backends' parameter limits). */
const EDGE_BATCH = 500;

function toPageHead(row: Row): PageHead {
  return {
    key: Number(row.key),
    scope: String(row.scope),
    path: String(row.path),
    feedback: {
      helpful: Number(row.helpful),
      not_helpful: Number(row.not_helpful),
      stale: Number(row.stale),
      wrong: Number(row.wrong),
    },
  };
}

function toPage(row: Row): PageRecord {
  return {
    ...toPageHead(row),
    title: String(row.title),
    tags: JSON.parse(String(row.tags)) as string[],
    relations: JSON.parse(String(row.relations)) as Record<string, string[]>,
    expires_at: (row.expires_at as string | null) ?? null,
    body: String(row.body),
    version: Number(row.version),
    author: String(row.author),
    created_at: String(row.created_at),
    updated_at: String(row.updated_at),
  };
}

function toEpisode(row: Row): EpisodeRecord {
  return {
    id: String(row.event_id),
    session_id: String(row.session_id),
    project: String(row.project),
    kind: String(row.kind),
    recorded_at: String(row.recorded_at),
    valid_from: (row.valid_from as string | null) ?? null,
    valid_to: (row.valid_to as string | null) ?? null,
    data: JSON.parse(String(row.data)),
    credential_id: String(row.credential_id),
  };
}

/** The PostgreSQL channel a page-writing transaction notifies on commit, so other replicas refresh early. */
export const MEMORY_CHANGED = "ivoai_memory_changed";

/**
 * Takes the page-write lock of this transaction (PostgreSQL: the generation row; SQLite's transactions are
 * serialised already) before anything is read that the write depends on. On PostgreSQL the same statement
 * queues the change notification, which is sent at commit and dropped on rollback.
 */
async function lockWrites(tx: SqlExecutor): Promise<void> {
  if (tx.dialect === "postgres")
    await tx.get(
      `SELECT value, pg_notify('${MEMORY_CHANGED}', '') AS notified FROM meta WHERE key = 'generation' FOR UPDATE`,
    );
}

async function bump(tx: SqlExecutor): Promise<number> {
  const row = await tx.get<{ g: number }>(
    "UPDATE meta SET value = CAST(CAST(value AS BIGINT) + 1 AS TEXT) WHERE key = 'generation' RETURNING CAST(value AS BIGINT) AS g",
  );
  return Number(row?.g);
}

async function tombstone(tx: SqlExecutor, key: number, generation: number): Promise<void> {
  await tx.run(
    `INSERT INTO removed_pages (key, generation) VALUES ($1, $2)
     ON CONFLICT (key) DO UPDATE SET generation = excluded.generation`,
    [key, generation],
  );
  await tx.run("DELETE FROM pages WHERE key = $1", [key]);
}

async function insertVersion(
  tx: SqlExecutor,
  page: Omit<PageWrite, "terms" | "language" | "edges">,
  version: number,
  at: string,
  deleted: boolean,
): Promise<void> {
  await tx.run(
    `INSERT INTO page_versions
      (scope, path, version, title, body, tags, relations, expires_at, author, written_at, deleted)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
    [
      page.scope,
      page.path,
      version,
      page.title,
      page.body,
      JSON.stringify(page.tags),
      JSON.stringify(page.relations),
      page.expires_at,
      page.author,
      at,
      deleted ? 1 : 0,
    ],
  );
}

/**
 * Replaces a page row (new key, so the index sees a removal and an addition) and records the version.
 * `current` is the page's row (null: no page) when the caller has just read it in this transaction.
 */
async function putPage(tx: SqlExecutor, write: PageWrite, at: string, given?: Row | null): Promise<void> {
  const generation = await bump(tx);
  const current =
    given !== undefined ? given : ((await tx.get<Row>(PAGE_BY_PATH, [write.scope, write.path])) ?? null);
  if (current) await tombstone(tx, Number(current.key), generation);
  const max = await tx.get<{ v: number | null }>(
    "SELECT MAX(version) AS v FROM page_versions WHERE scope = $1 AND path = $2",
    [write.scope, write.path],
  );
  const version = Number(max?.v ?? 0) + 1;
  // New content clears the stale/wrong flags; helpfulness votes stay with the page.
  const previous = current ? toPageHead(current).feedback : undefined;
  await tx.run(
    `INSERT INTO pages
      (scope, path, title, tags, relations, expires_at, body, version, author, created_at, updated_at, terms, language,
       helpful, not_helpful, stale, wrong)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, 0, 0)`,
    [
      write.scope,
      write.path,
      write.title,
      JSON.stringify(write.tags),
      JSON.stringify(write.relations),
      write.expires_at,
      write.body,
      version,
      write.author,
      current ? String(current.created_at) : at,
      at,
      write.terms,
      write.language,
      previous?.helpful ?? 0,
      previous?.not_helpful ?? 0,
    ],
  );
  await insertVersion(tx, write, version, at, false);
  await tx.run("DELETE FROM edges WHERE scope = $1 AND from_path = $2", [write.scope, write.path]);
  for (let start = 0; start < write.edges.length; start += EDGE_BATCH) {
    const params = new Params();
    const rows = write.edges
      .slice(start, start + EDGE_BATCH)
      .map(
        ([type, target]) =>
          `(${params.add(write.scope)}, ${params.add(write.path)}, ${params.add(type)}, ${params.add(target)})`,
      );
    await tx.run(
      `INSERT INTO edges (scope, from_path, type, to_path) VALUES ${rows.join(", ")} ON CONFLICT DO NOTHING`,
      params.values,
    );
  }
}

/** Pages per batched statement group in putPages (15 parameters a page row: far below both backends' limits). */
const PAGE_BATCH = 500;

/**
 * Many writes with a few statements per PAGE_BATCH pages instead of eight per page (PostgreSQL pays a round
 * trip for each), leaving the database exactly as putPage one write at a time would: the same keys, versions,
 * generations and tombstones. A path written twice starts a new group, so each group's paths are distinct.
 */
async function putPages(tx: SqlExecutor, writes: readonly PageWrite[], at: string): Promise<void> {
  let start = 0;
  while (start < writes.length) {
    const seen = new Set<string>();
    let end = start;
    while (end < writes.length && end - start < PAGE_BATCH) {
      const write = writes[end] as PageWrite;
      const id = JSON.stringify([write.scope, write.path]);
      if (seen.has(id)) break;
      seen.add(id);
      end += 1;
    }
    await putGroup(tx, writes.slice(start, end), at);
    start = end;
  }
}

async function putGroup(tx: SqlExecutor, group: readonly PageWrite[], at: string): Promise<void> {
  const id = (scope: unknown, path: unknown) => JSON.stringify([scope, path]);
  const pairs = (params: Params, column = "path") =>
    `(scope, ${column}) IN (VALUES ${group.map((write) => `(${params.add(write.scope)}, ${params.add(write.path)})`).join(", ")})`;
  const bumped = await tx.get<{ g: number }>(
    // The sum cast again: SQLite binds a JS number as REAL, and "4.0" is no generation.
    "UPDATE meta SET value = CAST(CAST(CAST(value AS BIGINT) + $1 AS BIGINT) AS TEXT) WHERE key = 'generation' RETURNING CAST(value AS BIGINT) AS g",
    [group.length],
  );
  const first = Number(bumped?.g) - group.length + 1;
  let params = new Params();
  const current = new Map<string, Row>();
  for (const row of await tx.all<Row>(
    `SELECT ${PAGE_COLUMNS} FROM pages WHERE ${pairs(params)}`,
    params.values,
  ))
    current.set(id(row.scope, row.path), row);
  if (current.size > 0) {
    params = new Params();
    const tombstones = group.flatMap((write, index) => {
      const row = current.get(id(write.scope, write.path));
      return row ? [`(${params.add(Number(row.key))}, ${params.add(first + index)})`] : [];
    });
    await tx.run(
      `INSERT INTO removed_pages (key, generation) VALUES ${tombstones.join(", ")}
       ON CONFLICT (key) DO UPDATE SET generation = excluded.generation`,
      params.values,
    );
    params = new Params();
    const keys = [...current.values()].map((row) => Number(row.key));
    await tx.run(`DELETE FROM pages WHERE key IN (${params.list(keys)})`, params.values);
  }
  params = new Params();
  const latest = new Map<string, number>();
  for (const row of await tx.all<Row>(
    `SELECT scope, path, MAX(version) AS v FROM page_versions WHERE ${pairs(params)} GROUP BY scope, path`,
    params.values,
  ))
    latest.set(id(row.scope, row.path), Number(row.v));
  const versions = group.map((write) => (latest.get(id(write.scope, write.path)) ?? 0) + 1);
  params = new Params();
  const pageRows = group.map((write, index) => {
    const previous = current.get(id(write.scope, write.path));
    const feedback = previous ? toPageHead(previous).feedback : undefined;
    const values = [
      write.scope,
      write.path,
      write.title,
      JSON.stringify(write.tags),
      JSON.stringify(write.relations),
      write.expires_at,
      write.body,
      versions[index],
      write.author,
      previous ? String(previous.created_at) : at,
      at,
      write.terms,
      write.language,
      feedback?.helpful ?? 0,
      feedback?.not_helpful ?? 0,
    ];
    return `(${params.list(values)}, 0, 0)`;
  });
  // Rows are keyed in VALUES order on both backends, as the same writes one at a time would be.
  await tx.run(
    `INSERT INTO pages
      (scope, path, title, tags, relations, expires_at, body, version, author, created_at, updated_at, terms, language,
       helpful, not_helpful, stale, wrong)
      VALUES ${pageRows.join(", ")}`,
    params.values,
  );
  params = new Params();
  const versionRows = group.map(
    (write, index) =>
      `(${params.list([
        write.scope,
        write.path,
        versions[index],
        write.title,
        write.body,
        JSON.stringify(write.tags),
        JSON.stringify(write.relations),
        write.expires_at,
        write.author,
        at,
      ])}, 0)`,
  );
  await tx.run(
    `INSERT INTO page_versions
      (scope, path, version, title, body, tags, relations, expires_at, author, written_at, deleted)
      VALUES ${versionRows.join(", ")}`,
    params.values,
  );
  params = new Params();
  await tx.run(`DELETE FROM edges WHERE ${pairs(params, "from_path")}`, params.values);
  const edges = group.flatMap((write) =>
    write.edges.map(([type, target]) => [write.scope, write.path, type, target] as const),
  );
  for (let index = 0; index < edges.length; index += EDGE_BATCH) {
    params = new Params();
    const rows = edges.slice(index, index + EDGE_BATCH).map((edge) => `(${params.list(edge)})`);
    await tx.run(
      `INSERT INTO edges (scope, from_path, type, to_path) VALUES ${rows.join(", ")} ON CONFLICT DO NOTHING`,
      params.values,
    );
  }
}

async function removePage(tx: SqlExecutor, page: PageRecord, actor: string, at: string): Promise<void> {
  await tombstone(tx, page.key, await bump(tx));
  await tx.run("DELETE FROM edges WHERE scope = $1 AND from_path = $2", [page.scope, page.path]);
  await insertVersion(tx, { ...page, author: actor }, page.version + 1, at, true);
}

/** The store over a database already migrated (see createMemoryStore). */
export function createMemoryPageStore(db: SqlDatabase): MemoryPageStore {
  return { ...pageLookups(db), ...pageListings(db), ...pageWrites(db), ...episodeLog(db) };
}

type PageLookups = Pick<
  MemoryPageStore,
  "getPage" | "pagesByKeys" | "pageHeads" | "recentPages" | "neighbours" | "backlinks"
>;

/** Pages and their links by key, path or scope. */
function pageLookups(db: SqlDatabase): PageLookups {
  const headOf = (alias: string) =>
    HEAD_COLUMNS.split(", ")
      .map((column) => `${alias}.${column}`)
      .join(", ");

  return {
    async getPage(scope, path) {
      const row = await db.get<Row>(PAGE_BY_PATH, [scope, path]);
      return row ? toPage(row) : undefined;
    },
    async pagesByKeys(keys) {
      const out = new Map<number, PageRecord>();
      if (keys.length === 0) return out;
      const params = new Params();
      const sql = `SELECT ${PAGE_COLUMNS} FROM pages WHERE key IN (${params.list(keys)})`;
      for (const row of await db.all<Row>(sql, params.values)) out.set(Number(row.key), toPage(row));
      return out;
    },
    async pageHeads(keys) {
      const out = new Map<number, PageHead>();
      if (keys.length === 0) return out;
      const params = new Params();
      const sql = `SELECT ${HEAD_COLUMNS} FROM pages WHERE key IN (${params.list(keys)})`;
      for (const row of await db.all<Row>(sql, params.values)) out.set(Number(row.key), toPageHead(row));
      return out;
    },
    async recentPages(scopes, limit) {
      if (scopes.length === 0) return [];
      const params = new Params();
      const sql = `SELECT ${PAGE_COLUMNS} FROM pages WHERE scope IN (${params.list(scopes)})
        ORDER BY updated_at DESC, key DESC LIMIT ${params.add(limit)}`;
      return (await db.all<Row>(sql, params.values)).map(toPage);
    },
    async neighbours(scopes, paths) {
      if (scopes.length === 0 || paths.length === 0) return [];
      // Both directions by index: (scope, from_path) is the key, (scope, to_path) edges_scope_to.
      // Heads only, and at most MAX_NEIGHBOURS: agent-written pages may link to thousands of others, and a query
      // reads bodies only for the pages it returns.
      const params = new Params();
      const sql = `SELECT * FROM (
           SELECT e.from_path AS source, e.type, ${headOf("p")} FROM edges e
             JOIN pages p ON p.path = e.to_path AND p.scope IN (${params.list(scopes)})
           WHERE e.scope IN (${params.list(scopes)}) AND e.from_path IN (${params.list(paths)})
           UNION ALL
           SELECT e.to_path AS source, e.type, ${headOf("p")} FROM edges e
             JOIN pages p ON p.path = e.from_path AND p.scope = e.scope
           WHERE e.scope IN (${params.list(scopes)}) AND e.to_path IN (${params.list(paths)})
         ) AS links LIMIT ${MAX_NEIGHBOURS}`;
      return (await db.all<Row>(sql, params.values)).map((row) => ({
        from: String(row.source),
        type: String(row.type),
        page: toPageHead(row),
      }));
    },
    async backlinks(scope, path) {
      return db.all<{ from: string; type: string }>(
        'SELECT from_path AS "from", type FROM edges WHERE scope = $1 AND to_path = $2 ORDER BY from_path',
        [scope, path],
      );
    },
  };
}

type PageListings = Pick<
  MemoryPageStore,
  | "listPages"
  | "pageScopes"
  | "pagePaths"
  | "pageVersions"
  | "pageVersion"
  | "pageTitles"
  | "edgesAround"
  | "pageTermsAfter"
  | "pageKeysAfter"
  | "removedSince"
  | "generation"
  | "instance"
  | "pageCount"
  | "languages"
>;

/** Pages by page, completion, history, and what the index needs to catch up. */
function pageListings(db: SqlDatabase): PageListings {
  const like = likeOperator(db.dialect);
  return {
    async listPages(query) {
      const after = query.cursor === undefined ? undefined : decodePageCursor(query.cursor);
      const params = new Params();
      const where: string[] = [];
      if (query.scope !== undefined) where.push(`scope = ${params.add(query.scope)}`);
      if (query.q) {
        const pattern = params.add(containsPattern(query.q));
        where.push(`(title ${like} ${pattern} ESCAPE '\\' OR path ${like} ${pattern} ESCAPE '\\')`);
      }
      if (after) {
        const updated = params.add(after.updated_at);
        where.push(
          `(updated_at < ${updated} OR (updated_at = ${updated} AND key < ${params.add(after.key)}))`,
        );
      }
      const rows = await db.all<Row>(
        `SELECT ${PAGE_COLUMNS} FROM pages ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
         ORDER BY updated_at DESC, key DESC LIMIT ${params.add(query.limit + 1)}`,
        params.values,
      );
      const pages = rows.slice(0, query.limit).map(toPage);
      const last = pages.at(-1);
      return { pages, next_cursor: rows.length > query.limit && last ? encodePageCursor(last) : null };
    },
    async pageScopes(prefix, limit) {
      // A skip scan over the (scope, path) key from the prefix on, like languages(): one index seek per scope,
      // never a walk over the pages (scopes sort bytewise on both backends, so the matches are contiguous).
      const rows = await db.all<{ scope: string }>(
        `WITH RECURSIVE present(scope, n) AS (
          SELECT (SELECT MIN(scope) FROM pages WHERE scope >= $1), 1
          UNION ALL SELECT (SELECT MIN(scope) FROM pages WHERE scope > present.scope), present.n + 1 FROM present
            WHERE present.scope IS NOT NULL AND substr(present.scope, 1, length($1)) = $1 AND present.n < $2)
        SELECT scope FROM present WHERE scope IS NOT NULL AND substr(scope, 1, length($1)) = $1 ORDER BY scope`,
        [prefix, MAX_COUNTED_COMPLETIONS],
      );
      return { scopes: rows.slice(0, limit).map((row) => row.scope), total: rows.length };
    },
    async pagePaths(scope, prefix, limit) {
      const where = (params: Params) =>
        `scope = ${params.add(scope)} AND ${startsWith("path", prefix, params)}`;
      const params = new Params();
      const rows = await db.all<{ path: string }>(
        `SELECT path FROM pages WHERE ${where(params)} ORDER BY path LIMIT ${params.add(limit)}`,
        params.values,
      );
      const counting = new Params();
      const count = await db.get<{ n: number | string }>(
        `SELECT COUNT(*) AS n FROM (SELECT 1 FROM pages WHERE ${where(counting)}
         LIMIT ${counting.add(MAX_COUNTED_COMPLETIONS)}) AS matching`,
        counting.values,
      );
      return { paths: rows.map((row) => row.path), total: Number(count?.n ?? 0) };
    },
    async pageVersions(scope, path) {
      const rows = await db.all<Row>(
        "SELECT version, title, author, written_at, deleted FROM page_versions WHERE scope = $1 AND path = $2 ORDER BY version DESC",
        [scope, path],
      );
      return rows.map((row) => ({
        version: Number(row.version),
        title: String(row.title),
        author: String(row.author),
        at: String(row.written_at),
        deleted: Number(row.deleted) === 1,
      }));
    },
    async pageVersion(scope, path, version) {
      const row = await db.get<Row>(
        "SELECT version, title, tags, relations, expires_at, body, deleted FROM page_versions WHERE scope = $1 AND path = $2 AND version = $3",
        [scope, path, version],
      );
      if (!row) return undefined;
      return {
        version: Number(row.version),
        title: String(row.title),
        tags: JSON.parse(String(row.tags)) as string[],
        relations: JSON.parse(String(row.relations)) as Record<string, string[]>,
        expires_at: (row.expires_at as string | null) ?? null,
        body: String(row.body),
        deleted: Number(row.deleted) === 1,
      };
    },
    async pageTitles(scopes, paths) {
      if (scopes.length === 0 || paths.length === 0) return [];
      const params = new Params();
      return db.all<{ scope: string; path: string; title: string }>(
        `SELECT scope, path, title FROM pages WHERE scope IN (${params.list(scopes)}) AND path IN (${params.list(paths)})`,
        params.values,
      );
    },
    async edgesAround(scopes, paths, limit = 10_000) {
      if (scopes.length === 0 || paths.length === 0) return [];
      // One index search per direction (an OR of both scanned every edge of the scopes).
      const params = new Params();
      return db.all<{ scope: string; from: string; type: string; to: string }>(
        `SELECT scope, from_path AS "from", type, to_path AS "to" FROM edges
           WHERE scope IN (${params.list(scopes)}) AND from_path IN (${params.list(paths)})
         UNION
         SELECT scope, from_path, type, to_path FROM edges
           WHERE scope IN (${params.list(scopes)}) AND to_path IN (${params.list(paths)})
         ORDER BY 1, 2, 3, 4 LIMIT ${params.add(limit)}`,
        params.values,
      );
    },
    async pageTermsAfter(afterKey, limit) {
      const rows = await db.all<{ key: number; terms: string; scope: string }>(
        "SELECT key, terms, scope FROM pages WHERE key > $1 ORDER BY key LIMIT $2",
        [afterKey, limit],
      );
      for (const row of rows) row.key = Number(row.key);
      return rows;
    },
    async pageKeysAfter(afterKey, limit) {
      const rows = await db.all<{ key: number; scope: string }>(
        "SELECT key, scope FROM pages WHERE key > $1 ORDER BY key LIMIT $2",
        [afterKey, limit],
      );
      for (const row of rows) row.key = Number(row.key);
      return rows;
    },
    async removedSince(generation) {
      const rows = await db.all<{ key: number }>("SELECT key FROM removed_pages WHERE generation > $1", [
        generation,
      ]);
      return rows.map((row) => Number(row.key));
    },
    async generation() {
      const row = await db.get<{ g: number }>(
        "SELECT CAST(value AS BIGINT) AS g FROM meta WHERE key = 'generation'",
      );
      return Number(row?.g ?? 0);
    },
    async instance() {
      return (await db.get<{ value: string }>("SELECT value FROM meta WHERE key = 'instance'"))?.value;
    },
    async pageCount() {
      return Number((await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM pages"))?.n ?? 0);
    },
    async languages() {
      // A skip scan over pages_language: one index seek per distinct language, not a pass over every page
      // (the index reloads languages after every write; a DISTINCT scan took ~100 ms at 500,000 pages).
      const rows = await db.all<{ language: string }>(`WITH RECURSIVE present(language) AS (
          SELECT MIN(language) FROM pages
          UNION ALL SELECT (SELECT MIN(language) FROM pages WHERE language > present.language) FROM present
            WHERE present.language IS NOT NULL)
        SELECT language FROM present WHERE language IS NOT NULL`);
      return rows.map((row) => row.language);
    },
  };
}

/** Writes, expiry and approved requests, each under the write lock. */
function pageWrites(
  db: SqlDatabase,
): Pick<MemoryPageStore, "writePage" | "writePages" | "expirePages" | "applyApproval"> {
  return {
    async writePage(input, at) {
      await db.transaction(async (tx) => {
        await lockWrites(tx);
        await putPage(tx, input, at);
      });
      const row = await db.get<Row>(PAGE_BY_PATH, [input.scope, input.path]);
      if (!row)
        throw new IvoaiError("INTERNAL", `page ${input.scope}/${input.path} vanished after its write`);
      return toPage(row);
    },
    async writePages(inputs, at) {
      if (inputs.length === 0) return;
      await db.transaction(async (tx) => {
        await lockWrites(tx);
        await putPages(tx, inputs, at);
      });
    },
    async expirePages(now) {
      return db.transaction(async (tx) => {
        await lockWrites(tx);
        const pages = (
          await tx.all<Row>(
            `SELECT ${PAGE_COLUMNS} FROM pages WHERE expires_at IS NOT NULL AND expires_at <= $1`,
            [now],
          )
        ).map(toPage);
        for (const page of pages) await removePage(tx, page, "system:expiry", now);
        return pages.map((page) => ({ scope: page.scope, path: page.path }));
      });
    },
    async applyApproval(tx, approval, decision, prepare) {
      await lockWrites(tx);
      const current = (await tx.get<Row>(PAGE_BY_PATH, [approval.scope, approval.path])) ?? null;
      const page = current ? toPage(current) : undefined;
      const currentVersion = page?.version ?? 0;
      if (approval.action !== "feedback" && currentVersion !== approval.base_version)
        return `the page changed since the request (version ${approval.base_version} → ${currentVersion}); ask again`;
      if (approval.action === "write_page") {
        const write = prepare(approval);
        if (!write) throw new IvoaiError("INTERNAL", `approval ${approval.id} has no page write`);
        const same = write.scope === approval.scope && write.path === approval.path;
        await putPage(tx, write, decision.at, same ? current : undefined);
        return undefined;
      }
      if (!page) return "the page no longer exists";
      if (approval.action === "delete_page") {
        await removePage(tx, page, decision.actor, decision.at);
        return undefined;
      }
      const kind = approval.payload.kind as FeedbackKind;
      if (!FEEDBACK_KINDS.includes(kind))
        throw new IvoaiError("INTERNAL", `approval ${approval.id} has no feedback kind`);
      // Counts only: ranking reads them when results are assembled, so the page keeps its index entry.
      await tx.run(`UPDATE pages SET ${kind} = ${kind} + 1 WHERE key = $1`, [page.key]);
      return undefined;
    },
  };
}

/** The episode log (hooks and the console's timeline). */
function episodeLog(
  db: SqlDatabase,
): Pick<MemoryPageStore, "addEpisode" | "episodes" | "sessionEpisodes" | "getEpisode"> {
  return {
    async addEpisode(input) {
      const id = newEventId();
      await db.run(
        `INSERT INTO episodes
          (session_id, project, kind, recorded_at, valid_from, valid_to, data, credential_id, event_id)
          VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [
          input.session_id,
          input.project,
          input.kind,
          input.recorded_at,
          input.valid_from,
          input.valid_to,
          JSON.stringify(input.data),
          input.credential_id,
          id,
        ],
      );
      return id;
    },
    async episodes(query) {
      const params = new Params();
      const asOf = params.add(query.as_of);
      const where = [
        `credential_id = ${params.add(query.credential_id)}`,
        `recorded_at <= ${asOf}`,
        `(valid_from IS NULL OR valid_from <= ${asOf})`,
        `(valid_to IS NULL OR valid_to > ${asOf})`,
      ];
      if (query.session_id !== undefined) where.push(`session_id = ${params.add(query.session_id)}`);
      if (query.project !== undefined) where.push(`project = ${params.add(query.project)}`);
      if (query.kinds?.length) where.push(`kind IN (${params.list(query.kinds)})`);
      const rows = await db.all<Row>(
        `SELECT * FROM episodes WHERE ${where.join(" AND ")} ORDER BY recorded_at DESC, id DESC LIMIT ${params.add(query.limit)}`,
        params.values,
      );
      return rows.map(toEpisode);
    },
    async sessionEpisodes(query) {
      // The same as_of rules as episodes(), without the credential: the operator's console sees every recorder.
      const rows = await db.all<Row>(
        `SELECT * FROM episodes WHERE session_id = $1 AND recorded_at <= $2
          AND (valid_from IS NULL OR valid_from <= $2) AND (valid_to IS NULL OR valid_to > $2)
          ORDER BY recorded_at DESC, id DESC LIMIT $3`,
        [query.session_id, query.as_of, query.limit],
      );
      return rows.map(toEpisode);
    },
    async getEpisode(id, credentialId) {
      const row = await db.get<Row>("SELECT * FROM episodes WHERE event_id = $1 AND credential_id = $2", [
        id,
        credentialId,
      ]);
      return row ? toEpisode(row) : undefined;
    },
  };
}
