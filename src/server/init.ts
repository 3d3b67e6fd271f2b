// `ivoai server init`: creates the server tree idempotently, never loosening modes, refusing symlinks and foreign owners.
import { createPrivateKey, X509Certificate } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";
import {
  loadServerConfig,
  type ServerConfig,
  saveServerConfig,
  serverConfigSchema,
} from "../config/server-config.js";
import { type ServerPaths, serverPaths } from "../config/server-paths.js";
import { writeFileAtomic } from "../shared/atomic-file.js";
import { errnoCode, IvoaiError } from "../shared/errors.js";
import { openServerEnrollmentStore } from "./enrollment/store.js";
import {
  evaluateListener,
  type ListenerMode,
  normalizePublicUrl,
  parseListen,
} from "./http/listener-policy.js";
import { sqliteFileOf } from "./store/backend.js";

export interface InitServerOptions {
  root: string;
  publicUrl?: string;
  listen?: string;
  trustedProxyCidrs?: readonly string[];
  tlsCertFile?: string;
  tlsKeyFile?: string;
}

export interface InitServerReport {
  root: string;
  config_file: string;
  created: string[];
  tightened: string[];
  config_written: boolean;
  listener: ListenerMode;
  public_url: string;
}

interface DirPlan {
  dir: string;
  mode: number;
  /** ivoai owns it: it must belong to the current user and its mode is enforced (only ever tightened). */
  owned: boolean;
}

function plan(paths: ServerPaths): DirPlan[] {
  const under = (rel: string) => path.join(paths.root, rel);
  return [
    { dir: under("etc"), mode: 0o755, owned: false },
    { dir: paths.etcDir, mode: 0o755, owned: true },
    { dir: paths.secretsDir, mode: 0o700, owned: true },
    { dir: paths.tlsDir, mode: 0o700, owned: true },
    { dir: under("var"), mode: 0o755, owned: false },
    { dir: under("var/lib"), mode: 0o755, owned: false },
    { dir: paths.dataDir, mode: 0o750, owned: true },
    { dir: paths.enrollmentDir, mode: 0o700, owned: true },
    { dir: paths.contextDir, mode: 0o750, owned: true },
    { dir: paths.memoryDir, mode: 0o750, owned: true },
    { dir: paths.auditDir, mode: 0o700, owned: true },
    { dir: paths.oauthDir, mode: 0o700, owned: true },
    { dir: paths.backupsDir, mode: 0o700, owned: true },
    { dir: under("run"), mode: 0o755, owned: false },
    { dir: paths.runDir, mode: 0o750, owned: true },
  ];
}

export async function initServer(options: InitServerOptions): Promise<InitServerReport> {
  const paths = serverPaths(path.resolve(options.root));
  const existing = await readExistingConfig(paths.configFile);
  const config = mergeConfig(existing, options);
  const tls = await readTlsPair(options);
  config.server.tls = tls ? true : config.server.tls;
  const listener = evaluateListener({
    listen: parseListen(config.server.listen),
    tls: config.server.tls,
    trustedProxyCidrs: config.server.trusted_proxy_cidrs,
  });
  if (config.server.tls && !tls && !(await exists(paths.tlsCert))) {
    throw new IvoaiError(
      "CONFIG_INVALID",
      "TLS is enabled but no certificate is installed: pass --tls-cert and --tls-key",
    );
  }

  const report: InitServerReport = {
    root: paths.root,
    config_file: paths.configFile,
    created: [],
    tightened: [],
    config_written: false,
    listener,
    public_url: config.server.public_url,
  };
  await ensureRoot(paths.root, report);
  for (const entry of plan(paths)) await ensureDir(entry, report);

  if (tls) {
    await writeFileAtomic(paths.tlsCert, tls.cert, { mode: 0o600 });
    await writeFileAtomic(paths.tlsKey, tls.key, { mode: 0o600 });
  }
  if (!existing || JSON.stringify(existing) !== JSON.stringify(config)) {
    await saveServerConfig(paths.configFile, config);
    report.config_written = true;
  }
  // The enrollment store on SQLite (owner-only); a PostgreSQL store is created by the first gateway that opens it.
  if (config.store.backend === "sqlite") {
    const file = sqliteFileOf(paths, "enrollment");
    const created = !(await exists(file));
    await (await openServerEnrollmentStore(paths)).close();
    if (created) report.created.push(file);
  }
  return report;
}

async function readExistingConfig(file: string): Promise<ServerConfig | undefined> {
  try {
    return await loadServerConfig(file);
  } catch (error) {
    if (error instanceof IvoaiError && error.code === "CONFIG_MISSING") return undefined;
    throw error;
  }
}

function mergeConfig(existing: ServerConfig | undefined, options: InitServerOptions): ServerConfig {
  if (!existing && !options.publicUrl) {
    throw new IvoaiError("USAGE", "--public-url is required the first time a server is initialised");
  }
  const base: ServerConfig = existing
    ? structuredClone(existing)
    : serverConfigSchema.parse({ server: { public_url: "http://127.0.0.1" } });
  if (options.publicUrl) base.server.public_url = normalizePublicUrl(options.publicUrl);
  if (options.listen) base.server.listen = options.listen;
  if (options.trustedProxyCidrs?.length) base.server.trusted_proxy_cidrs = [...options.trustedProxyCidrs];
  return base;
}

async function readTlsPair(options: InitServerOptions): Promise<{ cert: Buffer; key: Buffer } | undefined> {
  if (!options.tlsCertFile && !options.tlsKeyFile) return undefined;
  if (!options.tlsCertFile || !options.tlsKeyFile) {
    throw new IvoaiError("USAGE", "--tls-cert and --tls-key go together");
  }
  const [cert, key] = await Promise.all([fs.readFile(options.tlsCertFile), fs.readFile(options.tlsKeyFile)]);
  try {
    if (!new X509Certificate(cert).checkPrivateKey(createPrivateKey(key))) {
      throw new IvoaiError("CONFIG_INVALID", "the TLS key does not belong to the certificate");
    }
  } catch (error) {
    if (error instanceof IvoaiError) throw error;
    throw new IvoaiError("CONFIG_INVALID", "the TLS certificate or key is not valid PEM");
  }
  return { cert, key };
}

async function ensureRoot(root: string, report: InitServerReport): Promise<void> {
  try {
    const stat = await fs.lstat(root);
    if (stat.isSymbolicLink())
      throw new IvoaiError("UNSAFE_PATH", `refusing root ${root}: it is a symbolic link`);
    if (!stat.isDirectory()) throw new IvoaiError("UNSAFE_PATH", `refusing root ${root}: not a directory`);
  } catch (error) {
    if (errnoCode(error) !== "ENOENT") throw error;
    await fs.mkdir(root, { recursive: true, mode: 0o755 });
    report.created.push(root);
  }
}

async function ensureDir(entry: DirPlan, report: InitServerReport): Promise<void> {
  let stat: import("node:fs").Stats;
  try {
    stat = await fs.lstat(entry.dir);
  } catch (error) {
    if (errnoCode(error) !== "ENOENT") throw mapFsError(error, entry.dir);
    try {
      await fs.mkdir(entry.dir, { mode: entry.mode });
      await fs.chmod(entry.dir, entry.mode);
    } catch (mkdirError) {
      throw mapFsError(mkdirError, entry.dir);
    }
    report.created.push(entry.dir);
    return;
  }
  if (stat.isSymbolicLink())
    throw new IvoaiError("UNSAFE_PATH", `refusing ${entry.dir}: it is a symbolic link`);
  if (!stat.isDirectory()) throw new IvoaiError("UNSAFE_PATH", `refusing ${entry.dir}: not a directory`);
  if (!entry.owned) return;
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid) {
    throw new IvoaiError(
      "UNSAFE_PATH",
      `refusing ${entry.dir}: owned by uid ${stat.uid}, not by this user (${uid})`,
    );
  }
  const current = stat.mode & 0o777;
  const wanted = current & entry.mode;
  if (wanted !== current) {
    await fs.chmod(entry.dir, wanted);
    report.tightened.push(entry.dir);
  }
}

function mapFsError(error: unknown, target: string): unknown {
  const code = errnoCode(error);
  if (code === "EACCES" || code === "EPERM") {
    return new IvoaiError(
      "PERMISSION_DENIED",
      `cannot create ${target}: permission denied (use --root DIR or run as the service owner)`,
    );
  }
  return error;
}

async function exists(file: string): Promise<boolean> {
  try {
    await fs.lstat(file);
    return true;
  } catch {
    return false;
  }
}
