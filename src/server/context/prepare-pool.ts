// Document preparation (decoding, normalising, hashing, chunking, analysis), inline or on worker threads, so
// that ingestion uses every core while the main thread reads files and writes the catalogue. Results come back
// per job; the caller commits them in submission order.
import { availableParallelism } from "node:os";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { lowerThreadPriority } from "../../shared/thread-priority.js";
import { type Prepared, type PrepareJob, prepareDocument, transferables } from "./ingest-prepare.js";

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
/** How much lower than their process's threads workers run (nice +5: about a third of a core's share). */
export const WORKER_NICE_STEPS = 5;
/** The shape of the messages between the pool and its workers; raise it whenever PrepareJob or Prepared change. */
export const PREPARE_FORMAT = 3;
/**
 * Jobs per message. Each message costs both threads a wake-up and a turn of their event loops, about as much as
 * a small document's whole preparation: jobs go in groups, and each group's results come back in one message.
 */
const JOBS_PER_MESSAGE = 16;

interface JobMessage {
  jobs: { id: number; job: PrepareJob }[];
}
interface ResultMessage {
  results: { id: number; result?: Prepared; error?: string }[];
}
/** How long started workers have to say they are ready before the pool works inline instead. */
const READY_TIMEOUT_MS = 30_000;

interface PoolOptions {
  threads?: number;
  readyTimeoutMs?: number;
  /** Told once, in one line, when the workers cannot be used and preparation runs inline. */
  onFallback?: (reason: string) => void;
}

/**
 * A pool of worker threads running `entry` (the bundled ivoai binary, which calls `runPrepareWorkerIfAsked`
 * first thing), started on the first job: a re-ingest that reads nothing starts none. Falls back to inline
 * work when `entry` is not a runnable JavaScript file, or when its workers speak another message format (a
 * server still running after the package was upgraded under it) or never say they are ready.
 */
export function createWorkerPreparer(entry: string | undefined, options: PoolOptions = {}): DocumentPreparer {
  const threads = options.threads ?? defaultThreads();
  if (!entry || !/\.(mjs|js|cjs)$/.test(entry) || threads < 1) return createInlinePreparer();
  const waiting = new Map<number, { resolve: (value: Prepared) => void; reject: (error: Error) => void }>();
  let next = 0;
  let workers: Worker[] = [];
  /** Resolves true once every worker said it is ready in our format, false when inline work must do. */
  let ready: Promise<boolean> | undefined;
  // A worker that failed takes no more jobs: later ones fail at once rather than wait forever.
  let failure: Error | undefined;
  const start = async (): Promise<boolean> => {
    workers = Array.from(
      { length: threads },
      () => new Worker(entry, { workerData: { role: WORKER_ROLE, format: PREPARE_FORMAT } }),
    );
    const answers = workers.map(
      (worker) =>
        new Promise<number | undefined>((resolve) => {
          worker.once("message", (message: { ready?: number }) => resolve(message?.ready));
          worker.once("error", () => resolve(undefined));
          worker.once("exit", () => resolve(undefined));
        }),
    );
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), options.readyTimeoutMs ?? READY_TIMEOUT_MS);
    });
    const formats = await Promise.race([Promise.all(answers), timeout]).finally(() => clearTimeout(timer));
    const usable = formats !== "timeout" && formats.every((format) => format === PREPARE_FORMAT);
    if (!usable) {
      const seen = formats === "timeout" ? "no answer in time" : `format ${formats.join(", ")}`;
      options.onFallback?.(
        `ingest workers from ${entry} are not usable (${seen}, expected format ${PREPARE_FORMAT}): preparing inline`,
      );
      await Promise.all(workers.map((worker) => worker.terminate()));
      workers = [];
      return false;
    }
    outstanding = workers.map(() => 0);
    workers.forEach(listen);
    return true;
  };
  const listen = (worker: Worker, index: number) => {
    worker.on("message", ({ results }: ResultMessage) => {
      outstanding[index] = (outstanding[index] as number) - results.length;
      for (const { id, result, error } of results) {
        const entryWaiting = waiting.get(id);
        waiting.delete(id);
        if (error !== undefined) entryWaiting?.reject(new Error(error));
        else entryWaiting?.resolve(result as Prepared);
      }
    });
    const fail = (error: Error) => {
      failure ??= error;
      for (const pending of waiting.values()) pending.reject(failure);
      waiting.clear();
    };
    worker.on("error", fail);
    // A worker that ends without an error (process.exit in it, say) would leave its jobs waiting forever.
    worker.on("exit", (code) => fail(new Error(`an ingest worker exited (code ${code})`)));
  };
  // Jobs not posted yet, sent when JOBS_PER_MESSAGE are there or when this thread next turns its event loop
  // (it is then waiting for results), to the worker with the fewest jobs outstanding.
  let outbox: JobMessage["jobs"] = [];
  let transfer = new Set<ArrayBuffer>();
  let outstanding: number[] = [];
  let flushing: NodeJS.Immediate | undefined;
  const flush = () => {
    if (flushing) clearImmediate(flushing);
    flushing = undefined;
    const jobs = outbox;
    const buffers = [...transfer];
    outbox = [];
    transfer = new Set();
    if (jobs.length === 0) return;
    const index = outstanding.indexOf(Math.min(...outstanding));
    try {
      workers[index]?.postMessage({ jobs } satisfies JobMessage, buffers);
      outstanding[index] = (outstanding[index] as number) + jobs.length;
    } catch (error) {
      // A job the structured clone refuses fails with its group (its run then ends), rather than the process.
      for (const { id } of jobs) {
        waiting.get(id)?.reject(error instanceof Error ? error : new Error(String(error)));
        waiting.delete(id);
      }
    }
  };
  const post = (job: PrepareJob): Promise<Prepared> => {
    const id = next++;
    return new Promise((resolve, reject) => {
      if (failure) {
        reject(failure);
        return;
      }
      waiting.set(id, { resolve, reject });
      // Bytes that own their whole buffer move to the worker without a copy; pooled small ones are copied. Empty
      // ones are copied too: a detached buffer looks empty, and Node drops, unsent and silently, a message whose
      // transfer list holds one, where the copy throws (below).
      const { data } = job;
      if (data.byteLength > 0 && data.byteOffset === 0 && data.buffer.byteLength <= data.byteLength + 1)
        transfer.add(data.buffer as ArrayBuffer);
      outbox.push({ id, job });
      if (outbox.length >= JOBS_PER_MESSAGE) flush();
      else flushing ??= setImmediate(flush);
    });
  };
  return {
    async prepare(job) {
      if (failure) throw failure;
      ready ??= start();
      return (await ready) ? post(job) : prepareDocument(job);
    },
    async close() {
      await ready;
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
  // The committing thread is the one that must never wait for a core: preparation yields to it.
  lowerThreadPriority(WORKER_NICE_STEPS);
  // Says which message format this build speaks; a pool of another build falls back to inline work.
  port.postMessage({ ready: PREPARE_FORMAT });
  port.on("message", ({ jobs }: JobMessage) => {
    const results: ResultMessage["results"] = [];
    // A set: documents of one message may share a buffer (small files copied over together).
    const transfer = new Set<ArrayBuffer>();
    for (const { id, job } of jobs) {
      try {
        const result = prepareDocument(job);
        results.push({ id, result });
        // The body and terms move back without a copy (this thread does not keep them).
        for (const buffer of transferables(result)) transfer.add(buffer);
      } catch (error) {
        results.push({ id, error: error instanceof Error ? error.message : String(error) });
      }
    }
    port.postMessage({ results } satisfies ResultMessage, [...transfer]);
  });
  return true;
}
