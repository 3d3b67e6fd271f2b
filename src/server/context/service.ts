// The context service: catalogue, searcher, optional vectors, MCP tools and connector administration, composed.
import { promises as fs } from "node:fs";
import path from "node:path";
import type { ServerConfig } from "../../config/server-config.js";
import type { ServerPaths } from "../../config/server-paths.js";
import { errnoCode, IvoaiError } from "../../shared/errors.js";
import type { Logger } from "../../shared/logger.js";
import type { ToolSpec } from "../mcp/endpoint.js";
import { resolveStoreBackend } from "../store/backend.js";
import { type Catalogue, type ConnectorRecord, openSqliteCatalogue } from "./catalogue.js";
import { type ConnectorType, closeAll, createConnector, gitListFiles, openRoot } from "./connectors/index.js";
import { fileCorpusModelStore } from "./corpus-store.js";
import { createCorpusVectorRetriever } from "./corpus-vectors.js";
import { createEmbedder, type Embedder, vectorFormatOf } from "./embedder.js";
import { CORPUS_FUSION, DEFAULT_FUSION } from "./fusion.js";
import { type IngestProgress, type IngestQuotas, type IngestSummary, ingestConnector } from "./ingest.js";
import { createWorkerPreparer } from "./prepare-pool.js";
import { type ContextSearcher, createContextSearcher } from "./search.js";
import { type ContextHealth, createContextTools } from "./tools.js";
import { createVectorRetriever, type VectorRetriever } from "./vectors.js";

export interface ConnectorSummary extends ConnectorRecord {
  documents: number;
}

export interface ContextService {
  catalogue: Catalogue;
  searcher: ContextSearcher;
  vectors: VectorRetriever | undefined;
  /** The embedding model (tei, onnx) when one is configured: memory embeds its pages with the same one. */
  embedder: Embedder | undefined;
  tools: ToolSpec[];
  health(): Promise<ContextHealth>;
  listConnectors(): Promise<ConnectorSummary[]>;
  addConnector(input: {
    name: string;
    type: ConnectorType;
    path: string;
    allowHardlinks?: boolean;
  }): Promise<ConnectorRecord>;
  removeConnector(name: string): Promise<{ removed_documents: number }>;
  ingest(names: readonly string[], onProgress?: (progress: IngestProgress) => void): Promise<IngestSummary[]>;
  /**
   * Brings the search index up to the catalogue (from its snapshot, if one is usable) and writes its snapshot, so
   * that the next start loads the index instead of rebuilding it from every chunk (what `server ingest` does last).
   */
  saveIndex(): Promise<{ chunks: number; duration_ms: number }>;
  close(): void | Promise<void>;
}

export interface ContextServiceOptions {
  paths: ServerPaths;
  config: ServerConfig;
  logger: Logger;
  now?: () => Date;
  /** The bundled ivoai script, to run document preparation on worker threads during ingest. */
  workerEntry?: string;
  /**
   * Whether the search index saves its snapshot by itself when enough changed: the long-running gateway does;
   * a CLI command or a test only reads it (a background write would outlive the process or its folder).
   */
  persistIndex?: boolean;
  /** The catalogue, when the store is not the SQLite file under contextDir (see openCatalogue). */
  catalogue?: Catalogue;
}

/**
 * The catalogue of the store server.toml names: the SQLite file under contextDir, or the shared PostgreSQL one.
 * `listen` (the gateway): follow PostgreSQL's change notifications rather than ask for the generation per search.
 */
export async function openCatalogue(
  paths: ServerPaths,
  options: { listen?: boolean } = {},
): Promise<Catalogue> {
  const backend = await resolveStoreBackend(paths);
  if (backend.kind === "sqlite") {
    const catalogue = openSqliteCatalogue(catalogueFile(paths));
    // Open (and migrated) here, so that a refused file (newer schema, edited migration) fails the caller's start.
    await catalogue.ready;
    return catalogue;
  }
  const { CATALOGUE_CHANNEL, openPostgresCatalogue } = await import("./catalogue-postgres.js");
  const db = await backend.open("context");
  const changes = options.listen && backend.listen ? await backend.listen(CATALOGUE_CHANNEL) : undefined;
  try {
    return await openPostgresCatalogue(db, changes);
  } catch (error) {
    await Promise.all([db.close(), changes?.close()]);
    throw error;
  }
}

export function catalogueFile(paths: ServerPaths): string {
  return path.join(paths.contextDir, "catalogue.sqlite");
}

/** The lexical index snapshot beside the catalogue (a cache: deleting it only makes the next start slower). */
export function indexSnapshotFile(paths: ServerPaths): string {
  return path.join(paths.contextDir, "lexical-index.snapshot");
}

/** The vector side configured: none, an embedding model (tei, onnx), or the corpus embedder learned here. */
function openVectors(
  options: ContextServiceOptions,
  catalogue: Catalogue,
): { vectors: VectorRetriever | undefined; embedder?: Embedder } {
  const { paths, logger } = options;
  const config = options.config.context.embedder;
  const cacheDir = path.join(paths.contextDir, "vectors");
  const store = catalogue.vectorStore ? { store: catalogue.vectorStore } : {};
  const format = vectorFormatOf(config);
  if (config.provider === "corpus") {
    const { provider: _, retrain_growth, train_sample, min_chunks, vector_format: __, ...params } = config;
    const vectors = createCorpusVectorRetriever({
      catalogue,
      params,
      policy: { retrain_growth, train_sample, min_chunks },
      models: catalogue.corpusModels ?? fileCorpusModelStore(path.join(paths.contextDir, "corpus-model.bin")),
      cacheDir,
      logger,
      format,
      ...store,
    });
    return { vectors };
  }
  const embedder = createEmbedder(config);
  if (!embedder) return { vectors: undefined };
  return {
    vectors: createVectorRetriever({ catalogue, embedder, cacheDir, logger, format, ...store }),
    embedder,
  };
}

/** What a connector may be named (also the `source` of a context resource URI). */
export const CONNECTOR_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

export function openContextService(options: ContextServiceOptions): ContextService {
  const { paths, config, logger } = options;
  const now = options.now ?? (() => new Date());
  const catalogue = options.catalogue ?? openSqliteCatalogue(catalogueFile(paths));
  const { vectors, embedder } = openVectors(options, catalogue);
  const fusion = config.context.fusion;
  const base = config.context.embedder.provider === "corpus" ? CORPUS_FUSION : DEFAULT_FUSION;
  const searcher = createContextSearcher({
    catalogue,
    ...(vectors ? { vectors } : {}),
    fusion: {
      k: fusion.rrf_k ?? base.k,
      vectorWeight: fusion.vector_weight ?? base.vectorWeight,
      depthFactor: fusion.depth_factor,
      depthExtra: base.depthExtra,
    },
    snapshotFile: indexSnapshotFile(paths),
    onSnapshotProblem: (message) => logger.warn(message),
    autoPersist: options.persistIndex ?? false,
  });
  const quotas: IngestQuotas = {
    documents: config.context.max_documents,
    bytes: config.context.max_bytes,
    chunks: config.context.max_chunks,
  };

  const health = async (): Promise<ContextHealth> => {
    const stats = await catalogue.stats();
    return {
      status: "healthy",
      connectors: stats.connectors,
      documents: stats.documents,
      chunks: stats.chunks,
      bytes: stats.bytes,
      lexical_index: { chunks: searcher.indexedChunks, generation: await catalogue.generation() },
      vector_index: vectors ? { name: vectors.name } : null,
    };
  };

  const listConnectors = async () => {
    const connectors = await catalogue.listConnectors();
    return Promise.all(
      connectors.map(async (connector) => ({
        ...connector,
        documents: (await catalogue.documentFingerprints(connector.name)).size,
      })),
    );
  };

  return {
    catalogue,
    searcher,
    vectors,
    embedder,
    tools: createContextTools({ catalogue, searcher, health }),
    health,
    listConnectors,
    async addConnector(input) {
      if (!CONNECTOR_NAME.test(input.name)) {
        throw new IvoaiError(
          "USAGE",
          `invalid connector name '${input.name}': use lowercase letters, digits, - and _`,
        );
      }
      if (!path.isAbsolute(input.path)) throw new IvoaiError("USAGE", "--path must be absolute");
      if (await catalogue.getConnector(input.name)) {
        throw new IvoaiError("CONFLICT", `a connector named ${input.name} already exists`);
      }
      try {
        if ((await fs.lstat(input.path)).isSymbolicLink()) {
          throw new IvoaiError("CONFIG_INVALID", `connector root ${input.path} is a symbolic link`);
        }
        await closeAll([await openRoot(input.path)]);
      } catch (error) {
        if (error instanceof IvoaiError) throw error;
        const code = errnoCode(error);
        const why =
          code === "ELOOP"
            ? "is a symbolic link"
            : code === "ENOTDIR"
              ? "is not a directory"
              : code === "ENOENT"
                ? "does not exist: check --path"
                : code === "EACCES" || code === "EPERM"
                  ? "is not readable by this user: fix its permissions or run as the server's user"
                  : `cannot be opened (${code ?? "unknown error"})`;
        throw new IvoaiError("CONFIG_INVALID", `connector root ${input.path} ${why}`);
      }
      if (input.type === "git") await gitListFiles(input.path, { maxFiles: 1 << 30 });
      const record: ConnectorRecord = {
        name: input.name,
        type: input.type,
        path: input.path,
        created_at: now().toISOString(),
        last_ingest_at: null,
        last_ingest: null,
        allow_hardlinks: input.allowHardlinks === true,
      };
      await catalogue.addConnector(record);
      return record;
    },
    async removeConnector(name) {
      if (!(await catalogue.getConnector(name)))
        throw new IvoaiError("NOT_FOUND", `no connector named ${name}`);
      // Catalogue and index entries go first; the registry entry last, so a crash can be finished by a re-run.
      const ids = [...(await catalogue.documentFingerprints(name)).keys()];
      const removed = await catalogue.removeDocuments(ids);
      await vectors?.sync();
      await catalogue.deleteConnector(name);
      return { removed_documents: removed };
    },
    async ingest(names, onProgress) {
      const all = await catalogue.listConnectors();
      const selected =
        names.length === 0 ? all : names.map((name) => all.find((entry) => entry.name === name));
      const missing = names.filter((_, index) => !selected[index]);
      if (missing.length > 0) throw new IvoaiError("NOT_FOUND", `no connector named ${missing.join(", ")}`);
      const used = { documents: 0, bytes: 0, chunks: 0 };
      const summaries: IngestSummary[] = [];
      const preparer = createWorkerPreparer(options.workerEntry, {
        onFallback: (reason) => logger.warn(reason),
      });
      try {
        for (const record of selected as ConnectorRecord[]) {
          const connector = createConnector(record.type, record.name, record.path, {
            allowHardlinks: record.allow_hardlinks,
          });
          const ingestOptions = { catalogue, quotas, now, preparer, ...(onProgress ? { onProgress } : {}) };
          summaries.push(await ingestConnector(connector, ingestOptions, used));
        }
      } finally {
        await preparer.close();
      }
      if (vectors) await vectors.sync();
      return summaries;
    },
    async saveIndex() {
      const started = performance.now();
      await searcher.refresh();
      await searcher.persist();
      return { chunks: searcher.indexedChunks, duration_ms: Math.round(performance.now() - started) };
    },
    close: () => catalogue.close(),
  };
}

/** Makes sure the context data directory exists (for commands run before `server init` finished). */
export async function ensureContextDir(paths: ServerPaths): Promise<void> {
  try {
    await fs.access(paths.contextDir);
  } catch {
    throw new IvoaiError("CONFIG_MISSING", `no server under ${paths.root}: run 'ivoai server init' first`);
  }
}
