// `ivoai server start`

import { startGateway } from "../../server/start.js";
import { writeFileAtomic } from "../../shared/atomic-file.js";
import { errnoCode, IvoaiError, isIvoaiError } from "../../shared/errors.js";
import { createLogger, type LogLevel } from "../../shared/logger.js";
import { type CommandSpec, stringOption } from "../command.js";
import { describeError } from "../error-text.js";
import { ROOT_OPTION, requireServerTree } from "./server-common.js";

export const serverStartCommand: CommandSpec = {
  kind: "command",
  name: "start",
  summary: "Run the gateway in the foreground until SIGTERM/SIGINT",
  description:
    'When listening, prints one JSON line {"event":"ready","url":…} on stdout (and writes it to\n' +
    "--ready-file atomically). Logs are JSON lines on stderr, with secrets redacted.",
  options: {
    ...ROOT_OPTION,
    listen: { type: "string", value: "HOST:PORT", description: "override the configured listen address" },
    "ready-file": { type: "string", value: "PATH", description: "write the ready JSON here once listening" },
    "log-level": {
      type: "string",
      value: "LEVEL",
      choices: ["debug", "info", "warn", "error"],
      description: "least severe level logged (default info)",
    },
  },
  async run(ctx) {
    const level = stringOption(ctx.options, "log-level") ?? "info";
    const logger = createLogger({ level: level as LogLevel });
    const listen = stringOption(ctx.options, "listen");
    const { root } = await requireServerTree(ctx, ["enrollmentDir", "contextDir"]);
    const gateway = await startGateway({ root, logger, ...(listen ? { listen } : {}) }).catch((error) => {
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
    const readyFile = stringOption(ctx.options, "ready-file");
    if (readyFile) await writeFileAtomic(readyFile, `${JSON.stringify(ready)}\n`, { mode: 0o644 });
    ctx.out.line(JSON.stringify(ready));
    const signal = await ctx.stopSignal;
    logger.info("stopping", { signal });
    await gateway.close();
    return 0;
  },
};
