// The memory database opened as one store: pages, versions, graph, feedback and episodes (page-store.ts) beside
// the approvals (approvals/store.ts), which apply their changes through the page store in the deciding
// transaction. One implementation on the SQL layer: a SQLite file (embedded default) or PostgreSQL's
// ivoai_memory schema, shared by every gateway replica.
import type { ApprovalRecord } from "../approvals/store.js";
import {
  type ApprovalStore,
  createApprovalStore,
  type Decision,
  type DecisionOutcome,
} from "../approvals/store.js";
import type { VectorStore } from "../context/vector-matrix.js";
import { migrate } from "../store/migrations.js";
import type { SqlDatabase } from "../store/sql.js";
import { openSqliteSql } from "../store/sqlite.js";
import { createMemoryPageStore, type MemoryPageStore, type PageWrite } from "./page-store.js";
import { pageVectorStore } from "./page-vectors.js";
import {
  adoptLegacyMemory,
  MEMORY_MIGRATIONS,
  nameUnnamedEvents,
  newInstanceId,
  SEED_INSTANCE,
  SEED_META,
} from "./schema.js";

export type {
  ApplyApproval,
  ApprovalAction,
  ApprovalPage,
  ApprovalRecord,
  ApprovalStatus,
  ApprovalStore,
  ApprovalSummary,
  Decision,
  DecisionOutcome,
} from "../approvals/store.js";
export { LIST_SUMMARY_CHARS } from "../approvals/store.js";
export type {
  EpisodeInput,
  EpisodeRecord,
  FeedbackKind,
  MemoryPageStore,
  PageHead,
  PageRecord,
  PageVersionContent,
  PageWrite,
} from "./page-store.js";
export { FEEDBACK_KINDS, MAX_COUNTED_COMPLETIONS, MAX_NEIGHBOURS } from "./page-store.js";

export interface MemoryStats {
  pages: number;
  versions: number;
  edges: number;
  episodes: number;
  pending_approvals: number;
}

export interface MemoryStore extends Omit<MemoryPageStore, "applyApproval">, Omit<ApprovalStore, "decide"> {
  /** Decides a request once; an approved change is `prepare`d from the stored request and applied with it. */
  decide(
    decision: Decision,
    prepare: (approval: ApprovalRecord) => PageWrite | undefined,
  ): Promise<DecisionOutcome>;
  /** Counts of pages, versions, edges, episodes and pending approvals. */
  stats(): Promise<MemoryStats>;
  /** Embeddings of pages by index name (memory/vectors.ts), kept in this database. */
  readonly vectors: VectorStore;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** The store over an open database: migrates it first (a database newer than this build is STORE_VERSION). */
export async function createMemoryStore(db: SqlDatabase): Promise<MemoryStore> {
  await adoptLegacyMemory(db);
  await migrate(db, "memory", MEMORY_MIGRATIONS);
  await db.run(SEED_META);
  await db.run(SEED_INSTANCE, [newInstanceId()]);
  await nameUnnamedEvents(db);
  const { applyApproval, ...pages } = createMemoryPageStore(db);
  const approvals = createApprovalStore(db);
  return {
    ...pages,
    ...approvals,
    vectors: pageVectorStore(db),
    decide: (decision, prepare) =>
      approvals.decide(decision, (tx, approval) => applyApproval(tx, approval, decision, prepare)),
    async stats() {
      const row = await db.get<Record<string, number>>(`SELECT (SELECT COUNT(*) FROM pages) AS pages,
        (SELECT COUNT(*) FROM page_versions) AS versions, (SELECT COUNT(*) FROM edges) AS edges,
        (SELECT COUNT(*) FROM episodes) AS episodes,
        (SELECT COUNT(*) FROM approvals WHERE status = 'pending') AS pending_approvals`);
      return {
        pages: Number(row?.pages ?? 0),
        versions: Number(row?.versions ?? 0),
        edges: Number(row?.edges ?? 0),
        episodes: Number(row?.episodes ?? 0),
        pending_approvals: Number(row?.pending_approvals ?? 0),
      };
    },
    async ping() {
      await db.get("SELECT 1 AS ok");
    },
    close: () => db.close(),
  };
}

/** The store in a SQLite file (created, adopted or migrated as needed). */
export async function openMemoryStore(file: string): Promise<MemoryStore> {
  const db = openSqliteSql(file);
  try {
    return await createMemoryStore(db);
  } catch (error) {
    await db.close();
    throw error;
  }
}
