// `ivoai server start`

import { startGateway } from "../../server/start.js";
import { writeFileAtomic } from "../../shared/atomic-file.js";
import { errnoCode, IvoaiError, isIvoaiError } from "../../shared/errors.js";
import { createLogger, createRotatingFile, type LogLevel, type RotatingFile } from "../../shared/logger.js";
import { type CommandContext, defineCommand, defineOptions, type OptionsOf } from "../command.js";
import { describeError } from "../error-text.js";
import { ROOT_OPTION, requireServerTree } from "./server-common.js";

const SIZE_UNITS: Record<string, number> = {
  "": 1,
  b: 1,
  k: 1024,
  kib: 1024,
  m: 1024 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gib: 1024 ** 3,
};

/** `10MiB`, `512KiB`, `1G`, `65536` → bytes (at least 1 KiB). */
export function parseByteSize(text: string, flag: string): number {
  const match = /^(\d{1,10})\s*([a-z]*)$/i.exec(text.trim());
  const unit = SIZE_UNITS[(match?.[2] ?? "?").toLowerCase()];
  const bytes = match && unit ? Number(match[1]) * unit : Number.NaN;
  if (!Number.isSafeInteger(bytes) || bytes < 1024) {
    throw new IvoaiError(
      "USAGE",
      `invalid ${flag} '${text}': use a size of at least 1KiB such as 512KiB or 10MiB`,
    );
  }
  return bytes;
}

function openLogFile(ctx: CommandContext<OptionsOf<typeof START_OPTIONS>>): RotatingFile | undefined {
  const file = ctx.options["log-file"];
  const maxText = ctx.options["log-max-size"];
  const keepGiven = ctx.options["log-keep"];
  if (!file) {
    if (maxText || keepGiven !== undefined)
      throw new IvoaiError("USAGE", "--log-max-size and --log-keep need --log-file");
    return undefined;
  }
  const maxBytes = parseByteSize(maxText ?? "10MiB", "--log-max-size");
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
    type: "string",
    value: "SIZE",
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
