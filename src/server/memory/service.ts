// The memory service composed: store, searcher, approval gate, MCP tools, and the expiry sweep.
import path from "node:path";
import type { ServerConfig } from "../../config/server-config.js";
import type { ServerPaths } from "../../config/server-paths.js";
import type { Logger } from "../../shared/logger.js";
import { type ApprovalGate, createApprovalGate } from "../approvals/gate.js";
import type { AuditLog } from "../audit/store.js";
import { type Embedder, vectorFormatOf } from "../context/embedder.js";
import { DEFAULT_FUSION } from "../context/fusion.js";
import type { ToolSpec } from "../mcp/endpoint.js";
import { readPostgresUrl, resolveStoreBackend, sqliteFileOf } from "../store/backend.js";
import type { ChangeSignal } from "../store/postgres.js";
import { openSqliteSql } from "../store/sqlite.js";
import { MEMORY_CHANGED } from "./page-store.js";
import { createMemoryIndex, createMemorySearcher, type MemorySearcher } from "./query.js";
import { createMemoryStore, type MemoryStore } from "./store.js";
import { createMemoryTools, type MemoryStatus } from "./tools.js";
import { createMemoryVectors, type MemoryVectors } from "./vectors.js";

export interface MemoryService {
  store: MemoryStore;
  searcher: MemorySearcher;
  /** The pages' vectors, when the context embedder is a model (onnx, tei) and [memory] vector_weight > 0. */
  vectors: MemoryVectors | undefined;
  gate: ApprovalGate;
  tools: ToolSpec[];
  status(): Promise<MemoryStatus>;
  /** Removes expired pages and expires stale approval requests; both are logged and audited. */
  sweep(): Promise<{ expired_pages: number; expired_approvals: number }>;
  close(): Promise<void>;
}

export interface MemoryServiceOptions {
  paths: ServerPaths;
  config: ServerConfig;
  logger: Logger;
  audit?: AuditLog;
  now?: () => Date;
  /**
   * The gateway: on PostgreSQL, refresh the index as soon as another replica writes (LISTEN), rather than only
   * at the next query (which still catches up by generation: a lost notification costs latency, never a result).
   */
  listen?: boolean;
  /** The context's embedding model (onnx, tei): memory embeds its pages with it (memory/vectors.ts). */
  embedder?: Embedder;
  /**
   * Whether the page index saves its snapshot by itself when enough changed: the long-running gateway does; a CLI
   * command or a test only reads it (a background write would outlive the process or its folder).
   */
  persistIndex?: boolean;
}

/** The memory index's snapshot (a cache: deleting it only makes the next start slower). */
export function memoryIndexSnapshotFile(paths: ServerPaths): string {
  return path.join(paths.memoryDir, "page-index.snapshot");
}

/** The memory database's SQLite file (the embedded backend; backups copy it). */
export function memoryFile(paths: ServerPaths): string {
  return sqliteFileOf(paths, "memory");
}

/** Opens the memory store on the configured backend (server.toml `[store]`) and composes the service over it. */
export async function openMemoryService(options: MemoryServiceOptions): Promise<MemoryService> {
  const now = options.now ?? (() => new Date());
  // The configuration given decides the backend (PostgreSQL's URL is read from its secrets file).
  const db =
    options.config.store.backend === "sqlite"
      ? openSqliteSql(memoryFile(options.paths))
      : await (await resolveStoreBackend(options.paths)).open("memory");
  let store: MemoryStore;
  let searcher: MemorySearcher;
  let vectors: MemoryVectors | undefined;
  let changes: ChangeSignal | undefined;
  const weight = options.config.memory.vector_weight;
  try {
    store = await createMemoryStore(db);
    if (options.embedder && weight > 0)
      vectors = createMemoryVectors({
        store,
        embedder: options.embedder,
        logger: options.logger,
        format: vectorFormatOf(options.config.context.embedder),
      });
    const index = createMemoryIndex(store, {
      snapshotFile: memoryIndexSnapshotFile(options.paths),
      onSnapshotProblem: (message) => options.logger.warn(`memory ${message}`),
      autoPersist: options.persistIndex ?? false,
    });
    const opened = createMemorySearcher(store, index, {
      now,
      logger: options.logger,
      ...(vectors ? { vectors, fusion: { ...DEFAULT_FUSION, vectorWeight: weight } } : {}),
    });
    searcher = opened;
    if (options.listen && db.dialect === "postgres") {
      const { listenForChanges } = await import("../store/postgres.js");
      changes = await listenForChanges(await readPostgresUrl(options.paths), MEMORY_CHANGED, {
        onSignal: () => {
          opened.refresh().catch((error: unknown) =>
            options.logger.warn("memory index refresh failed", {
              error: error instanceof Error ? error.message : String(error),
            }),
          );
        },
      });
    }
  } catch (error) {
    await db.close();
    throw error;
  }
  const gate = createApprovalGate({
    store,
    ...(options.audit ? { audit: options.audit } : {}),
    ttlMs: options.config.memory.approval_ttl,
    maxPendingPerClient: options.config.memory.max_pending_approvals_per_client,
    now,
  });
  let lastSweep: string | null = null;
  const status = async (): Promise<MemoryStatus> => ({
    status: "healthy",
    ...(await store.stats()),
    indexed_pages: searcher.size,
    last_sweep: lastSweep,
  });
  return {
    store,
    searcher,
    vectors,
    gate,
    tools: createMemoryTools({ store, searcher, gate, status }),
    status,
    async sweep() {
      const at = now().toISOString();
      const pages = await store.expirePages(at);
      for (const page of pages) {
        options.logger.info("memory page expired", { scope: page.scope, path: page.path });
        await options.audit?.record({ kind: "page_expired", actor: "system", detail: page });
      }
      const approvals = await gate.expire();
      for (const id of approvals) options.logger.info("approval request expired", { approval_id: id });
      lastSweep = at;
      return { expired_pages: pages.length, expired_approvals: approvals.length };
    },
    async close() {
      await changes?.close();
      await store.close();
    },
  };
}
