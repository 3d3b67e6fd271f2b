// `ivoai server start`

import { startGateway } from "../../server/start.js";
import { writeFileAtomic } from "../../shared/atomic-file.js";
import { IvoaiError } from "../../shared/errors.js";
import { createLogger, type LogLevel } from "../../shared/logger.js";
import { type CommandSpec, stringOption } from "../command.js";
import { ROOT_OPTION, rootOf } from "./server-common.js";

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
    "log-level": { type: "string", value: "LEVEL", description: "debug, info (default), warn or error" },
  },
  async run(ctx) {
    const level = stringOption(ctx.options, "log-level") ?? "info";
    if (!["debug", "info", "warn", "error"].includes(level)) {
      throw new IvoaiError("USAGE", `invalid --log-level '${level}'`);
    }
    const logger = createLogger({ level: level as LogLevel });
    const listen = stringOption(ctx.options, "listen");
    const gateway = await startGateway({ root: rootOf(ctx), logger, ...(listen ? { listen } : {}) });
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
