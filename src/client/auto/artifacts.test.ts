import { createHash } from "node:crypto";
import { promises as fs } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type ArtifactStore,
  type ArtifactStoreOptions,
  MAX_ARTIFACT_READ_BYTES,
  openArtifactStore,
  utf8Range,
} from "./artifacts.js";
import { resultRefSchema } from "./contracts.js";

const sha = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

let root: string;
let clock: number;
const open = (extra: Partial<ArtifactStoreOptions> = {}) =>
  openArtifactStore({ dir: path.join(root, "art"), sessionId: "ses_a", now: () => clock, ...extra });

/** Reads the whole artifact by following next_offset with `length`-byte pages. */
async function readAll(store: ArtifactStore, ref: string, length: number, sessionId = "ses_a") {
  let text = "";
  let offset: number | null = 0;
  let pages = 0;
  while (offset !== null) {
    const page = await store.read(ref, { sessionId, offset, length });
    expect(page.offset).toBe(offset);
    expect(Buffer.byteLength(page.text)).toBeLessThanOrEqual(length + 3);
    text += page.text;
    offset = page.next_offset;
    pages += 1;
  }
  return { text, pages };
}

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(tmpdir(), "ivoai-art-"));
  clock = Date.parse("2026-11-30T00:00:00Z");
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

describe("ArtifactStore", () => {
  it("stores privately and returns a ref that matches the shared contract", async () => {
    const store = await open();
    const ref = await store.put("t1", "evidence");
    expect(resultRefSchema.parse(ref)).toMatchObject({ task_id: "t1", bytes: 8, sha256: sha("evidence") });
    expect(ref.expires_at).toBe("2026-11-30T06:00:00.000Z");
    expect(ref.truncated).toBe(false);
    const dir = path.join(root, "art");
    expect((await fs.stat(dir)).mode & 0o777).toBe(0o700);
    const names = await fs.readdir(dir);
    expect(names.sort()).toEqual([`${ref.ref}.body`, `${ref.ref}.meta.json`]);
    for (const name of names) expect((await fs.stat(path.join(dir, name))).mode & 0o777).toBe(0o600);
    const meta = JSON.parse(await fs.readFile(path.join(dir, `${ref.ref}.meta.json`), "utf8"));
    expect(meta).toMatchObject({ owner: "ses_a", task_id: "t1", sha256: sha("evidence"), bytes: 8 });
    expect(await store.list()).toEqual([ref]);
  });

  it("pages through a multi-byte body and reconstructs it exactly", async () => {
    const store = await open();
    const small = `${"héllo ✓ 🦊 ".repeat(40)}end`;
    const large = `${"héllo wörld ✓ 🦊 ".repeat(9_000)}end`;
    const cases: [string, number[]][] = [
      [small, [1, 2, 3, 7]],
      [large, [1000, MAX_ARTIFACT_READ_BYTES]],
    ];
    for (const [body, lengths] of cases) {
      const ref = await store.put("t1", body);
      for (const length of lengths) {
        const { text, pages } = await readAll(store, ref.ref, length);
        expect(sha(text)).toBe(ref.sha256);
        expect(text).toBe(body);
        if (length === MAX_ARTIFACT_READ_BYTES) expect(pages).toBe(Math.ceil(ref.bytes / length));
      }
    }
  });

  it("never splits a character: a start inside one moves back, a tiny length still progresses", async () => {
    const buf = Buffer.from("a🦊b", "utf8"); // a=0, fox=1..4, b=5
    expect(utf8Range(buf, 2, 10)).toEqual({ start: 1, end: 6 });
    expect(utf8Range(buf, 0, 3)).toEqual({ start: 0, end: 1 });
    expect(utf8Range(buf, 1, 1)).toEqual({ start: 1, end: 5 });
    const store = await open();
    const ref = await store.put("t1", "a🦊b");
    const page = await store.read(ref.ref, { sessionId: "ses_a", offset: 3, length: 2 });
    expect(page).toMatchObject({ text: "🦊", offset: 1, next_offset: 5, bytes: 6 });
    const last = await store.read(ref.ref, { sessionId: "ses_a", offset: 6 });
    expect(last).toMatchObject({ text: "", offset: 6, next_offset: null });
  });

  it("bounds the range: length over 64 KiB, zero, negative or an offset past the end is refused", async () => {
    const store = await open();
    const ref = await store.put("t1", "x".repeat(100));
    const read = (offset: number, length?: number) =>
      store.read(ref.ref, { sessionId: "ses_a", offset, ...(length === undefined ? {} : { length }) });
    await expect(read(0, MAX_ARTIFACT_READ_BYTES + 1)).rejects.toThrow(/length must be/);
    await expect(read(0, 0)).rejects.toThrow(/length must be/);
    await expect(read(-1)).rejects.toThrow(/offset must be/);
    await expect(read(101)).rejects.toThrow(/beyond the artifact's 100 bytes/);
    expect((await read(0)).next_offset).toBeNull();
  });

  it("refuses a malformed ref and an unknown one", async () => {
    const store = await open();
    await expect(store.read("art_../../etc", { sessionId: "ses_a" })).rejects.toMatchObject({
      code: "USAGE",
    });
    await expect(store.read(`art_${"0".repeat(32)}`, { sessionId: "ses_a" })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
  });

  it("refuses a reader from another session", async () => {
    const store = await open();
    const ref = await store.put("t1", "secret evidence");
    await expect(store.read(ref.ref, { sessionId: "ses_b" })).rejects.toMatchObject({
      code: "FORBIDDEN",
      message: expect.stringMatching(/belongs to another session/),
    });
    await expect(store.read(ref.ref, { sessionId: "" })).rejects.toMatchObject({ code: "FORBIDDEN" });
    const other = await open({ sessionId: "ses_b" });
    expect(await other.list()).toEqual([]);
  });

  it("expires after the TTL on an injected clock, and sweep removes the expired", async () => {
    const store = await open({ ttlMs: 60_000 });
    const old = await store.put("t1", "old");
    clock += 30_000;
    const young = await store.put("t2", "young");
    clock += 30_000;
    await expect(store.read(old.ref, { sessionId: "ses_a" })).rejects.toMatchObject({
      code: "NOT_FOUND",
      message: expect.stringMatching(/expired/),
      data: { reason: "expired" },
    });
    expect((await store.read(young.ref, { sessionId: "ses_a" })).text).toBe("young");
    expect(await store.list()).toEqual([young]);
    expect(await store.sweep()).toBe(1);
    expect((await fs.readdir(path.join(root, "art"))).filter((n) => n.startsWith(old.ref))).toEqual([]);
    clock += 30_000;
    expect(await store.sweep()).toBe(1);
    expect(await fs.readdir(path.join(root, "art"))).toEqual([]);
  });

  it("detects a tampered body and never returns it", async () => {
    const store = await open();
    const ref = await store.put("t1", "the true evidence");
    const body = path.join(root, "art", `${ref.ref}.body`);
    await fs.writeFile(body, "the fake evidence");
    await expect(store.read(ref.ref, { sessionId: "ses_a" })).rejects.toMatchObject({
      code: "STATE_CORRUPT",
      message: expect.not.stringMatching(/evidence/),
    });
  });

  it("detects a body rewritten together with its sidecar (the writing store remembers the digest)", async () => {
    const store = await open();
    const ref = await store.put("t1", "the true evidence");
    const dir = path.join(root, "art");
    const metaFile = path.join(dir, `${ref.ref}.meta.json`);
    const meta = JSON.parse(await fs.readFile(metaFile, "utf8"));
    await fs.writeFile(path.join(dir, `${ref.ref}.body`), "forged evidence!!");
    await fs.writeFile(metaFile, JSON.stringify({ ...meta, sha256: sha("forged evidence!!") }));
    await expect(store.read(ref.ref, { sessionId: "ses_a" })).rejects.toMatchObject({
      code: "STATE_CORRUPT",
    });
    // A reader that never saw the put trusts the consistent sidecar: the pair was rewritten, not damaged.
    const reopened = await open();
    expect((await reopened.read(ref.ref, { sessionId: "ses_a" })).text).toBe("forged evidence!!");
  });

  it("refuses a symlinked store directory and an artifact replaced by a symlink", async () => {
    const real = path.join(root, "real");
    await fs.mkdir(real, { mode: 0o700 });
    await fs.symlink(real, path.join(root, "link"));
    await expect(
      openArtifactStore({ dir: path.join(root, "link"), sessionId: "ses_a" }),
    ).rejects.toMatchObject({ code: "UNSAFE_PATH", message: expect.stringMatching(/symbolic link/) });
    const open755 = path.join(root, "open");
    await fs.mkdir(open755, { mode: 0o755 });
    await fs.chmod(open755, 0o755);
    await expect(openArtifactStore({ dir: open755, sessionId: "ses_a" })).rejects.toMatchObject({
      code: "UNSAFE_PATH",
      message: expect.stringMatching(/0755/),
    });
    const store = await open();
    const ref = await store.put("t1", "evidence");
    const body = path.join(root, "art", `${ref.ref}.body`);
    await fs.writeFile(path.join(root, "elsewhere"), "evidence");
    await fs.rm(body);
    await fs.symlink(path.join(root, "elsewhere"), body);
    await expect(store.read(ref.ref, { sessionId: "ses_a" })).rejects.toMatchObject({ code: "UNSAFE_PATH" });
  });

  it("truncates an oversized body with a marker, flags it and keeps the digest of what is stored", async () => {
    const store = await open({ maxArtifactBytes: 1024 });
    const body = "é".repeat(2000); // 4000 bytes
    const ref = await store.put("t1", body);
    expect(ref.truncated).toBe(true);
    expect(ref.original_bytes).toBe(4000);
    expect(ref.bytes).toBeLessThanOrEqual(1024);
    const { text } = await readAll(store, ref.ref, 300);
    expect(sha(text)).toBe(ref.sha256);
    const match = /\n\[ivoai: artifact truncated: kept (\d+) of 4000 bytes\]\n$/.exec(text);
    expect(match).not.toBeNull();
    const kept = text.slice(0, match?.index);
    expect(Buffer.byteLength(kept)).toBe(Number(match?.[1]));
    expect(body.startsWith(kept)).toBe(true);
  });

  it("bounds the total: evicts expired artifacts oldest first, then refuses", async () => {
    const store = await open({ ttlMs: 1_000, maxArtifactBytes: 1024, maxTotalBytes: 3000 });
    const a = await store.put("t1", "a".repeat(1000));
    clock += 10;
    const b = await store.put("t2", "b".repeat(1000));
    clock += 10;
    const c = await store.put("t3", "c".repeat(1000));
    await expect(store.put("t4", "d")).rejects.toMatchObject({
      code: "CONFLICT",
      message: expect.stringMatching(/store is full/),
    });
    clock += 995; // a and b expired, c not
    const d = await store.put("t4", "d".repeat(1000));
    const left = (await fs.readdir(path.join(root, "art"))).map((name) => name.slice(0, 36));
    expect(left).not.toContain(a.ref);
    expect(left).toContain(b.ref);
    expect(left).toContain(c.ref);
    expect(left).toContain(d.ref);
    expect(await store.list()).toEqual([c, d]);
  });

  it("serialises concurrent puts so the total bound holds", async () => {
    const store = await open({ maxArtifactBytes: 1024, maxTotalBytes: 4096 });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => store.put(`t${i}`, "z".repeat(1000))),
    );
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(4);
  });

  it("destroy removes the session's artifacts and the directory, then refuses use", async () => {
    const store = await open();
    await store.put("t1", "x");
    await store.destroy();
    await expect(fs.stat(path.join(root, "art"))).rejects.toMatchObject({ code: "ENOENT" });
    await expect(store.put("t2", "y")).rejects.toThrow(/destroyed/);
  });

  it("refuses an invalid task id", async () => {
    const store = await open();
    await expect(store.put("../x", "y")).rejects.toMatchObject({ code: "USAGE" });
  });
});
