// Where the corpus embedder's model is kept with the catalogue, so restarts and replicas use the same one: a file
// beside a SQLite catalogue (written atomically), a table in a PostgreSQL one.
import { promises as fs } from "node:fs";
import { writeFileAtomic } from "../../shared/atomic-file.js";
import { errnoCode } from "../../shared/errors.js";
import type { SqlExecutor } from "../store/sql.js";
import { type CorpusModel, decodeCorpusModel, encodeCorpusModel } from "./corpus-model.js";

export interface CorpusModelStore {
  /** The stored model's id without reading it whole; undefined when there is none. */
  head(): Promise<string | undefined>;
  load(): Promise<CorpusModel | undefined>;
  save(model: CorpusModel): Promise<void>;
}

const ID_BYTES = 16;

/** The file store: the model's id (16 hex digits) then its bytes, replaced atomically. */
export function fileCorpusModelStore(file: string): CorpusModelStore {
  const read = async (length?: number): Promise<Buffer | undefined> => {
    try {
      if (length === undefined) return await fs.readFile(file);
      const handle = await fs.open(file, "r");
      try {
        const buffer = Buffer.alloc(length);
        const { bytesRead } = await handle.read(buffer, 0, length, 0);
        return buffer.subarray(0, bytesRead);
      } finally {
        await handle.close();
      }
    } catch (error) {
      if (errnoCode(error) === "ENOENT") return undefined;
      throw error;
    }
  };
  return {
    async head() {
      const id = await read(ID_BYTES);
      return id && id.length === ID_BYTES ? id.toString("ascii") : undefined;
    },
    async load() {
      const data = await read();
      return data ? decodeCorpusModel(data.subarray(ID_BYTES)) : undefined;
    },
    async save(model) {
      await writeFileAtomic(file, Buffer.concat([Buffer.from(model.id, "ascii"), encodeCorpusModel(model)]), {
        mode: 0o640,
      });
    },
  };
}

const CREATE = `CREATE TABLE IF NOT EXISTS corpus_models (
  slot TEXT PRIMARY KEY, model_id TEXT NOT NULL, model BYTEA NOT NULL, saved_at TIMESTAMPTZ NOT NULL DEFAULT now())`;

/** The PostgreSQL store: one row (slot 'current') in the catalogue's schema, read by every replica. */
export function postgresCorpusModelStore(db: SqlExecutor): CorpusModelStore {
  let created: Promise<void> | undefined;
  const ensure = () => {
    created ??= (async () => {
      try {
        await db.run(CREATE);
      } catch {
        // Two replicas creating it at once: one wins, the other's CREATE fails on the catalog; it exists now.
        await db.run(CREATE);
      }
    })().catch((error) => {
      created = undefined;
      throw error;
    });
    return created;
  };
  return {
    async head() {
      await ensure();
      return (await db.get<{ model_id: string }>("SELECT model_id FROM corpus_models WHERE slot = 'current'"))
        ?.model_id;
    },
    async load() {
      await ensure();
      const row = await db.get<{ model: Buffer }>("SELECT model FROM corpus_models WHERE slot = 'current'");
      return row ? decodeCorpusModel(row.model) : undefined;
    },
    async save(model) {
      await ensure();
      await db.run(
        `INSERT INTO corpus_models (slot, model_id, model) VALUES ('current', $1, $2)
         ON CONFLICT (slot) DO UPDATE SET model_id = excluded.model_id, model = excluded.model, saved_at = now()`,
        [model.id, encodeCorpusModel(model)],
      );
    },
  };
}
