// Memory's stored embeddings (table page_vectors in the memory database, either backend): the VectorStore seam of
// context's vectors with page keys as ids, so a page is embedded once whichever replica saw it first, and the
// vectors go with the database into backups.
import { decodeVector, encodeVector, type StoredVector, type VectorStore } from "../context/vector-matrix.js";
import type { SqlExecutor } from "../store/sql.js";

const BATCH = 500;

const placeholders = (count: number, from: number) =>
  Array.from({ length: count }, (_, i) => `$${from + i}`).join(", ");

export function pageVectorStore(db: SqlExecutor): VectorStore {
  return {
    async load(name, dims, ids) {
      const map = new Map<string, StoredVector>();
      const add = (rows: { page_key: number | string; vector: Uint8Array }[]) => {
        for (const row of rows) {
          const vector = decodeVector(row.vector, dims);
          if (vector) map.set(String(row.page_key), vector);
        }
      };
      if (!ids) {
        add(await db.all("SELECT page_key, vector FROM page_vectors WHERE index_name = $1", [name]));
        return map;
      }
      for (let from = 0; from < ids.length; from += BATCH) {
        const slice = ids.slice(from, from + BATCH).map(Number);
        add(
          await db.all(
            `SELECT page_key, vector FROM page_vectors WHERE index_name = $1 AND page_key IN (${placeholders(slice.length, 2)})`,
            [name, ...slice],
          ),
        );
      }
      return map;
    },
    async update(name, _dims, { added, dropped }) {
      const keys = [...added.keys()];
      for (let from = 0; from < keys.length; from += BATCH) {
        const slice = keys.slice(from, from + BATCH);
        const values = slice.map((_, i) => `($1, $${2 + 2 * i}, $${3 + 2 * i})`).join(", ");
        await db.run(
          `INSERT INTO page_vectors (index_name, page_key, vector) VALUES ${values}
           ON CONFLICT (index_name, page_key) DO UPDATE SET vector = excluded.vector`,
          [name, ...slice.flatMap((key) => [Number(key), encodeVector(added.get(key) as StoredVector)])],
        );
      }
      for (let from = 0; from < dropped.length; from += BATCH) {
        const slice = dropped.slice(from, from + BATCH).map(Number);
        await db.run(
          `DELETE FROM page_vectors WHERE index_name = $1 AND page_key IN (${placeholders(slice.length, 2)})`,
          [name, ...slice],
        );
      }
    },
  };
}
