// Runs the gateway: loads the tree under a root, applies the listener rules and serves until drained.
import { promises as fs } from "node:fs";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";
import { loadServerConfig, type ServerConfig } from "../config/server-config.js";
import { type ServerPaths, serverPaths } from "../config/server-paths.js";
import { IvoaiError } from "../shared/errors.js";
import type { Logger } from "../shared/logger.js";
import { IVOAI_VERSION } from "../shared/version.js";
import { createGatewayApp } from "./app.js";
import { openAuditLogOn } from "./audit/store.js";
import { openConsoleStoreOn } from "./console/store.js";
import { openCatalogue, openContextService } from "./context/service.js";
import { createEnrollmentService } from "./enrollment/service.js";
import { openServerEnrollmentStore } from "./enrollment/store.js";
import {
  evaluateListener,
  formatListen,
  isLoopbackHost,
  type ListenerMode,
  parseListen,
} from "./http/listener-policy.js";
import { requestErrorResponse } from "./http/request-error.js";
import { type MemoryService, openMemoryService } from "./memory/service.js";
import { openOAuthStoreOf } from "./oauth/store-open.js";
import { claimPidFile, type PidFileHandle } from "./ops/pid-file.js";
import { resolveStoreBackend } from "./store/backend.js";

export interface StartGatewayOptions {
  root: string;
  logger: Logger;
  /** Overrides the configured listen address (e.g. port 0 for tests). */
  listen?: string;
  /** Claim the root through run/ivoai/server.pid: refuse a second server, found by `server status|stop`. */
  pidFile?: boolean;
}

export interface RunningGateway {
  url: string;
  publicUrl: string;
  listen: string;
  mode: ListenerMode;
  /** Stops accepting, lets in-flight requests finish within the drain bound, then closes. */
  close(): Promise<void>;
}

export async function startGateway(options: StartGatewayOptions): Promise<RunningGateway> {
  const paths = serverPaths(options.root);
  const config = await loadServerConfig(paths.configFile);
  const pid = options.pidFile
    ? await claimPidFile(paths, { version: IVOAI_VERSION, now: new Date() })
    : undefined;
  try {
    return await serveGateway(options, paths, config, pid);
  } catch (error) {
    await pid?.release();
    throw error;
  }
}

async function serveGateway(
  options: StartGatewayOptions,
  paths: ServerPaths,
  config: ServerConfig,
  pid: PidFileHandle | undefined,
): Promise<RunningGateway> {
  const listen = parseListen(options.listen ?? config.server.listen);
  const mode = evaluateListener({
    listen,
    tls: config.server.tls,
    trustedProxyCidrs: config.server.trusted_proxy_cidrs,
  });
  // What is open so far, closed again (newest first) if the start fails part-way: pools and listening
  // connections must not outlive a failed start in a process that goes on (tests, the demo).
  const opened: (() => unknown)[] = [];
  const keep = <T extends { close(): unknown }>(part: T): T => {
    opened.push(() => part.close());
    return part;
  };
  const failed = async (error: unknown): Promise<never> => {
    for (const close of opened.reverse()) await Promise.resolve(close()).catch(() => {});
    throw error;
  };
  // First: they may wait for PostgreSQL or refuse a newer schema, before anything else is open.
  const oauth = keep(await openOAuthStoreOf(paths));
  const store = keep(await openServerEnrollmentStore(paths).catch(failed));
  const enrollment = createEnrollmentService({ store });
  const backend = await resolveStoreBackend(paths).catch(failed);
  const audit = keep(
    await openAuditLogOn(backend, paths, {
      onWriteError: (error, lost) =>
        options.logger.error("audit write failed", { error: error.message, lost }),
    }).catch(failed),
  );
  const consoleStore = keep(await openConsoleStoreOn(backend, paths).catch(failed));
  const catalogue = await openCatalogue(paths, { listen: true }).catch(failed);
  const context = keep(
    openContextService({ paths, config, logger: options.logger, persistIndex: true, catalogue }),
  );
  // Memory failing to open degrades the server (context keeps working); /ready names it.
  let memory: MemoryService | undefined;
  let memoryError = "not opened";
  try {
    memory = await openMemoryService({ paths, config, logger: options.logger, audit, listen: true });
    await memory.searcher.refresh();
    await memory.sweep();
  } catch (error) {
    await memory?.close().catch(() => {});
    memory = undefined;
    memoryError = error instanceof Error ? error.message : String(error);
    options.logger.error("memory service unavailable", { error: memoryError });
  }
  if (memory) keep(memory);
  const sweepTimer = setInterval(() => {
    memory?.sweep().catch((error: unknown) => {
      options.logger.error("memory sweep failed", {
        error: error instanceof Error ? error.message : String(error),
      });
    });
  }, config.memory.sweep_interval);
  sweepTimer.unref();
  opened.push(() => clearInterval(sweepTimer));
  // Load the lexical index before serving, so the first search does not pay for it.
  await context.searcher.refresh().catch(failed);

  let boundUrl = "";
  const configuredPublic = new URL(config.server.public_url);
  // A loopback public URL with port 0 (the demo's) follows the port the OS picked.
  const followsBound = configuredPublic.port === "0" && isLoopbackHost(configuredPublic.hostname);
  const publicUrl = () => (followsBound ? boundUrl : configuredPublic.origin);

  const app = createGatewayApp({
    config,
    paths,
    enrollment,
    logger: options.logger,
    listenerMode: mode,
    listenHost: listen.host,
    publicUrl,
    context,
    memory: memory ?? null,
    audit,
    oauth,
    console: consoleStore,
    readiness: [
      { name: "enrollment", critical: true, check: async () => void (await store.read()) },
      { name: "context", critical: true, check: async () => void (await context.catalogue.generation()) },
      {
        name: "memory",
        critical: false,
        check: async () => {
          if (!memory) throw new Error(memoryError);
          await memory.store.ping();
        },
      },
    ],
  });
  const listener = getRequestListener(app.fetch, {
    errorHandler: (error) => requestErrorResponse(error, options.logger),
  });
  const serverOptions: http.ServerOptions = {
    headersTimeout: config.limits.headers_timeout_ms,
    requestTimeout: config.limits.request_timeout_ms,
    keepAliveTimeout: config.limits.keep_alive_timeout_ms,
    maxHeaderSize: 16 * 1024,
  };
  const server =
    mode === "tls"
      ? https.createServer(
          {
            ...serverOptions,
            cert: await fs.readFile(paths.tlsCert).catch(failed),
            key: await fs.readFile(paths.tlsKey).catch(failed),
          },
          listener,
        )
      : http.createServer(serverOptions, listener);
  server.timeout = config.limits.idle_timeout_ms;

  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) => {
      reject(
        new IvoaiError(
          "LISTENER_REFUSED",
          `cannot listen on ${formatListen(listen)}: ${error.code ?? error.message}`,
          {
            cause: error,
          },
        ),
      );
    });
    server.listen(listen.port, listen.host, () => resolve());
  }).catch(failed);
  const address = server.address() as AddressInfo;
  const bound = { host: address.address, port: address.port };
  boundUrl = `${mode === "tls" ? "https" : "http"}://${formatListen(bound)}`;
  options.logger.info("gateway listening", { listen: formatListen(bound), mode, public_url: publicUrl() });
  await pid?.update({ url: boundUrl, public_url: publicUrl() });

  let closing: Promise<void> | undefined;
  return {
    url: boundUrl,
    publicUrl: publicUrl(),
    listen: formatListen(bound),
    mode,
    close() {
      closing ??= drain(server, config.limits.drain_timeout_ms)
        .then(async () => {
          clearInterval(sweepTimer);
          // The audit log first: its pending events are written even if closing something else throws.
          await audit.close();
          await Promise.all([
            store.close(),
            oauth.close(),
            context.close(),
            consoleStore.close(),
            memory?.close().catch(() => {}),
          ]);
          options.logger.info("gateway stopped");
        })
        .finally(() => pid?.release());
      return closing;
    },
  };
}

async function drain(server: http.Server, timeoutMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const timer = setTimeout(() => server.closeAllConnections(), timeoutMs);
  await closed;
  clearTimeout(timer);
}
