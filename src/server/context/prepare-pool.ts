// Chunking and analysis of documents, inline or on worker threads, so that ingestion uses every core while
// the main thread reads files and writes the catalogue. Results come back in submission order.
import { availableParallelism } from "node:os";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { type ChunkPlan, type PlanInput, planChunks } from "./ingest-prepare.js";

export interface DocumentPreparer {
  plan(input: PlanInput): Promise<ChunkPlan>;
  close(): Promise<void>;
}

export function createInlinePreparer(): DocumentPreparer {
  return {
    plan: async (input) => planChunks(input),
    close: async () => {},
  };
}

const WORKER_ROLE = "ivoai-prepare";

/**
 * A pool of worker threads running `entry` (the bundled ivoai binary, which calls `runPrepareWorkerIfAsked`
 * first thing). Falls back to inline work when `entry` is not a runnable JavaScript file.
 */
export function createWorkerPreparer(
  entry: string | undefined,
  threads = defaultThreads(),
): DocumentPreparer {
  if (!entry || !/\.(mjs|js|cjs)$/.test(entry) || threads < 1) return createInlinePreparer();
  const workers = Array.from(
    { length: threads },
    () => new Worker(entry, { workerData: { role: WORKER_ROLE } }),
  );
  const waiting = new Map<number, { resolve: (value: ChunkPlan) => void; reject: (error: Error) => void }>();
  let next = 0;
  for (const worker of workers) {
    worker.on("message", (message: { id: number; result?: ChunkPlan; error?: string }) => {
      const entryWaiting = waiting.get(message.id);
      waiting.delete(message.id);
      if (message.error !== undefined) entryWaiting?.reject(new Error(message.error));
      else entryWaiting?.resolve(message.result as ChunkPlan);
    });
    worker.on("error", (error) => {
      for (const pending of waiting.values()) pending.reject(error);
      waiting.clear();
    });
  }
  return {
    plan(input) {
      const id = next++;
      return new Promise((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        workers[id % workers.length]?.postMessage({ id, input });
      });
    },
    async close() {
      await Promise.all(workers.map((worker) => worker.terminate()));
    },
  };
}

function defaultThreads(): number {
  return Math.max(1, Math.min(4, availableParallelism()));
}

/** In a worker started by the pool, serves prepare jobs and returns true; elsewhere returns false. */
export function runPrepareWorkerIfAsked(): boolean {
  if (isMainThread || (workerData as { role?: string } | undefined)?.role !== WORKER_ROLE || !parentPort)
    return false;
  const port = parentPort;
  port.on("message", ({ id, input }: { id: number; input: PlanInput }) => {
    try {
      port.postMessage({ id, result: planChunks(input) });
    } catch (error) {
      port.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
    }
  });
  return true;
}
