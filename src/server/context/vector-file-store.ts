// The file vector store of a SQLite server: one rebuildable binary file per index name in the cache folder.
// IVV2 (this release): header "IVV2", u32 dims, u32 count, u8 format (0 float32, 1 int8), 3 bytes zero; then per
// vector a 32-byte id and its encodeVector bytes. IVV1 (earlier releases, float32 only) is still read.
import { promises as fs } from "node:fs";
import path from "node:path";
import { writeFileAtomic } from "../../shared/atomic-file.js";
import { errnoCode } from "../../shared/errors.js";
import type { Logger } from "../../shared/logger.js";
import {
  decodeVector,
  encodeVector,
  isInt8Vector,
  type StoredVector,
  type VectorStore,
} from "./vector-matrix.js";

const ID_BYTES = 32;

function parseCache(data: Buffer, dims: number): Map<string, StoredVector> | undefined {
  const magic = data.length >= 12 ? data.toString("ascii", 0, 4) : "";
  if ((magic !== "IVV1" && magic !== "IVV2") || data.readUInt32LE(4) !== dims) return undefined;
  const count = data.readUInt32LE(8);
  const header = magic === "IVV1" ? 12 : 16;
  if (data.length < header) return undefined;
  const int8 = magic === "IVV2" && data[12] === 1;
  const stride = ID_BYTES + (int8 ? 4 + dims : dims * 4);
  if (data.length !== header + count * stride) return undefined;
  const map = new Map<string, StoredVector>();
  for (let i = 0; i < count; i++) {
    const at = header + i * stride;
    const vector = decodeVector(data.subarray(at + ID_BYTES, at + stride), dims);
    if (!vector) return undefined;
    map.set(data.toString("ascii", at, at + ID_BYTES), vector);
  }
  return map;
}

function serialize(dims: number, map: ReadonlyMap<string, StoredVector>): Buffer {
  const first = map.values().next().value;
  const int8 = first !== undefined && isInt8Vector(first);
  const stride = ID_BYTES + (int8 ? 4 + dims : dims * 4);
  const data = Buffer.alloc(16 + map.size * stride);
  data.write("IVV2", 0, "ascii");
  data.writeUInt32LE(dims, 4);
  data.writeUInt32LE(map.size, 8);
  data[12] = int8 ? 1 : 0;
  let at = 16;
  for (const [id, vector] of map) {
    data.write(id.padEnd(ID_BYTES, " ").slice(0, ID_BYTES), at, "ascii");
    // One format per file: the retriever keeps every vector of an index in the configured one.
    if (isInt8Vector(vector) !== int8) throw new Error("mixed vector formats in one index");
    encodeVector(vector).copy(data, at + ID_BYTES);
    at += stride;
  }
  return data;
}

/** The file store: `${cacheDir}/${index}.bin`, replaced atomically on every change. */
export function fileVectorStore(cacheDir: string, logger: Logger): VectorStore {
  const fileOf = (name: string) => path.join(cacheDir, `${name}.bin`);
  return {
    async load(name, dims) {
      let data: Buffer;
      try {
        data = await fs.readFile(fileOf(name));
      } catch (error) {
        if (errnoCode(error) === "ENOENT") return new Map();
        throw error;
      }
      // A cache that does not parse is rebuilt, never trusted.
      const map = parseCache(data, dims);
      if (!map) logger.warn("vector cache unreadable; rebuilding", { index: name });
      return map ?? new Map();
    },
    async update(name, dims, change) {
      await fs.mkdir(cacheDir, { recursive: true, mode: 0o750 });
      await writeFileAtomic(fileOf(name), serialize(dims, change.all), { mode: 0o640 });
    },
  };
}
