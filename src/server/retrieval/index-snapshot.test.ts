// The persisted lexical index: a round trip answers exactly as the index it was taken of, a snapshot that is
// stale, corrupt or of another store is refused (the index rebuilds from the store), and writes are atomic.
import { promises as fs } from "node:fs";
import path from "node:path";
import { crc32 } from "node:zlib";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createRandom } from "../../../bench/lib/corpus.js";
import { tempDir } from "../../../test/helpers.js";
import { align8, readIndexSnapshot, writeIndexSnapshot } from "./index-snapshot.js";
import { createLexicalIndex } from "./lexical-index.js";
import { createSyncedIndex, type IndexFeed } from "./synced-index.js";

/** An in-memory store with the feed contract: keys ascend, removals leave tombstones by generation. */
function createStore(instance = "store-1") {
  const rows = new Map<number, string>();
  const tombstones: { key: number; generation: number }[] = [];
  let generation = 0;
  let nextKey = 1;
  const calls = { addedAfter: [] as number[] };
  const feed: IndexFeed<{ doc: string }> = {
    generation: async () => generation,
    removedSince: async (since) => tombstones.filter((t) => t.generation > since).map((t) => t.key),
    addedAfter: async (after, limit) => {
      calls.addedAfter.push(after);
      return [...rows]
        .filter(([key]) => key > after)
        .slice(0, limit)
        .map(([key, terms]) => ({ key, terms, meta: { doc: `d${Math.floor(key / 3)}` } }));
    },
    languages: async () => ["en"],
    instance: async () => instance,
    count: async () => rows.size,
  };
  return {
    feed,
    calls,
    add(count: number, random: () => number) {
      generation += 1;
      for (let i = 0; i < count; i++) {
        const length = 3 + Math.floor(random() * 12);
        const terms = Array.from({ length }, () => `t${Math.floor(random() ** 2 * 300)}`);
        rows.set(nextKey++, terms.join(" "));
      }
    },
    remove(keys: number[], keepTombstones = true) {
      generation += 1;
      for (const key of keys) {
        rows.delete(key);
        if (keepTombstones) tombstones.push({ key, generation });
      }
    },
  };
}

const QUERIES = [
  ["t1"],
  ["t2", "t40"],
  ["t7", "t9", "t150"],
  ["t0", "t3"],
  ["t299", "t5"],
  ["t11", "t12", "t13", "t14"],
];
const query = (terms: string[]) => new Map(terms.map((term) => [term, 1]));
const answers = (index: { search: ReturnType<typeof createSyncedIndex>["search"] }) =>
  QUERIES.map((terms) => index.search(query(terms), { limit: 50 }));

describe("snapshot section offsets", () => {
  it("stay exact past 2 GiB and 4 GiB (a 10M-chunk snapshot's postings end past both)", () => {
    expect([0, 1, 8, 2 ** 31 - 1, 2 ** 31 + 1, 2 ** 32 + 9, 5_249_000_003].map(align8)).toEqual([
      0,
      8,
      8,
      2 ** 31,
      2 ** 31 + 8,
      2 ** 32 + 16,
      5_249_000_008,
    ]);
  });
});

describe("index snapshot", () => {
  let dir: string;
  let file: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
    file = path.join(dir, "lexical-index.snapshot");
  });
  afterEach(() => cleanup());

  it("round-trips: a restored index answers exactly as the one it was taken of, metadata included", async () => {
    const store = createStore();
    const random = createRandom(3);
    store.add(3000, random);
    store.remove([5, 6, 7, 100]);
    const first = createSyncedIndex(store.feed, { snapshotFile: file });
    await first.refresh();
    await first.persist();
    const expected = answers(first);
    expect(expected.flat().length).toBeGreaterThan(100);

    store.calls.addedAfter.length = 0;
    const problems: string[] = [];
    const second = createSyncedIndex(store.feed, {
      snapshotFile: file,
      onSnapshotProblem: (m) => problems.push(m),
    });
    await second.refresh();
    expect(problems).toEqual([]);
    // Restored, not rebuilt: it only asked for rows after the snapshot's highest key.
    expect(store.calls.addedAfter).toEqual([3000]);
    expect(answers(second)).toEqual(expected);
    expect(second.size).toBe(2996);
    expect(second.meta(2999)).toEqual({ doc: "d999" });
    expect(second.meta(5)).toBeUndefined();
  });

  it("restores the snapshot of an empty index and then takes every passage added since", async () => {
    const store = createStore();
    const empty = createSyncedIndex(store.feed, { snapshotFile: file });
    await empty.refresh();
    await empty.persist();
    store.add(1500, createRandom(9));
    const problems: string[] = [];
    const restored = createSyncedIndex(store.feed, {
      snapshotFile: file,
      onSnapshotProblem: (m) => problems.push(m),
    });
    await restored.refresh();
    expect(problems).toEqual([]);
    const fresh = createSyncedIndex(store.feed);
    await fresh.refresh();
    expect(restored.size).toBe(1500);
    expect(answers(restored)).toEqual(answers(fresh));
    expect(answers(restored).flat().length).toBeGreaterThan(100);
    expect(restored.meta(1499)).toEqual(fresh.meta(1499));
    expect(restored.meta(1499)).toBeDefined();
    // 1,500 changes made the refresh start writing a snapshot in the background: wait for it before cleanup.
    await restored.persist();
  });

  it("asks the store for its generation only when the change signal says so", async () => {
    const store = createStore();
    store.add(100, createRandom(3));
    let generations = 0;
    const feed = {
      ...store.feed,
      generation: () => {
        generations += 1;
        return store.feed.generation();
      },
    };
    let changed = false;
    const takeChanged = () => {
      const was = changed;
      changed = false;
      return was;
    };
    const index = createSyncedIndex(feed, { changes: { takeChanged } });
    await index.refresh();
    expect([index.size, generations]).toEqual([100, 1]);
    store.add(50, createRandom(4));
    await index.refresh();
    await index.refresh();
    // No signal: the store is not asked, and the new rows wait.
    expect([index.size, generations]).toEqual([100, 1]);
    changed = true;
    await index.refresh();
    expect([index.size, generations]).toEqual([150, 2]);
  });

  it("writes nothing by itself when told to only read (a CLI process), even after a full build", async () => {
    const store = createStore();
    store.add(1500, createRandom(9));
    // A snapshot that cannot be written (its folder is a file), so that any attempt is reported.
    const blocker = path.join(path.dirname(file), "blocker");
    await fs.writeFile(blocker, "");
    const problems: string[] = [];
    const reader = createSyncedIndex(store.feed, {
      snapshotFile: path.join(blocker, "lexical-index.snapshot"),
      snapshotAfterChanges: Number.POSITIVE_INFINITY,
      onSnapshotProblem: (message) => problems.push(message),
    });
    await reader.refresh();
    // persist() runs after any write in flight, so a background attempt has reported by the time it fails.
    await expect(reader.persist()).rejects.toThrow();
    expect(problems.filter((message) => /not written/.test(message))).toEqual([]);
  });

  it("catches up from the snapshot with rows added and removed since, as the running index did", async () => {
    const store = createStore();
    const random = createRandom(5);
    store.add(2000, random);
    const running = createSyncedIndex(store.feed, { snapshotFile: file });
    await running.refresh();
    await running.persist();
    store.add(500, random);
    store.remove([1, 2, 3, 2100, 2400]);

    // Term numbering follows the history (it breaks ties between feedback terms), so the reference is the
    // index that lived through the same changes, not a rebuild.
    store.calls.addedAfter.length = 0;
    const restored = createSyncedIndex(store.feed, { snapshotFile: file });
    await restored.refresh();
    expect(store.calls.addedAfter).toEqual([2000]);
    await running.refresh();
    expect(restored.size).toBe(2495);
    expect(answers(restored)).toEqual(answers(running));
    expect(restored.meta(2100)).toBeUndefined();
    expect(restored.meta(2499)).toEqual({ doc: "d833" });
    // And the restored index keeps following the store.
    store.add(10, random);
    store.remove([4]);
    await restored.refresh();
    await running.refresh();
    expect(answers(restored)).toEqual(answers(running));
  });

  it("refuses a corrupt or truncated snapshot and rebuilds from the store", async () => {
    const store = createStore();
    store.add(1000, createRandom(7));
    const first = createSyncedIndex(store.feed, { snapshotFile: file });
    await first.refresh();
    await first.persist();
    const expected = answers(first);
    const bytes = await fs.readFile(file);

    const flipped = Buffer.from(bytes);
    const at = Math.floor(flipped.length * 0.6);
    flipped[at] = (flipped[at] as number) ^ 0x10;
    await fs.writeFile(file, flipped);
    expect(await readIndexSnapshot(file)).toMatchObject({
      ok: false,
      reason: "corrupt",
      detail: "checksum mismatch",
    });
    const problems: string[] = [];
    store.calls.addedAfter.length = 0;
    const second = createSyncedIndex(store.feed, {
      snapshotFile: file,
      onSnapshotProblem: (m) => problems.push(m),
    });
    await second.refresh();
    expect(problems).toEqual([expect.stringMatching(/corrupt: checksum mismatch/)]);
    expect(store.calls.addedAfter[0]).toBe(0);
    expect(answers(second)).toEqual(expected);
    // Its rebuild wrote a sound snapshot in place of the corrupt one.
    await second.persist();
    expect(await readIndexSnapshot(file)).toMatchObject({ ok: true });

    await fs.writeFile(file, bytes.subarray(0, bytes.length - 100));
    expect(await readIndexSnapshot(file)).toMatchObject({ ok: false, reason: "corrupt" });
    const other = Buffer.from(bytes);
    other.writeUInt32LE(99, 8);
    await fs.writeFile(file, other);
    expect(await readIndexSnapshot(file)).toMatchObject({ ok: false, reason: "version" });
    await fs.writeFile(file, "not a snapshot at all, but long enough to have a prefix");
    expect(await readIndexSnapshot(file)).toMatchObject({
      ok: false,
      reason: "corrupt",
      detail: "not a snapshot",
    });

    // A snapshot that cannot even be read (here: a directory in its place) is passed over too.
    await fs.rm(file);
    await fs.mkdir(file);
    problems.length = 0;
    const third = createSyncedIndex(store.feed, {
      snapshotFile: file,
      onSnapshotProblem: (m) => problems.push(m),
    });
    await third.refresh();
    expect(answers(third)).toEqual(expected);
    // Its own snapshot cannot replace a directory either: reported, and searches go on.
    await expect(third.persist()).rejects.toThrow();
    expect(problems).toEqual([
      expect.stringMatching(/index snapshot not used \(.*EISDIR/),
      expect.stringMatching(/index snapshot not written/),
    ]);
    expect(answers(third)).toEqual(expected);
    await fs.rmdir(file);
  });

  it("refuses a well-checksummed snapshot whose structure is wrong (a faulty or hostile writer)", async () => {
    const store = createStore();
    store.add(1000, createRandom(13));
    const first = createSyncedIndex(store.feed, { snapshotFile: file });
    await first.refresh();
    await first.persist();
    const sound = await fs.readFile(file);
    const room = sound.readUInt32LE(12);
    const header = () =>
      JSON.parse(sound.toString("utf8", 40, 40 + room)) as { sections: Record<string, [number, number]> };
    /** Writes `bytes` with its header replaced (padded to the same room) and its checksum made right again. */
    const sealed = async (bytes: Buffer, newHeader = header()) => {
      const text = JSON.stringify(newHeader);
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(room);
      bytes.fill(0x20, 40, 40 + room);
      bytes.write(text, 40, "utf8");
      bytes.writeUInt32LE(crc32(bytes.subarray(40)), 16);
      await fs.writeFile(file, bytes);
      return readIndexSnapshot(file);
    };
    expect(await sealed(Buffer.from(sound))).toMatchObject({ ok: true });

    const negative = Buffer.from(sound);
    negative.writeInt32LE(-1, (header().sections.lengths as [number, number])[0]);
    expect(await sealed(negative)).toMatchObject({ ok: false, reason: "corrupt", detail: "sequence range" });

    // A term id whose last byte says "more" runs into the next passage's and, at the end, past the sequence.
    const runaway = Buffer.from(sound);
    const [sequenceStart, sequenceBytes] = header().sections.sequence as [number, number];
    runaway[sequenceStart + sequenceBytes - 1] = 0xff;
    expect(await sealed(runaway)).toMatchObject({ ok: false, reason: "corrupt", detail: "sequence range" });
    const strayPosting = Buffer.from(sound);
    strayPosting.writeInt32LE(1 << 30, (header().sections.postings as [number, number])[0]);
    expect(await sealed(strayPosting)).toMatchObject({ ok: false, detail: "posting out of range" });

    const overlapping = header();
    overlapping.sections.df = [(overlapping.sections.postings as [number, number])[0], 1];
    expect(await sealed(Buffer.from(sound), overlapping)).toMatchObject({
      ok: false,
      reason: "corrupt",
      detail: expect.stringMatching(/overlaps another section/),
    });

    const unordered = Buffer.from(sound);
    const [metaStart] = header().sections.metaKeys as [number, number];
    unordered.writeDoubleLE(unordered.readDoubleLE(metaStart + 8), metaStart);
    expect(await sealed(unordered)).toMatchObject({
      ok: false,
      reason: "corrupt",
      detail: "metadata keys out of order",
    });
  });

  it("refuses a stale snapshot: of another store, of a later generation, or missing pruned tombstones", async () => {
    const random = createRandom(11);
    const store = createStore("store-1");
    store.add(1500, random);
    const first = createSyncedIndex(store.feed, { snapshotFile: file });
    await first.refresh();
    await first.persist();
    const saved = await fs.readFile(file);

    const expectRebuild = async (feed: IndexFeed<{ doc: string }>, reason: RegExp) => {
      await fs.writeFile(file, saved);
      const problems: string[] = [];
      const index = createSyncedIndex(feed, {
        snapshotFile: file,
        onSnapshotProblem: (m) => problems.push(m),
      });
      await index.refresh();
      const fresh = createSyncedIndex(feed);
      await fresh.refresh();
      expect(problems).toEqual([expect.stringMatching(reason)]);
      expect(index.size).toBe(fresh.size);
      expect(answers(index)).toEqual(answers(fresh));
      // The rebuilt index replaced the stale snapshot with its own.
      await index.persist();
      const replaced = await readIndexSnapshot(file);
      expect(replaced.ok && replaced.snapshot.generation).toBe(await feed.generation());
      expect(replaced.ok && replaced.snapshot.instance).toBe(await feed.instance?.());
    };

    const other = createStore("store-2");
    other.add(1200, createRandom(12));
    await expectRebuild(other.feed, /another catalogue or a later generation/);
    const younger = createStore("store-1");
    await expectRebuild(younger.feed, /another catalogue or a later generation/);
    // Removals whose tombstones were pruned before the index caught up: the counts disagree.
    store.remove([10, 20, 30], false);
    await expectRebuild(store.feed, /1500 passages after catching up, store has 1497/);
  });

  it("writes through a temporary file and leaves none behind, even when it cannot replace the target", async () => {
    const index = createLexicalIndex();
    index.add(1, ["alpha", "beta"]);
    const snapshot = (generation: number) => ({
      generation,
      maxKey: 1,
      instance: "x",
      state: index.state(),
      metaKeys: new Float64Array([1]),
      metaIds: new Int32Array([0]),
      metas: [{ doc: "a" }],
    });
    // A temporary that a killed writer left an hour ago goes with the next write; a recent one may be live.
    const abandoned = path.join(dir, ".lexical-index.snapshot.0a0a0a0a0a0a.tmp");
    const recent = path.join(dir, ".lexical-index.snapshot.0b0b0b0b0b0b.tmp");
    await fs.writeFile(abandoned, "half");
    await fs.writeFile(recent, "half");
    const hourAgo = new Date(Date.now() - 3_600_000);
    await fs.utimes(abandoned, hourAgo, hourAgo);
    await writeIndexSnapshot(file, snapshot(1));
    expect((await fs.readdir(dir)).sort()).toEqual([path.basename(recent), "lexical-index.snapshot"]);
    await fs.rm(recent);
    await writeIndexSnapshot(file, snapshot(2));
    expect(await fs.readdir(dir)).toEqual(["lexical-index.snapshot"]);
    const read = await readIndexSnapshot(file);
    expect(read.ok && read.snapshot.generation).toBe(2);
    expect(read.ok && read.snapshot.state.terms).toEqual(["alpha", "beta"]);

    // A directory in the way is not replaced: the write fails and leaves nothing of its own.
    const blocked = path.join(dir, "blocked");
    await fs.mkdir(path.join(blocked, "in-the-way"), { recursive: true });
    await expect(writeIndexSnapshot(path.join(dir, "blocked"), snapshot(3))).rejects.toThrow();
    expect((await fs.readdir(dir)).sort()).toEqual(["blocked", "lexical-index.snapshot"]);
    expect(await fs.readdir(blocked)).toEqual(["in-the-way"]);
  });
});
