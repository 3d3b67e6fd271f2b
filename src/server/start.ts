// Runs the gateway: loads the tree under a root, applies the listener rules and serves until drained.
import { promises as fs } from "node:fs";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { setTimeout as delay } from "node:timers/promises";
import { getRequestListener } from "@hono/node-server";
import { loadServerConfig, type ServerConfig } from "../config/server-config.js";
import { type ServerPaths, serverPaths } from "../config/server-paths.js";
import { IvoaiError } from "../shared/errors.js";
import type { Logger } from "../shared/logger.js";
import { IVOAI_VERSION } from "../shared/version.js";
import { createGatewayApp } from "./app.js";
import { type AuditLog, openAuditLogOn } from "./audit/store.js";
import { type ConsoleStore, openConsoleStoreOn } from "./console/store.js";
import type { Embedder } from "./context/embedder.js";
import { type ContextService, openCatalogue, openContextService } from "./context/service.js";
import { createEnrollmentService, type EnrollmentService } from "./enrollment/service.js";
import { type EnrollmentStore, openServerEnrollmentStore } from "./enrollment/store.js";
import type { ReadinessCheck } from "./health/readiness.js";
import {
  evaluateListener,
  formatListen,
  isLoopbackHost,
  type ListenerMode,
  parseListen,
} from "./http/listener-policy.js";
import { requestErrorResponse } from "./http/request-error.js";
import { loadMemoryIndex, type MemoryIndexLoad } from "./memory/index-load.js";
import { type MemoryService, openMemoryService } from "./memory/service.js";
import type { OAuthStore } from "./oauth/store.js";
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

/** What is open so far, closed again (newest first) if the start fails part-way. */
interface StartCleanup {
  /** Registers something to close on failure, and returns it. */
  keep<T extends { close(): unknown }>(part: T): T;
  /** Registers a closing step on failure. */
  onFailure(close: () => unknown): void;
  /** Closes everything opened so far, then rethrows `error`. */
  failed(error: unknown): Promise<never>;
}

/** Pools and listening connections must not outlive a failed start in a process that goes on (tests, the demo). */
function startCleanup(): StartCleanup {
  const opened: (() => unknown)[] = [];
  return {
    keep(part) {
      opened.push(() => part.close());
      return part;
    },
    onFailure(close) {
      opened.push(close);
    },
    async failed(error) {
      for (const close of opened.reverse()) await Promise.resolve(close()).catch(() => {});
      throw error;
    },
  };
}

/** Everything the gateway serves, opened in order. */
interface GatewayParts {
  oauth: OAuthStore;
  store: EnrollmentStore;
  enrollment: EnrollmentService;
  audit: AuditLog;
  consoleStore: ConsoleStore;
  context: ContextService;
  memory: OpenedMemory;
  sweepTimer: NodeJS.Timeout;
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
  const cleanup = startCleanup();
  const parts = await openParts(options, paths, config, cleanup);
  let boundUrl = "";
  const publicUrl = publicUrlOf(config, () => boundUrl);
  const app = createGatewayApp({
    config,
    paths,
    enrollment: parts.enrollment,
    logger: options.logger,
    listenerMode: mode,
    listenHost: listen.host,
    publicUrl,
    context: parts.context,
    memory: parts.memory.service ?? null,
    audit: parts.audit,
    oauth: parts.oauth,
    console: parts.consoleStore,
    readiness: readinessChecks(parts),
  });
  const listener = getRequestListener(app.fetch, {
    errorHandler: (error) => requestErrorResponse(error, options.logger),
  });
  const server = await createServer(mode, config, paths, listener).catch(cleanup.failed);
  await listenOn(server, listen).catch(cleanup.failed);
  const address = server.address() as AddressInfo;
  const bound = { host: address.address, port: address.port };
  boundUrl = `${mode === "tls" ? "https" : "http"}://${formatListen(bound)}`;
  options.logger.info("gateway listening", { listen: formatListen(bound), mode, public_url: publicUrl() });
  await pid?.update({ url: boundUrl, public_url: publicUrl() });
  return {
    url: boundUrl,
    publicUrl: publicUrl(),
    listen: formatListen(bound),
    mode,
    close: closeOnce(() => stopGateway(server, config, parts, options.logger).finally(() => pid?.release())),
  };
}

/** The public base URL: a loopback one with port 0 (the demo's) follows the port the OS picked. */
function publicUrlOf(config: ServerConfig, boundUrl: () => string): () => string {
  const configured = new URL(config.server.public_url);
  const followsBound = configured.port === "0" && isLoopbackHost(configured.hostname);
  return () => (followsBound ? boundUrl() : configured.origin);
}

/** The stores and services, in order: a failure closes what was opened before it. */
async function openParts(
  options: StartGatewayOptions,
  paths: ServerPaths,
  config: ServerConfig,
  { keep, onFailure, failed }: StartCleanup,
): Promise<GatewayParts> {
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
  const memory = await openMemory(options, paths, config, audit, context.embedder);
  if (memory.service) keep(memory.service);
  const sweepTimer = startSweep(memory, config, options.logger);
  onFailure(() => clearInterval(sweepTimer));
  // Load the lexical index before serving, so the first search does not pay for it; an onnx model whose files
  // do not match their pins refuses the start here.
  await context.searcher.refresh().catch(failed);
  await context.vectors?.ready().catch(failed);
  if (memory.service) {
    // Memory's index loads after context's, without holding the start for long: a small memory is ready when
    // the gateway listens, a large one without a usable snapshot is served once loaded (/ready says so).
    memory.load = loadMemoryIndex(memory.service.searcher, options.logger);
    onFailure(() => memory.load?.stop());
    await Promise.race([memory.load.settled, delay(MEMORY_LOAD_GRACE_MS, undefined, { ref: false })]);
    catchUpVectors(memory.service, options.logger);
  }
  return { oauth, store, enrollment, audit, consoleStore, context, memory, sweepTimer };
}

/** How long a start waits for memory's index before it serves without it (the index goes on loading). */
const MEMORY_LOAD_GRACE_MS = 1_000;

/** The memory service, or why it could not be opened: memory failing degrades the server, /ready names it. */
interface OpenedMemory {
  service: MemoryService | undefined;
  error: string;
  /** Its index's first load, started once context is loaded. */
  load?: MemoryIndexLoad;
}

async function openMemory(
  options: StartGatewayOptions,
  paths: ServerPaths,
  config: ServerConfig,
  audit: AuditLog,
  embedder: Embedder | undefined,
): Promise<OpenedMemory> {
  let memory: MemoryService | undefined;
  try {
    memory = await openMemoryService({
      paths,
      config,
      logger: options.logger,
      audit,
      listen: true,
      persistIndex: true,
      ...(embedder ? { embedder } : {}),
    });
    await memory.sweep();
    return { service: memory, error: "" };
  } catch (error) {
    await memory?.close().catch(() => {});
    const message = error instanceof Error ? error.message : String(error);
    options.logger.error("memory service unavailable", { error: message });
    return { service: undefined, error: message };
  }
}

/**
 * Memory's vectors catch up in the background: the first time a model is configured, every page is embedded,
 * which must not hold the start (searches meanwhile rank with what is embedded so far).
 */
function catchUpVectors(memory: MemoryService, logger: Logger): void {
  const { vectors } = memory;
  if (!vectors) return;
  vectors.refresh().then(
    (done) => logger.info("memory vectors ready", { index: vectors.name, ...done }),
    (error: unknown) =>
      logger.warn("memory vectors could not catch up", {
        index: vectors.name,
        error: error instanceof Error ? error.message : String(error),
      }),
  );
}

function startSweep(memory: OpenedMemory, config: ServerConfig, logger: Logger): NodeJS.Timeout {
  const timer = setInterval(() => {
    memory.service?.sweep().catch((error: unknown) => {
      logger.error("memory sweep failed", { error: error instanceof Error ? error.message : String(error) });
    });
  }, config.memory.sweep_interval);
  timer.unref();
  return timer;
}

function readinessChecks({ store, context, memory }: GatewayParts): ReadinessCheck[] {
  return [
    { name: "enrollment", critical: true, check: async () => void (await store.read()) },
    { name: "context", critical: true, check: async () => void (await context.catalogue.generation()) },
    {
      name: "memory",
      critical: false,
      check: async () => {
        if (!memory.service) throw new Error(memory.error || "not opened");
        await memory.service.store.ping();
        await memory.load?.check();
      },
    },
  ];
}

async function createServer(
  mode: ListenerMode,
  config: ServerConfig,
  paths: ServerPaths,
  listener: http.RequestListener,
): Promise<http.Server> {
  const serverOptions: http.ServerOptions = {
    headersTimeout: config.limits.headers_timeout_ms,
    requestTimeout: config.limits.request_timeout_ms,
    keepAliveTimeout: config.limits.keep_alive_timeout_ms,
    maxHeaderSize: 16 * 1024,
  };
  const server =
    mode === "tls"
      ? https.createServer(
          { ...serverOptions, cert: await fs.readFile(paths.tlsCert), key: await fs.readFile(paths.tlsKey) },
          listener,
        )
      : http.createServer(serverOptions, listener);
  server.timeout = config.limits.idle_timeout_ms;
  return server;
}

function listenOn(server: http.Server, listen: ReturnType<typeof parseListen>): Promise<void> {
  return new Promise<void>((resolve, reject) => {
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
  });
}

/** The same promise for every call. */
function closeOnce(close: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => {
    closing ??= close();
    return closing;
  };
}

/** Stops accepting, drains, then closes every part. */
async function stopGateway(
  server: http.Server,
  config: ServerConfig,
  parts: GatewayParts,
  logger: Logger,
): Promise<void> {
  await drain(server, config.limits.drain_timeout_ms);
  clearInterval(parts.sweepTimer);
  parts.memory.load?.stop();
  // The audit log first: its pending events are written even if closing something else throws.
  await parts.audit.close();
  await Promise.all([
    parts.store.close(),
    parts.oauth.close(),
    parts.context.close(),
    parts.consoleStore.close(),
    parts.memory.service?.close().catch(() => {}),
  ]);
  logger.info("gateway stopped");
}

async function drain(server: http.Server, timeoutMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const timer = setTimeout(() => server.closeAllConnections(), timeoutMs);
  await closed;
  clearTimeout(timer);
}
