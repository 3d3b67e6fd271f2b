// `ivoai server start`

import { startGateway } from "../../server/start.js";
import { writeFileAtomic } from "../../shared/atomic-file.js";
import { errnoCode, IvoaiError, isIvoaiError } from "../../shared/errors.js";
import { createLogger, createRotatingFile, type LogLevel, type RotatingFile } from "../../shared/logger.js";
import { type CommandContext, defineCommand, defineOptions, type OptionsOf } from "../command.js";
import { describeError } from "../error-text.js";
import { ROOT_OPTION, requireServerTree } from "./server-common.js";

function openLogFile(ctx: CommandContext<OptionsOf<typeof START_OPTIONS>>): RotatingFile | undefined {
  const file = ctx.options["log-file"];
  const maxGiven = ctx.options["log-max-size"];
  const keepGiven = ctx.options["log-keep"];
  if (!file) {
    if (maxGiven !== undefined || keepGiven !== undefined)
      throw new IvoaiError("USAGE", "--log-max-size and --log-keep need --log-file");
    return undefined;
  }
  const maxBytes = maxGiven ?? 10 * 1024 ** 2;
  const keep = keepGiven ?? 5;
  try {
    return createRotatingFile({ file, maxBytes, keep });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new IvoaiError(
      "PERMISSION_DENIED",
      `cannot open the log file ${file} (${code}): check the directory exists and is writable`,
      { cause: error },
    );
  }
}

const START_OPTIONS = defineOptions({
  ...ROOT_OPTION,
  listen: { type: "string", value: "HOST:PORT", description: "override the configured listen address" },
  "ready-file": { type: "string", value: "PATH", description: "write the ready JSON here once listening" },
  "log-level": {
    type: "enum",
    value: "LEVEL",
    choices: ["debug", "info", "warn", "error"] satisfies readonly LogLevel[],
    default: "info",
    description: "least severe level logged",
  },
  replica: {
    type: "boolean",
    description: "serve this tree from one more process, without the pid file (see above)",
  },
  "log-file": {
    type: "string",
    value: "PATH",
    description: "write logs to this file (0600) instead of stderr",
  },
  "log-max-size": {
    type: "size",
    min: 1024,
    description: "rotate the log file before it passes SIZE (default 10MiB)",
  },
  "log-keep": {
    type: "integer",
    value: "N",
    min: 0,
    max: 100,
    description: "rotated log files kept: FILE.1 … FILE.N (default 5)",
  },
});

export const serverStartCommand = defineCommand({
  name: "start",
  summary: "Run the gateway in the foreground until SIGTERM/SIGINT",
  description:
    'When listening, prints one JSON line {"event":"ready","url":…} on stdout (and writes it to\n' +
    "--ready-file atomically). Logs are JSON lines on stderr (journald under systemd), with secrets redacted,\n" +
    "or in --log-file, rotated by size. One server per root: its pid is in run/ivoai/server.pid.\n" +
    "--replica serves the same tree from one more process (another --listen port; enrollment, memory and\n" +
    "the catalogue are shared through their locks and WAL); it writes no pid file, so 'server status' and\n" +
    "'server stop' act on the primary only.",
  options: START_OPTIONS,
  async run(ctx) {
    const level = ctx.options["log-level"];
    const logFile = openLogFile(ctx);
    try {
      const logger = createLogger({ level, ...(logFile ? { write: logFile.write } : {}) });
      const listen = ctx.options.listen;
      const { root } = await requireServerTree(ctx, ["enrollmentDir", "contextDir"]);
      const gateway = await startGateway({
        root,
        logger,
        pidFile: ctx.options.replica !== true,
        ...(listen ? { listen } : {}),
      }).catch((error) => {
        // The listener's errno (EADDRINUSE, EACCES…) as a sentence naming the port and what to change.
        if (isIvoaiError(error) && error.code === "LISTENER_REFUSED" && errnoCode(error.cause))
          throw new IvoaiError("LISTENER_REFUSED", describeError(error.cause, { server: true }).message, {
            cause: error,
          });
        throw error;
      });
      const ready = {
        event: "ready",
        url: gateway.url,
        public_url: gateway.publicUrl,
        listen: gateway.listen,
        mode: gateway.mode,
        pid: process.pid,
      };
      const readyFile = ctx.options["ready-file"];
      if (readyFile) await writeFileAtomic(readyFile, `${JSON.stringify(ready)}\n`, { mode: 0o644 });
      ctx.out.line(JSON.stringify(ready));
      const signal = await ctx.stopSignal;
      logger.info("stopping", { signal });
      await gateway.close();
      return 0;
    } finally {
      logFile?.close();
    }
  },
});
