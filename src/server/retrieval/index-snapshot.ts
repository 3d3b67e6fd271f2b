// The lexical index persisted as one binary file, so a server starts without re-reading every chunk's terms.
//
// Layout: a 40-byte prefix (magic, format version, header length, CRC-32 of everything after the prefix), a JSON
// header (what the snapshot is of, the term dictionary, the passages' metadata table), then the typed arrays,
// each 8-byte aligned so that reading maps them as views of one buffer without copying. A snapshot is a cache:
// any doubt (absent, other version, bad checksum, inconsistent arrays) means "rebuild from the store".
import { constants, promises as fs } from "node:fs";
import path from "node:path";
import { crc32 } from "node:zlib";
import { z } from "zod";
import { writeFileAtomic } from "../../shared/atomic-file.js";
import { errnoCode } from "../../shared/errors.js";
import type { LexicalState } from "./lexical-index.js";
import { TF_BITS, TF_ESCAPE, termRunProblem } from "./packed-arrays.js";

/**
 * 2: passages' groups (memory's scopes) are kept, so a restored index confines searches as the one written.
 * 3: postings and term sequences are packed (packed-arrays.ts).
 */
export const SNAPSHOT_FORMAT_VERSION = 3;
const MAGIC = "IVOAIDX\n";
const PREFIX = 40;
const HASH_SLICE = 16 << 20;
const READ_SLICE = 32 << 20;
const GAP_SLICE = 1 << 20;
const ABANDONED_AFTER_MS = 15 * 60_000;

export interface IndexSnapshot {
  /** The store's generation and highest key the snapshot holds. */
  generation: number;
  maxKey: number;
  /** Which store it was taken of (a catalogue replaced by another starts afresh). */
  instance: string;
  state: LexicalState;
  /** Per passage key (ascending), an index into `metas`. */
  metaKeys: Float64Array;
  metaIds: Int32Array;
  metas: unknown[];
}

export type SnapshotRead =
  | { ok: true; snapshot: IndexSnapshot }
  | { ok: false; reason: "absent" | "version" | "corrupt"; detail: string };

const SECTIONS = [
  ["keys", Float64Array],
  ["alive", Uint8Array],
  ["lengths", Int32Array],
  ["sequenceStart", Uint32Array],
  ["sequence", Uint8Array],
  ["termStart", Int32Array],
  ["postings", Int32Array],
  ["df", Int32Array],
  ["groups", Int32Array],
  ["metaKeys", Float64Array],
  ["metaIds", Int32Array],
] as const;
type SectionName = (typeof SECTIONS)[number][0];

const Header = z.object({
  generation: z.number().int().min(0),
  maxKey: z.number().min(0),
  instance: z.string().min(1),
  terms: z.array(z.string()),
  metas: z.array(z.unknown()),
  sections: z.record(z.string(), z.tuple([z.number().int().min(0), z.number().int().min(0)])),
});

/** `value` rounded up to a multiple of 8: arithmetic, not `& ~7`, which wraps past 2 GiB (a 10M-chunk snapshot). */
export const align8 = (value: number) => Math.ceil(value / 8) * 8;

function arraysOf(snapshot: IndexSnapshot): Record<SectionName, ArrayBufferView> {
  const { state } = snapshot;
  return {
    keys: state.keys,
    alive: state.alive,
    lengths: state.lengths,
    sequenceStart: state.sequenceStart,
    sequence: state.sequence,
    termStart: state.termStart,
    postings: state.postings,
    df: state.df,
    groups: state.groups,
    metaKeys: snapshot.metaKeys,
    metaIds: snapshot.metaIds,
  };
}

/** Writes the snapshot to a temporary sibling, flushes it and renames it over `file`: readers see old or new. */
export async function writeIndexSnapshot(file: string, snapshot: IndexSnapshot): Promise<void> {
  const arrays = arraysOf(snapshot);
  const sections: Record<string, [number, number]> = {};
  const headerFields = {
    generation: snapshot.generation,
    maxKey: snapshot.maxKey,
    instance: snapshot.instance,
    terms: snapshot.state.terms,
    metas: snapshot.metas,
  };
  // Section offsets depend on the header's length, which depends on the offsets' digits: fix the width first.
  const probe = JSON.stringify({ ...headerFields, sections: {} });
  let offset = align8(PREFIX + Buffer.byteLength(probe) + SECTIONS.length * 64 + 64);
  const headerRoom = offset - PREFIX;
  for (const [name] of SECTIONS) {
    const view = arrays[name];
    sections[name] = [
      offset,
      view.byteLength / (view as unknown as { BYTES_PER_ELEMENT: number }).BYTES_PER_ELEMENT,
    ];
    offset = align8(offset + view.byteLength);
  }
  const header = Buffer.alloc(headerRoom, 0x20);
  header.write(JSON.stringify({ ...headerFields, sections }));
  const pieces: Uint8Array[] = [header];
  let at = PREFIX + headerRoom;
  for (const [name] of SECTIONS) {
    const [start] = sections[name] as [number, number];
    if (start > at) pieces.push(new Uint8Array(start - at));
    const view = arrays[name];
    pieces.push(new Uint8Array(view.buffer, view.byteOffset, view.byteLength));
    at = start + view.byteLength;
  }
  let checksum = 0;
  // Hashed in slices with a turn of the event loop between them: a server writing its snapshot keeps answering.
  for (const piece of pieces) {
    for (let from = 0; from < piece.byteLength; from += HASH_SLICE) {
      checksum = crc32(piece.subarray(from, from + HASH_SLICE), checksum);
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  const prefix = Buffer.alloc(PREFIX);
  prefix.write(MAGIC, 0, "latin1");
  prefix.writeUInt32LE(SNAPSHOT_FORMAT_VERSION, 8);
  prefix.writeUInt32LE(headerRoom, 12);
  prefix.writeUInt32LE(checksum, 16);

  await removeAbandonedTemporaries(file);
  await writeFileAtomic(file, [prefix, ...pieces]);
}

/** Temporaries of writes that a crash or kill interrupted (old enough that no writer is still at them). */
async function removeAbandonedTemporaries(file: string): Promise<void> {
  const dir = path.dirname(file);
  const prefix = `.${path.basename(file)}.`;
  for (const name of await fs.readdir(dir)) {
    if (!name.startsWith(prefix) || !name.endsWith(".tmp")) continue;
    const stat = await fs.lstat(path.join(dir, name)).catch(() => undefined);
    if (stat?.isFile() && Date.now() - stat.mtimeMs > ABANDONED_AFTER_MS)
      await fs.rm(path.join(dir, name), { force: true });
  }
}

/**
 * Reads and checks a snapshot; anything but a whole, current, self-consistent file is a tagged refusal. Each
 * section is read into an array of its own, so that one the index replaces (postings, at a compaction) is freed
 * on its own and the restored index can keep the rest as they are.
 */
export async function readIndexSnapshot(file: string): Promise<SnapshotRead> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, constants.O_RDONLY);
  } catch (error) {
    if (errnoCode(error) === "ENOENT") return { ok: false, reason: "absent", detail: "no snapshot" };
    throw error;
  }
  try {
    return await readOpenSnapshot(handle);
  } catch (error) {
    if (error instanceof SnapshotShort)
      return { ok: false, reason: "corrupt", detail: "shorter than its size" };
    throw error;
  } finally {
    await handle.close();
  }
}

async function readOpenSnapshot(handle: fs.FileHandle): Promise<SnapshotRead> {
  const { size } = await handle.stat();
  if (size < PREFIX) return { ok: false, reason: "corrupt", detail: `only ${size} bytes` };
  // The prefix first: a file of another format or version is refused before anything else is allocated.
  const prefix = Buffer.alloc(PREFIX);
  await readFully(handle, prefix, 0);
  const refusal = prefixRefusal(prefix, size);
  if (refusal) return refusal;
  const headerRoom = prefix.readUInt32LE(12);
  const headerBytes = Buffer.alloc(headerRoom);
  await readFully(handle, headerBytes, PREFIX);
  let header: z.infer<typeof Header>;
  try {
    header = Header.parse(JSON.parse(headerBytes.toString("utf8")));
  } catch (error) {
    return { ok: false, reason: "corrupt", detail: `bad header: ${(error as Error).message.slice(0, 200)}` };
  }
  const views = {} as Record<SectionName, ArrayBufferView>;
  // Sections lie after the header, each within the file and none over another (the index writes into some).
  const regions: { start: number; bytes: Uint8Array }[] = [];
  for (const [name, Type] of SECTIONS) {
    const entry = header.sections[name];
    if (!entry) return { ok: false, reason: "corrupt", detail: `no ${name} section` };
    const [start, length] = entry;
    const end = start + length * Type.BYTES_PER_ELEMENT;
    if (start % 8 !== 0 || start < PREFIX + headerRoom || end > size)
      return { ok: false, reason: "corrupt", detail: `${name} out of bounds` };
    if (regions.some((other) => start < other.start + other.bytes.length && other.start < end))
      return { ok: false, reason: "corrupt", detail: `${name} overlaps another section` };
    const view = new Type(length);
    views[name] = view;
    regions.push({ start, bytes: new Uint8Array(view.buffer) });
  }
  const checksum = await readRegions(handle, size, PREFIX + headerRoom, regions, crc32(headerBytes));
  if (checksum !== prefix.readUInt32LE(16))
    return { ok: false, reason: "corrupt", detail: "checksum mismatch" };
  const snapshot: IndexSnapshot = {
    generation: header.generation,
    maxKey: header.maxKey,
    instance: header.instance,
    state: {
      terms: header.terms,
      keys: views.keys as Float64Array,
      alive: views.alive as Uint8Array,
      lengths: views.lengths as Int32Array,
      sequenceStart: views.sequenceStart as Uint32Array,
      sequence: views.sequence as Uint8Array,
      termStart: views.termStart as Int32Array,
      postings: views.postings as Int32Array,
      df: views.df as Int32Array,
      groups: views.groups as Int32Array,
    },
    metaKeys: views.metaKeys as Float64Array,
    metaIds: views.metaIds as Int32Array,
    metas: header.metas,
  };
  const problem = inconsistency(snapshot);
  return problem ? { ok: false, reason: "corrupt", detail: problem } : { ok: true, snapshot };
}

/**
 * Reads the file from `from` to `size` in order: each region into its bytes, what lies between them (padding) into
 * scratch; returns the CRC-32 of it all continued from `checksum`. Each slice is hashed while the next is read.
 */
async function readRegions(
  handle: fs.FileHandle,
  size: number,
  from: number,
  regions: { start: number; bytes: Uint8Array }[],
  checksum: number,
): Promise<number> {
  const targets = [...regions].sort((a, b) => a.start - b.start);
  const slices: { at: number; into: Uint8Array }[] = [];
  let at = from;
  const gapTo = (end: number) => {
    for (; at < end; at += Math.min(end - at, GAP_SLICE))
      slices.push({ at, into: new Uint8Array(Math.min(end - at, GAP_SLICE)) });
  };
  for (const { start, bytes } of targets) {
    gapTo(start);
    for (let offset = 0; offset < bytes.length; offset += READ_SLICE)
      slices.push({ at: start + offset, into: bytes.subarray(offset, offset + READ_SLICE) });
    at = start + bytes.length;
  }
  gapTo(size);
  let crc = checksum;
  let pending: Uint8Array | undefined;
  for (const { at: position, into } of slices) {
    const reading = readFully(handle, into, position);
    if (pending) crc = crc32(pending, crc);
    await reading;
    pending = into;
  }
  return pending ? crc32(pending, crc) : crc;
}

/** The file ended before its stated size (truncated while read). */
class SnapshotShort extends Error {}

/** Fills `into` from the file at `position`; a file shorter than that is corrupt. */
async function readFully(handle: fs.FileHandle, into: Uint8Array, position: number): Promise<void> {
  let read = 0;
  while (read < into.length) {
    const { bytesRead } = await handle.read(into, read, into.length - read, position + read);
    if (bytesRead === 0) throw new SnapshotShort();
    read += bytesRead;
  }
}

/** Why the 40-byte prefix of a `size`-byte file is not one of a current snapshot, if it is not. */
function prefixRefusal(prefix: Buffer, size: number): SnapshotRead | undefined {
  if (prefix.toString("latin1", 0, 8) !== MAGIC)
    return { ok: false, reason: "corrupt", detail: "not a snapshot" };
  const version = prefix.readUInt32LE(8);
  if (version !== SNAPSHOT_FORMAT_VERSION)
    return { ok: false, reason: "version", detail: `format ${version}, expected ${SNAPSHOT_FORMAT_VERSION}` };
  if (PREFIX + prefix.readUInt32LE(12) > size)
    return { ok: false, reason: "corrupt", detail: "truncated header" };
  return undefined;
}

/**
 * Cheap structural checks of the offsets (the checksum vouches for the contents): even a well-hashed file from a
 * faulty writer cannot make a range run past its array.
 */
function inconsistency(snapshot: IndexSnapshot): string | undefined {
  const { state, metaKeys, metaIds, metas } = snapshot;
  const slots = state.keys.length;
  const terms = state.terms.length;
  if (state.alive.length !== slots || state.lengths.length !== slots || state.sequenceStart.length !== slots)
    return "per-passage arrays differ in length";
  // Empty when every passage is in group 0 (context's index).
  if (state.groups.length !== 0 && state.groups.length !== slots) return "groups differ in length";
  for (let slot = 0; slot < state.groups.length; slot++)
    if ((state.groups[slot] as number) < 0) return "group out of range";
  if (state.termStart.length !== terms + 1 || state.df.length !== terms)
    return "per-term arrays differ in length";
  if (state.termStart[0] !== 0 || state.termStart[terms] !== state.postings.length) return "postings ranges";
  for (let id = 0; id < terms; id++)
    if ((state.termStart[id] as number) > (state.termStart[id + 1] as number)) return "postings ranges";
  for (let i = 0; i < state.postings.length; i++) {
    const posting = state.postings[i] as number;
    if (posting >>> TF_BITS >= slots || (posting & TF_ESCAPE) === 0) return "posting out of range";
  }
  const run = { at: 0 };
  for (let slot = 0; slot < slots; slot++) {
    const start = state.sequenceStart[slot] as number;
    const length = state.lengths[slot] as number;
    if (length < 0) return "sequence range";
    const problem = termRunProblem(state.sequence, start, length, terms, run);
    if (problem) return problem;
    if ((state.alive[slot] as number) > 1) return "alive flags";
  }
  if (metaIds.length !== metaKeys.length) return "metadata arrays differ in length";
  // Metadata is found by binary search over its keys.
  for (let i = 1; i < metaKeys.length; i++)
    if (!((metaKeys[i] as number) > (metaKeys[i - 1] as number))) return "metadata keys out of order";
  for (let i = 0; i < metaIds.length; i++)
    if ((metaIds[i] as number) >= metas.length || (metaIds[i] as number) < 0) return "metadata out of range";
  return undefined;
}
