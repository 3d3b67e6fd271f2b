// Document preparation (decoding, normalising, hashing, chunking, analysis), inline or on worker threads, so
// that ingestion uses every core while the main thread reads files and writes the catalogue. Results come back
// per job; the caller commits them in submission order.
import { availableParallelism } from "node:os";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { type Prepared, type PrepareJob, prepareDocument } from "./ingest-prepare.js";

export interface DocumentPreparer {
  /** Prepares one file; its bytes may be handed over to another thread (do not use `job.data` afterwards). */
  prepare(job: PrepareJob): Promise<Prepared>;
  close(): Promise<void>;
}

export function createInlinePreparer(): DocumentPreparer {
  return {
    prepare: async (job) => prepareDocument(job),
    close: async () => {},
  };
}

const WORKER_ROLE = "ivoai-prepare";

/**
 * A pool of worker threads running `entry` (the bundled ivoai binary, which calls `runPrepareWorkerIfAsked`
 * first thing), started on the first job: a re-ingest that reads nothing starts none. Falls back to inline
 * work when `entry` is not a runnable JavaScript file.
 */
export function createWorkerPreparer(
  entry: string | undefined,
  threads = defaultThreads(),
): DocumentPreparer {
  if (!entry || !/\.(mjs|js|cjs)$/.test(entry) || threads < 1) return createInlinePreparer();
  const waiting = new Map<number, { resolve: (value: Prepared) => void; reject: (error: Error) => void }>();
  let next = 0;
  let workers: Worker[] | undefined;
  // A worker that failed takes no more jobs: later ones fail at once rather than wait forever.
  let failure: Error | undefined;
  const start = () => {
    workers = Array.from({ length: threads }, () => new Worker(entry, { workerData: { role: WORKER_ROLE } }));
    for (const worker of workers) listen(worker);
    return workers;
  };
  const listen = (worker: Worker) => {
    worker.on("message", (message: { id: number; result?: Prepared; error?: string }) => {
      const entryWaiting = waiting.get(message.id);
      waiting.delete(message.id);
      if (message.error !== undefined) entryWaiting?.reject(new Error(message.error));
      else entryWaiting?.resolve(message.result as Prepared);
    });
    worker.on("error", (error) => {
      failure = error;
      for (const pending of waiting.values()) pending.reject(error);
      waiting.clear();
    });
  };
  return {
    prepare(job) {
      const id = next++;
      // Bytes that own their whole buffer move to the worker without a copy; pooled small ones are copied.
      const { data } = job;
      const transfer = data.byteOffset === 0 && data.buffer.byteLength <= data.byteLength + 1;
      return new Promise((resolve, reject) => {
        if (failure) {
          reject(failure);
          return;
        }
        waiting.set(id, { resolve, reject });
        const pool = workers ?? start();
        pool[id % pool.length]?.postMessage({ id, job }, transfer ? [data.buffer as ArrayBuffer] : []);
      });
    },
    async close() {
      await Promise.all((workers ?? []).map((worker) => worker.terminate()));
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
  port.on("message", ({ id, job }: { id: number; job: PrepareJob }) => {
    try {
      port.postMessage({ id, result: prepareDocument(job) });
    } catch (error) {
      port.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
    }
  });
  return true;
}
