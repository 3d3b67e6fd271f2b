// The ivoai entry point and the only place that exits the process.
import { runPrepareWorkerIfAsked } from "../server/context/prepare-pool.js";
import { runCli } from "./run.js";

// The same file serves as the ingest worker thread; a worker never runs the CLI.
if (!runPrepareWorkerIfAsked()) {
  const code = await runCli(process.argv.slice(2));
  process.exitCode = code;
  // Leave even if a handle (e.g. a keep-alive socket) lingers; stdout/stderr writes to pipes and files are synchronous on Linux.
  setImmediate(() => process.exit(code));
}
