// Runs the built ivoai binary as a child process, the way a user or a service manager would.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

export const BIN = path.resolve("dist/ivoai.mjs");

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export function runIvoai(
  args: readonly string[],
  options: {
    input?: string;
    env?: NodeJS.ProcessEnv /** SIGKILL after this long. */;
    timeoutMs?: number;
    /** Where the command runs; AUTO sessions default to OUTSIDE_REPO (see there). */
    cwd?: string;
  } = {},
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: options.cwd ?? (startsSession(args) ? OUTSIDE_REPO : process.cwd()),
      env: { ...process.env, ...options.env },
      stdio: ["pipe", "pipe", "pipe"],
      ...(options.timeoutMs === undefined
        ? {}
        : { timeout: options.timeoutMs, killSignal: "SIGKILL" as const }),
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
    child.stdin.end(options.input ?? "");
  });
}

/**
 * An AUTO session records the git repository it starts in (a base tree kept under refs/ivoai/sessions/…): tests
 * start theirs outside this checkout, so running the suite leaves the project's repository as it was.
 */
export const OUTSIDE_REPO = tmpdir();

/** The commands that start an AUTO session. */
export function startsSession(args: readonly string[]): boolean {
  return args[0] === "auto" || (args[0] === "session" && (args[1] === "start" || args[1] === "resume"));
}

/** A user's own HOME and XDG roots under `home` (config, data, state, cache), as a fresh machine has them. */
export function homeEnv(
  home: string,
): Record<"HOME" | `XDG_${"CONFIG" | "DATA" | "STATE" | "CACHE"}_HOME`, string> {
  return {
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, ".config"),
    XDG_DATA_HOME: path.join(home, ".local/share"),
    XDG_STATE_HOME: path.join(home, ".local/state"),
    XDG_CACHE_HOME: path.join(home, ".cache"),
  };
}

export async function tempDir(
  prefix = "ivoai-test-",
): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export interface RunningServer {
  url: string;
  child: ChildProcess;
  /** Everything the server wrote so far (logs on stderr, the ready line on stdout). */
  output(): string;
  /** Sends SIGTERM and resolves with the exit status. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * How long a server may take to print its ready line before the test gives up with what it printed: generous
 * for a busy host (it takes a second or two on an idle one), and short of the tests' own 60 s timeout.
 */
const READY_WAIT_MS = 50_000;

/** Starts `ivoai server start` and resolves once it printed its ready line. */
export function startServer(
  root: string,
  extraArgs: readonly string[] = [],
  /** Flags for node itself (e.g. --cpu-prof for a benchmark's profile). */
  nodeArgs: readonly string[] = [],
): Promise<RunningServer> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [...nodeArgs, BIN, "server", "start", "--root", root, ...extraArgs],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let output = "";
    child.stderr.on("data", (chunk) => (output += chunk));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
      child.on("exit", (code, signal) => done({ code, signal })),
    );
    const lines = createInterface({ input: child.stdout });
    let ready = false;
    const gaveUp = setTimeout(() => {
      if (ready) return;
      ready = true;
      child.kill("SIGKILL");
      reject(new Error(`server not ready within ${READY_WAIT_MS} ms; it printed:\n${output}`));
    }, READY_WAIT_MS);
    lines.on("line", (line) => {
      output += `${line}\n`;
      if (ready) return;
      ready = true;
      clearTimeout(gaveUp);
      const event = JSON.parse(line) as { url: string };
      resolve({
        url: event.url,
        child,
        output: () => output,
        stop: (signal = "SIGTERM") => {
          child.kill(signal);
          return exited;
        },
      });
    });
    void exited.then((status) => {
      clearTimeout(gaveUp);
      if (!ready) reject(new Error(`server exited before ready (${JSON.stringify(status)}): ${output}`));
    });
  });
}

export async function initRoot(root: string, extraArgs: readonly string[] = []): Promise<void> {
  const result = await runIvoai([
    "server",
    "init",
    "--root",
    root,
    "--public-url",
    "http://127.0.0.1:0",
    "--listen",
    "127.0.0.1:0",
    ...extraArgs,
  ]);
  if (result.code !== 0) throw new Error(`init failed: ${result.stderr}`);
}

export async function createCode(
  root: string,
  extraArgs: readonly string[] = [],
): Promise<{ id: string; code: string }> {
  const result = await runIvoai(["server", "enrollment", "create", "--root", root, "--json", ...extraArgs]);
  if (result.code !== 0) throw new Error(`enrollment create failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as { id: string; code: string };
}

export async function enroll(url: string, code: string): Promise<Response> {
  return fetch(`${url}/v1/enroll`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ code, client_name: "test" }),
  });
}

/** A fresh bearer credential for the server of `root` (default scopes, or a comma list). */
export async function enrolledCredential(serverUrl: string, root: string, scopes?: string): Promise<string> {
  const { code } = await createCode(root, scopes ? ["--scopes", scopes] : []);
  return ((await (await enroll(serverUrl, code)).json()) as { credential: string }).credential;
}

/** The official MCP client connected to `url` with a bearer and any ivoai headers (session, project). */
export async function connectMcp(
  url: string,
  token: string,
  headers: Record<string, string> = {},
): Promise<Client> {
  const client = new Client({ name: "ivoai-test", version: "1" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${token}`, ...headers } },
    }),
  );
  return client;
}

/** What an ivoai tool returns in structuredContent: its status and data (and, on some tools, telemetry). */
export type ToolEnvelope = { status: string; data: Record<string, unknown> };

/** Calls tool `name` through an MCP client and returns its envelope. */
export async function callTool<E extends ToolEnvelope = ToolEnvelope>(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<E> {
  return (await client.callTool({ name, arguments: args })).structuredContent as E;
}

/** Approves or rejects approval request `id` over HTTP with an approvals:decide bearer, as a person's tool would. */
export function decideApproval(
  serverUrl: string,
  approver: string,
  id: string,
  verb: "approve" | "reject",
): Promise<Response> {
  return fetch(`${serverUrl}/v1/approvals/${id}/${verb}`, {
    method: "POST",
    headers: { authorization: `Bearer ${approver}`, "content-type": "application/json" },
    body: JSON.stringify({ reason: "reviewed" }),
  });
}

/** Proposes a page through `memory_write_page` and approves it as a person would; the approval's response. */
export async function proposeAndApprove(
  serverUrl: string,
  client: Client,
  approver: string,
  page: { path: string; body: string },
): Promise<{ proposed: string; decided: number }> {
  const pending = await callTool(client, "memory_write_page", page);
  const decided = await decideApproval(serverUrl, approver, pending.data.approval_id as string, "approve");
  return { proposed: pending.status, decided: decided.status };
}

/** Registers `docs` as the filesystem connector "docs" of an initialised server tree (no ingest). */
export async function addDocsConnector(root: string, docs: string): Promise<void> {
  const result = await runIvoai([
    "server",
    "connector",
    "add",
    "docs",
    "--type",
    "filesystem",
    "--path",
    docs,
    "--root",
    root,
  ]);
  if (result.code !== 0) throw new Error(`connector add failed: ${result.stderr}`);
}

/** A server tree with one filesystem connector over `docs`, ingested. */
export async function initWithDocs(root: string, docs: string): Promise<void> {
  await initRoot(root);
  await addDocsConnector(root, docs);
  const result = await runIvoai(["server", "ingest", "--root", root]);
  if (result.code !== 0) throw new Error(`ingest failed: ${result.stderr}`);
}

/**
 * `ivoai auto --json` prints JSON Lines: the session's events, then one `result` record. Returns the result
 * and the events, after checking every line is one versioned record.
 */
export function autoJsonLines<T = Record<string, unknown>>(
  stdout: string,
): { result: T; events: { v: number; seq: number; type: string; [key: string]: unknown }[] } {
  const records = stdout
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as { v: number; type: string; seq: number; [key: string]: unknown });
  for (const record of records)
    if (record.v !== 1) throw new Error(`unversioned record: ${JSON.stringify(record)}`);
  const last = records.at(-1);
  if (last?.type !== "result") throw new Error(`no result record at the end of:\n${stdout.slice(-2000)}`);
  return { result: last as unknown as T, events: records.slice(0, -1) };
}
