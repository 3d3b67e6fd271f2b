import { readdirSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { niceOf } from "../../shared/thread-priority.js";
import { type PrepareJob, prepareDocument } from "./ingest-prepare.js";
import { createWorkerPreparer, PREPARE_FORMAT, WORKER_NICE_STEPS } from "./prepare-pool.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "ivoai-pool-"));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

const job = (): PrepareJob => ({
  source: "docs",
  sourceType: "filesystem",
  relPath: "guide.md",
  data: new TextEncoder().encode("# Guide\n\nDeploy the gateway behind the proxy."),
  mtimeMs: 0,
});

/** A worker entry standing in for another build of ivoai: it answers the pool's start as `body` says. */
async function entry(name: string, body: string): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, `import { parentPort } from "node:worker_threads";\n${body}\n`);
  return file;
}

describe("the ingest worker pool", () => {
  it("prepares inline, with the same result, when the workers speak another message format", async () => {
    const reasons: string[] = [];
    const older = await entry(
      "older.mjs",
      `parentPort.postMessage({ ready: ${PREPARE_FORMAT - 1} });
       parentPort.on("message", ({ id }) => parentPort.postMessage({ id, result: { wrong: true } }));`,
    );
    const pool = createWorkerPreparer(older, { threads: 2, onFallback: (reason) => reasons.push(reason) });
    try {
      const results = await Promise.all([pool.prepare(job()), pool.prepare(job())]);
      expect(results).toEqual([prepareDocument(job()), prepareDocument(job())]);
      expect(reasons).toEqual([expect.stringContaining(`format ${PREPARE_FORMAT - 1}`)]);
    } finally {
      await pool.close();
    }
  });

  it("runs the built binary's workers below the committing thread's priority, with the inline result", async () => {
    const pool = createWorkerPreparer(path.resolve("dist/ivoai.mjs"), { threads: 2 });
    try {
      const results = await Promise.all([pool.prepare(job()), pool.prepare(job())]);
      expect(results).toEqual([prepareDocument(job()), prepareDocument(job())]);
      const mine = niceOf(process.pid);
      const lowered = readdirSync("/proc/self/task").filter(
        (task) => niceOf(Number(task)) === Math.min(19, mine + WORKER_NICE_STEPS),
      );
      expect(lowered).toHaveLength(2);
      expect(niceOf(process.pid)).toBe(mine);
    } finally {
      await pool.close();
    }
  });

  it("prepares many files in groups, small ones sharing one buffer among them, with the inline results in order", async () => {
    const pool = createWorkerPreparer(path.resolve("dist/ivoai.mjs"), { threads: 2 });
    // Small reads land in Node's shared buffer pool: several of a group's files are views of one buffer.
    const files = Array.from({ length: 100 }, (_, index): PrepareJob => {
      const text = `# Note ${index}\n\n${"Ação rápida do gateway. ".repeat(1 + (index % 7) * 40)}`;
      const data = Buffer.allocUnsafe(Buffer.byteLength(text));
      data.write(text);
      return { ...job(), relPath: `notes/${index}.md`, data };
    });
    expect(new Set(files.map((file) => file.data.buffer)).size).toBeLessThan(files.length);
    const expected = files.map((file) => prepareDocument({ ...file, data: new Uint8Array(file.data) }));
    try {
      const results = await Promise.all(files.map((file) => pool.prepare(file)));
      expect(results).toEqual(expected);
    } finally {
      await pool.close();
    }
  });

  it("prepares inline when the workers never say they are ready", async () => {
    const reasons: string[] = [];
    const silent = await entry("silent.mjs", "setInterval(() => {}, 1000);");
    const pool = createWorkerPreparer(silent, {
      threads: 1,
      readyTimeoutMs: 200,
      onFallback: (reason) => reasons.push(reason),
    });
    try {
      expect(await pool.prepare(job())).toEqual(prepareDocument(job()));
      expect(reasons).toEqual([expect.stringContaining("no answer in time")]);
    } finally {
      await pool.close();
    }
  });

  it("fails a job whose bytes cannot be sent, and goes on with the next ones", async () => {
    const pool = createWorkerPreparer(path.resolve("dist/ivoai.mjs"), { threads: 2 });
    try {
      // Bytes whose buffer already moved to another thread: the structured clone refuses them.
      const gone = job();
      structuredClone(gone.data.buffer, { transfer: [gone.data.buffer as ArrayBuffer] });
      await expect(pool.prepare(gone)).rejects.toThrow(/detached/i);
      expect(await pool.prepare(job())).toEqual(prepareDocument(job()));
    } finally {
      await pool.close();
    }
  });

  it("fails the jobs of a worker that exits without an error, rather than leaving them waiting", async () => {
    const quitting = await entry(
      "quitting.mjs",
      `parentPort.postMessage({ ready: ${PREPARE_FORMAT} });
       parentPort.on("message", () => process.exit(3));`,
    );
    const pool = createWorkerPreparer(quitting, { threads: 1 });
    try {
      await expect(pool.prepare(job())).rejects.toThrow("an ingest worker exited (code 3)");
      await expect(pool.prepare(job())).rejects.toThrow("exited");
    } finally {
      await pool.close();
    }
  });
});
