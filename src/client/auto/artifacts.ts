// The WorkingContext ArtifactStore: each worker's exact evidence goes to a private, transient, digest-checked
// store first; only ResultRefs travel (session state and prompts hold refs, never bodies).
//
// Layout: one 0700 directory; per artifact `<ref>.body` (the UTF-8 bytes) and `<ref>.meta.json` (task, owner
// session, sha256, sizes, created/expires), both 0600 and written atomically, the sidecar last (it commits).
// Decisions:
// - A body over maxArtifactBytes is TRUNCATED, not rejected: the first bytes (cut on a character boundary) are
//   kept and a marker line `[ivoai: artifact truncated: kept K of N bytes]` ends the stored body, so whoever
//   reads it sees the cut; the ref is flagged (`truncated: true`, `original_bytes: N`). The stored body,
//   marker included, is at most maxArtifactBytes and the digest covers exactly what is stored.
// - Ranges are in UTF-8 bytes of the stored body. A range never splits a character: a start inside a
//   character moves back to its first byte (the answer's `offset` says where it really starts), an end inside
//   one moves back to the character's start; when that would leave nothing, the one whole character is returned
//   (at most 3 bytes over `length`), so paging by `next_offset` always progresses and reconstructs the body.
// - A body is a JS string stored as UTF-8: lone surrogates become U+FFFD (as Buffer.from does); sha256 and
//   sizes are of the stored bytes.
// - The digest recorded at `put` is kept in memory by the store that wrote it as well as in the sidecar, so a
//   body rewritten together with its sidecar is still caught by that store; every read re-hashes the body.
import { createHash, randomBytes } from "node:crypto";
import { constants, promises as fs } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { writeFileAtomic } from "../../shared/atomic-file.js";
import { errnoCode, IvoaiError } from "../../shared/errors.js";
import type { ResultRef } from "./contracts.js";
import { ensurePrivateDir } from "./private-dir.js";

export const DEFAULT_ARTIFACT_TTL_MS = 6 * 3_600_000;
export const DEFAULT_MAX_ARTIFACT_BYTES = 2 * 1024 * 1024;
export const DEFAULT_MAX_TOTAL_BYTES = 64 * 1024 * 1024;
/** The most bytes one `read` returns (plus at most 3 to finish a character). */
export const MAX_ARTIFACT_READ_BYTES = 64 * 1024;
export const ARTIFACT_REF_PATTERN = /^art_[0-9a-f]{32}$/;
/** Task ids the store and the orchestrator accept: plan ids and the supervisor's own. */
export const TASK_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;

export interface ArtifactStoreOptions {
  /** The store's private directory (created 0700; a symbolic link or a directory others can enter is refused). */
  dir: string;
  /** The session that owns what this store puts. */
  sessionId: string;
  /** How long an artifact stays readable (default 6 h). */
  ttlMs?: number;
  /** Largest stored body, truncation marker included (default 2 MiB, at least 1 KiB). */
  maxArtifactBytes?: number;
  /** Bound on all bodies in the directory (default 64 MiB). */
  maxTotalBytes?: number;
  /** Milliseconds since the epoch (tests inject a clock). */
  now?: () => number;
}

/** A ResultRef plus whether the body was cut to fit. */
export interface StoredRef extends ResultRef {
  truncated: boolean;
  /** Size of the body as given to `put`, before any truncation. */
  original_bytes: number;
}

export interface ArtifactReadOptions {
  /** The reading session; must be the artifact's owner. */
  sessionId: string;
  /** First UTF-8 byte (default 0). */
  offset?: number;
  /** Bytes to return, 1 to MAX_ARTIFACT_READ_BYTES (the default). */
  length?: number;
}

/** An exact range of an artifact. */
export interface ArtifactRange {
  text: string;
  /** Where the returned text starts (a character boundary). */
  offset: number;
  /** Where the next range starts; null when this one reaches the end. */
  next_offset: number | null;
  /** Size of the whole stored body. */
  bytes: number;
  /** SHA-256 of the whole stored body. */
  sha256: string;
}

export interface ArtifactStore {
  /** Stores a worker's evidence for `taskId`; refuses (CONFLICT) when the total bound is reached. */
  put(taskId: string, body: string): Promise<StoredRef>;
  /** Reads a bounded, digest-verified range after checking ref syntax, ownership and TTL. */
  read(ref: string, options: ArtifactReadOptions): Promise<ArtifactRange>;
  /** This session's live (unexpired) artifacts, oldest first. */
  list(): Promise<StoredRef[]>;
  /** Removes every expired artifact (and leftovers older than the TTL); returns how many artifacts went. */
  sweep(): Promise<number>;
  /** Removes this session's artifacts and, when nothing else is left, the directory; the store is then closed. */
  destroy(): Promise<void>;
}

const sidecarSchema = z.object({
  version: z.literal(1),
  ref: z.string().regex(ARTIFACT_REF_PATTERN),
  task_id: z.string(),
  owner: z.string(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  bytes: z.number().int().min(0),
  original_bytes: z.number().int().min(0),
  truncated: z.boolean(),
  created_at: z.string(),
  expires_at: z.string(),
});
type Sidecar = z.infer<typeof sidecarSchema>;

const BODY = ".body";
const META = ".meta.json";
const MAX_SIDECAR_BYTES = 4096;

/** One open store: its settings, the digests it recorded, and the queue its mutations take turns in. */
interface ArtifactsState {
  readonly dir: string;
  readonly sessionId: string;
  readonly ttlMs: number;
  readonly maxArtifactBytes: number;
  readonly maxTotalBytes: number;
  readonly now: () => number;
  /** Digests this store recorded at put time. */
  readonly digests: Map<string, string>;
  closed: boolean;
  /** Mutations run one at a time, so the total bound holds for concurrent puts. */
  tail: Promise<unknown>;
}

/** A parseable sidecar and the size of its body on disk. */
interface ScannedArtifact {
  meta: Sidecar;
  size: number;
}

export async function openArtifactStore(options: ArtifactStoreOptions): Promise<ArtifactStore> {
  const state = artifactsState(options);
  await ensurePrivateDir(state.dir);
  return {
    put: (taskId, body) => serial(state, () => putArtifact(state, taskId, body)),
    read: (ref, readOptions) => readArtifact(state, ref, readOptions),
    list: () => listArtifacts(state),
    sweep: () => serial(state, () => sweepArtifacts(state)),
    destroy: () => serial(state, () => destroyArtifacts(state)),
  };
}

function artifactsState(options: ArtifactStoreOptions): ArtifactsState {
  const ttlMs = options.ttlMs ?? DEFAULT_ARTIFACT_TTL_MS;
  const maxArtifactBytes = options.maxArtifactBytes ?? DEFAULT_MAX_ARTIFACT_BYTES;
  const maxTotalBytes = options.maxTotalBytes ?? DEFAULT_MAX_TOTAL_BYTES;
  if (!options.sessionId) throw new IvoaiError("USAGE", "an artifact store needs an owner session id");
  if (!(ttlMs > 0)) throw new IvoaiError("USAGE", "artifact ttlMs must be positive");
  if (!Number.isInteger(maxArtifactBytes) || maxArtifactBytes < 1024) {
    throw new IvoaiError("USAGE", "maxArtifactBytes must be an integer of at least 1024");
  }
  if (!Number.isInteger(maxTotalBytes) || maxTotalBytes < maxArtifactBytes) {
    throw new IvoaiError("USAGE", "maxTotalBytes must be an integer of at least maxArtifactBytes");
  }
  return {
    dir: path.resolve(options.dir),
    sessionId: options.sessionId,
    ttlMs,
    maxArtifactBytes,
    maxTotalBytes,
    now: options.now ?? Date.now,
    digests: new Map(),
    closed: false,
    tail: Promise.resolve(),
  };
}

function serial<T>(state: ArtifactsState, run: () => Promise<T>): Promise<T> {
  const next = state.tail.then(run, run);
  state.tail = next.catch(() => undefined);
  return next;
}

function assertOpen(state: ArtifactsState): void {
  if (state.closed) throw new IvoaiError("CONFLICT", "the artifact store was destroyed");
}

function bodyPath(state: ArtifactsState, ref: string): string {
  return path.join(state.dir, `${ref}${BODY}`);
}

function metaPath(state: ArtifactsState, ref: string): string {
  return path.join(state.dir, `${ref}${META}`);
}

function isExpired(state: ArtifactsState, meta: Sidecar): boolean {
  return state.now() >= Date.parse(meta.expires_at);
}

async function remove(state: ArtifactsState, ref: string): Promise<void> {
  await fs.rm(metaPath(state, ref), { force: true });
  await fs.rm(bodyPath(state, ref), { force: true });
  state.digests.delete(ref);
}

/** Every parseable sidecar in the directory with its body's size, and the names of leftovers. */
async function scan(state: ArtifactsState): Promise<{ entries: ScannedArtifact[]; orphans: string[] }> {
  const names = await fs.readdir(state.dir);
  const entries: ScannedArtifact[] = [];
  const orphans: string[] = [];
  for (const name of names) {
    const ref = name.slice(0, 36);
    if (!ARTIFACT_REF_PATTERN.test(ref)) {
      if (name.endsWith(".tmp")) orphans.push(name);
      continue;
    }
    if (name === `${ref}${META}`) {
      const meta = await loadSidecar(metaPath(state, ref), ref).catch(() => null);
      const size = await fs
        .lstat(bodyPath(state, ref))
        .then((stat) => stat.size)
        .catch(() => 0);
      if (meta) entries.push({ meta, size });
      else orphans.push(name);
    } else if (name === `${ref}${BODY}` && !names.includes(`${ref}${META}`)) {
      orphans.push(name);
    }
  }
  return { entries, orphans };
}

function toRef(meta: Sidecar): StoredRef {
  return {
    ref: meta.ref,
    task_id: meta.task_id,
    bytes: meta.bytes,
    sha256: meta.sha256,
    expires_at: meta.expires_at,
    truncated: meta.truncated,
    original_bytes: meta.original_bytes,
  };
}

async function putArtifact(state: ArtifactsState, taskId: string, body: string): Promise<StoredRef> {
  assertOpen(state);
  if (!TASK_ID_PATTERN.test(taskId)) throw new IvoaiError("USAGE", `invalid task id '${taskId}'`);
  const original = Buffer.from(body, "utf8");
  const stored =
    original.length > state.maxArtifactBytes ? truncate(original, state.maxArtifactBytes) : original;
  await makeRoom(state, stored.length);
  const ref = `art_${randomBytes(16).toString("hex")}`;
  const created = state.now();
  const meta: Sidecar = {
    version: 1,
    ref,
    task_id: taskId,
    owner: state.sessionId,
    sha256: createHash("sha256").update(stored).digest("hex"),
    bytes: stored.length,
    original_bytes: original.length,
    truncated: stored !== original,
    created_at: new Date(created).toISOString(),
    expires_at: new Date(created + state.ttlMs).toISOString(),
  };
  // Transient evidence: no flush to disk (a crash ends the session that could read it; the digest
  // catches a file a power loss emptied).
  await writeFileAtomic(bodyPath(state, ref), stored, { mode: 0o600, durable: false });
  await writeFileAtomic(metaPath(state, ref), `${JSON.stringify(meta)}\n`, { mode: 0o600, durable: false });
  state.digests.set(ref, meta.sha256);
  return toRef(meta);
}

/** Removes expired artifacts, oldest first, until `bytes` more fit; refuses (CONFLICT) when they still do not. */
async function makeRoom(state: ArtifactsState, bytes: number): Promise<void> {
  const { entries } = await scan(state);
  let total = entries.reduce((sum, entry) => sum + entry.size, 0);
  if (total + bytes <= state.maxTotalBytes) return;
  const expired = entries
    .filter((entry) => isExpired(state, entry.meta))
    .sort((a, b) => a.meta.created_at.localeCompare(b.meta.created_at));
  for (const entry of expired) {
    if (total + bytes <= state.maxTotalBytes) break;
    await remove(state, entry.meta.ref);
    total -= entry.size;
  }
  if (total + bytes > state.maxTotalBytes) {
    throw new IvoaiError(
      "CONFLICT",
      `the artifact store is full (${total} of ${state.maxTotalBytes} bytes used by live artifacts; ` +
        `${bytes} more requested)`,
    );
  }
}

async function readArtifact(
  state: ArtifactsState,
  ref: string,
  readOptions: ArtifactReadOptions,
): Promise<ArtifactRange> {
  assertOpen(state);
  const { offset, length } = readWindow(ref, readOptions);
  const meta = await loadSidecar(metaPath(state, ref), ref);
  if (!readOptions.sessionId || meta.owner !== readOptions.sessionId) {
    throw new IvoaiError("FORBIDDEN", `artifact ${ref} belongs to another session`);
  }
  if (isExpired(state, meta)) {
    throw new IvoaiError("NOT_FOUND", `artifact ${ref} expired at ${meta.expires_at}`, {
      data: { reason: "expired" },
    });
  }
  const { body, sha256 } = await verifiedBody(state, ref, meta);
  if (offset > body.length) {
    throw new IvoaiError("USAGE", `offset ${offset} is beyond the artifact's ${body.length} bytes`);
  }
  const { start, end } = utf8Range(body, offset, length);
  return {
    text: body.subarray(start, end).toString("utf8"),
    offset: start,
    next_offset: end < body.length ? end : null,
    bytes: body.length,
    sha256,
  };
}

/** The ref's syntax and the requested range, checked before any file is opened. */
function readWindow(ref: string, readOptions: ArtifactReadOptions): { offset: number; length: number } {
  if (typeof ref !== "string" || !ARTIFACT_REF_PATTERN.test(ref)) {
    throw new IvoaiError("USAGE", "invalid artifact ref: expected art_ followed by 32 hex digits");
  }
  const offset = readOptions.offset ?? 0;
  const length = readOptions.length ?? MAX_ARTIFACT_READ_BYTES;
  if (!Number.isSafeInteger(offset) || offset < 0) {
    throw new IvoaiError("USAGE", "offset must be a non-negative integer");
  }
  if (!Number.isSafeInteger(length) || length < 1 || length > MAX_ARTIFACT_READ_BYTES) {
    throw new IvoaiError("USAGE", `length must be an integer from 1 to ${MAX_ARTIFACT_READ_BYTES}`);
  }
  return { offset, length };
}

/** The whole body, re-hashed against the sidecar and against the digest this store recorded at put. */
async function verifiedBody(
  state: ArtifactsState,
  ref: string,
  meta: Sidecar,
): Promise<{ body: Buffer; sha256: string }> {
  const body = await readBounded(bodyPath(state, ref), state.maxArtifactBytes, ref);
  const actual = createHash("sha256").update(body).digest("hex");
  const recorded = state.digests.get(ref);
  if (body.length !== meta.bytes || actual !== meta.sha256 || (recorded && recorded !== actual)) {
    throw new IvoaiError(
      "STATE_CORRUPT",
      `artifact ${ref} failed its integrity check (sha256 mismatch); its body is not returned`,
    );
  }
  return { body, sha256: actual };
}

async function listArtifacts(state: ArtifactsState): Promise<StoredRef[]> {
  assertOpen(state);
  const { entries } = await scan(state);
  return entries
    .filter((entry) => entry.meta.owner === state.sessionId && !isExpired(state, entry.meta))
    .sort((a, b) => a.meta.created_at.localeCompare(b.meta.created_at))
    .map((entry) => toRef(entry.meta));
}

async function sweepArtifacts(state: ArtifactsState): Promise<number> {
  assertOpen(state);
  const { entries, orphans } = await scan(state);
  let removed = 0;
  for (const entry of entries) {
    if (!isExpired(state, entry.meta)) continue;
    await remove(state, entry.meta.ref);
    removed += 1;
  }
  // Leftovers of an interrupted put (a body without its sidecar, a temp file) go once older than the TTL.
  for (const name of orphans) {
    const file = path.join(state.dir, name);
    const stat = await fs.lstat(file).catch(() => null);
    if (stat && state.now() - stat.mtimeMs >= state.ttlMs) await fs.rm(file, { force: true });
  }
  return removed;
}

async function destroyArtifacts(state: ArtifactsState): Promise<void> {
  if (state.closed) return;
  state.closed = true;
  const { entries } = await scan(state).catch(() => ({ entries: [] as ScannedArtifact[] }));
  for (const entry of entries) {
    if (entry.meta.owner === state.sessionId) await remove(state, entry.meta.ref);
  }
  await fs.rmdir(state.dir).catch(() => undefined);
}

/** The first bytes of `body` (cut on a character boundary) followed by a marker line, within `max` bytes. */
function truncate(body: Buffer, max: number): Buffer {
  const marker = (kept: number) =>
    Buffer.from(`\n[ivoai: artifact truncated: kept ${kept} of ${body.length} bytes]\n`, "utf8");
  // kept < body.length, so a marker naming body.length twice is at least as long as the real one.
  const room = max - marker(body.length).length;
  let kept = room;
  while (kept > 0 && isContinuation(body[kept])) kept -= 1;
  return Buffer.concat([body.subarray(0, kept), marker(kept)]);
}

function isContinuation(byte: number | undefined): boolean {
  return byte !== undefined && (byte & 0xc0) === 0x80;
}

/** A byte range of valid UTF-8 `body` from about `offset`, at most `length` bytes, on character boundaries. */
export function utf8Range(body: Buffer, offset: number, length: number): { start: number; end: number } {
  let start = Math.min(offset, body.length);
  while (start > 0 && start < body.length && isContinuation(body[start])) start -= 1;
  let end = Math.min(start + length, body.length);
  while (end > start && end < body.length && isContinuation(body[end])) end -= 1;
  if (end === start && start < body.length) {
    end = start + 1;
    while (end < body.length && isContinuation(body[end])) end += 1;
  }
  return { start, end };
}

async function loadSidecar(file: string, ref: string): Promise<Sidecar> {
  const raw = await readBounded(file, MAX_SIDECAR_BYTES, ref);
  let meta: Sidecar;
  try {
    meta = sidecarSchema.parse(JSON.parse(raw.toString("utf8")));
  } catch (error) {
    throw new IvoaiError("STATE_CORRUPT", `artifact ${ref} has an unreadable record`, { cause: error });
  }
  if (meta.ref !== ref) throw new IvoaiError("STATE_CORRUPT", `artifact ${ref} has a record of another ref`);
  return meta;
}

/** A private regular file's bytes, refusing symbolic links and anything over `max` bytes. */
async function readBounded(file: string, max: number, ref: string): Promise<Buffer> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = errnoCode(error);
    if (code === "ENOENT") throw new IvoaiError("NOT_FOUND", `no artifact ${ref}`);
    if (code === "ELOOP") throw new IvoaiError("UNSAFE_PATH", `artifact ${ref} is a symbolic link`);
    throw error;
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile() || stat.size > max) {
      throw new IvoaiError("STATE_CORRUPT", `artifact ${ref} is not a regular file within ${max} bytes`);
    }
    const buffer = Buffer.alloc(stat.size);
    const { bytesRead } = await handle.read(buffer, 0, stat.size, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}
