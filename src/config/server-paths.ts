// The server's file tree (seed 000, "Estrutura"), placed under one root so demos and tests run unprivileged.
import path from "node:path";

export interface ServerPaths {
  root: string;
  etcDir: string;
  configFile: string;
  secretsDir: string;
  tlsDir: string;
  tlsCert: string;
  tlsKey: string;
  dataDir: string;
  enrollmentDir: string;
  enrollmentState: string;
  contextDir: string;
  memoryDir: string;
  auditDir: string;
  oauthDir: string;
  /** The OAuth store (Web MCP clients, grants, token hashes). */
  oauthDb: string;
  backupsDir: string;
  runDir: string;
  /** The running server's pid file (JSON), written atomically once it holds the root. */
  pidFile: string;
  /** Serialises claiming the pid file between two starts. */
  pidLock: string;
}

/** The root from `--root`, else `IVOAI_SERVER_ROOT`, else `/` (the production paths). */
export function resolveServerRoot(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(flag ?? env.IVOAI_SERVER_ROOT ?? "/");
}

export function serverPaths(root: string): ServerPaths {
  const etcDir = path.join(root, "etc/ivoai");
  const secretsDir = path.join(etcDir, "secrets");
  const tlsDir = path.join(secretsDir, "tls");
  const dataDir = path.join(root, "var/lib/ivoai");
  const enrollmentDir = path.join(dataDir, "enrollment");
  const runDir = path.join(root, "run/ivoai");
  return {
    root,
    etcDir,
    configFile: path.join(etcDir, "server.toml"),
    secretsDir,
    tlsDir,
    tlsCert: path.join(tlsDir, "cert.pem"),
    tlsKey: path.join(tlsDir, "key.pem"),
    dataDir,
    enrollmentDir,
    enrollmentState: path.join(enrollmentDir, "state.json"),
    contextDir: path.join(dataDir, "context"),
    memoryDir: path.join(dataDir, "memory"),
    auditDir: path.join(dataDir, "audit"),
    oauthDir: path.join(dataDir, "oauth"),
    oauthDb: path.join(dataDir, "oauth", "oauth.sqlite"),
    backupsDir: path.join(dataDir, "backups"),
    runDir,
    pidFile: path.join(runDir, "server.pid"),
    pidLock: path.join(runDir, "server.pid.lock"),
  };
}
