// The ivoai entry point and the only place that exits the process.
import { isMainThread } from "node:worker_threads";
import { runCli } from "./run.js";

/** Resolves once everything written to `stream` so far has left the process (or the reader went away). */
function drained(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (stream.destroyed || !stream.writable) return resolve();
    // Writes complete in order: the callback of an empty write runs after every earlier write is flushed.
    stream.write("", () => resolve());
  });
}

/** In an ingest worker thread (this same file is its entry), serves it and returns true; a worker never runs the CLI. */
async function servedAsWorker(): Promise<boolean> {
  if (isMainThread) return false;
  const { runPrepareWorkerIfAsked } = await import("../server/context/prepare-pool.js");
  return runPrepareWorkerIfAsked();
}

if (!(await servedAsWorker())) {
  // A reader that goes away (`| head`) is not an error of ours: stop writing, keep the exit status.
  for (const stream of [process.stdout, process.stderr]) stream.on("error", () => stream.destroy());
  const code = await runCli(process.argv.slice(2));
  process.exitCode = code;
  // A pipe takes 64 KiB at once and the rest asynchronously: exit only once both streams drained,
  // and then even if a handle (e.g. a keep-alive socket) lingers.
  await Promise.all([drained(process.stdout), drained(process.stderr)]);
  process.exit(code);
}
