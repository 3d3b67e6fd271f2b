// The context catalogue on PostgreSQL, shared by every gateway replica (schema ivoai_context): the one catalogue
// implementation (catalogue-store.ts) with change notifications, and embeddings kept in the database.
import type { ChangeSignal } from "../store/postgres.js";
import type { SqlDatabase, SqlExecutor } from "../store/sql.js";
import type { Catalogue } from "./catalogue-model.js";
import { openCatalogueStore } from "./catalogue-store.js";
import { postgresCorpusModelStore } from "./corpus-store.js";
import { decodeVector, encodeVector, type StoredVector, type VectorStore } from "./vector-matrix.js";

export { CATALOGUE_CHANNEL } from "./catalogue-sql.js";

/** Embeddings in PostgreSQL (table chunk_vectors), loaded by every replica (see VectorStore). */
export function postgresVectorStore(db: SqlExecutor): VectorStore {
  return {
    async load(name, dims, ids) {
      const rows = await db.all<{ chunk_id: string; vector: Buffer }>(
        ids
          ? "SELECT chunk_id, vector FROM chunk_vectors WHERE index_name = $1 AND dims = $2 AND chunk_id = ANY($3::text[])"
          : "SELECT chunk_id, vector FROM chunk_vectors WHERE index_name = $1 AND dims = $2",
        ids ? [name, dims, ids] : [name, dims],
      );
      const map = new Map<string, StoredVector>();
      for (const row of rows) {
        // float32 (dims × 4 bytes, earlier releases) or int8 with its scale (4 + dims): see vector-matrix.ts.
        const vector = decodeVector(row.vector, dims);
        if (vector) map.set(row.chunk_id, vector);
      }
      return map;
    },
    async update(name, dims, { added, dropped }) {
      const ids = [...added.keys()];
      for (let from = 0; from < ids.length; from += 1000) {
        const slice = ids.slice(from, from + 1000);
        const blobs = slice.map((id) => encodeVector(added.get(id) as StoredVector));
        await db.run(
          `INSERT INTO chunk_vectors (index_name, chunk_id, dims, vector)
           SELECT $1, id, $2, vector FROM unnest($3::text[], $4::bytea[]) AS v(id, vector)
           ON CONFLICT (index_name, chunk_id) DO UPDATE SET dims = excluded.dims, vector = excluded.vector`,
          [name, dims, slice, blobs],
        );
      }
      if (dropped.length > 0)
        await db.run("DELETE FROM chunk_vectors WHERE index_name = $1 AND chunk_id = ANY($2::text[])", [
          name,
          dropped,
        ]);
    },
  };
}

/**
 * Opens (and migrates) the catalogue in `db`, a PostgreSQL connection whose search_path is its schema. With
 * `changes` (a listener on CATALOGUE_CHANNEL), the searcher asks for the generation only after a write.
 */
export async function openPostgresCatalogue(db: SqlDatabase, changes?: ChangeSignal): Promise<Catalogue> {
  if (db.dialect !== "postgres") throw new Error("openPostgresCatalogue needs a PostgreSQL connection");
  const catalogue = await openCatalogueStore(db, {
    ...(changes ? { changes } : {}),
    vectorStore: postgresVectorStore(db),
  });
  return { ...catalogue, corpusModels: postgresCorpusModelStore(db) };
}
