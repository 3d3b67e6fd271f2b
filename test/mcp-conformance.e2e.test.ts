// The official MCP conformance suite (0.1.13, server scenarios) against every MCP endpoint ivoai offers: the
// gateway's /v1/mcp/context and /v1/memory/mcp, the Web MCP /mcp, and the session router (one source passed
// through, a read-only capability, two sources federated). A bearer-adding proxy stands in for the header
// option the suite lacks; the scenarios that do not apply are the baseline in test/fixtures.
import { type ChildProcess, spawn } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import http from "node:http";
import path from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { startBearerProxy } from "./conformance-proxy.js";
import { writeTree } from "./context-helpers.js";
import {
  BIN,
  createCode,
  enrolledCredential,
  initWithDocs,
  type RunningServer,
  runIvoai,
  startServer,
  tempDir,
} from "./helpers.js";
import { ensureNpmTools } from "./npm-tools.js";
import { obtainTokens } from "./oauth-flow.js";
import { rawPost } from "./raw-http.js";

const CONFORMANCE_VERSION = "0.1.13";
const BASELINE = path.resolve("test/fixtures/conformance-baseline.yml");

/** The scenarios that test the protocol itself rather than the suite's own sample tools, prompts and resources. */
const APPLICABLE = [
  "server-initialize",
  "ping",
  "tools-list",
  "logging-set-level",
  "resources-list",
  "prompts-list",
  "dns-rebinding-protection",
];
/** They call the suite's sample tools; ivoai answers an unknown tool with isError + text, which they accept. */
const VACUOUS = ["tools-call-simple-text", "tools-call-error"];

interface Check {
  id: string;
  name: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | "SKIPPED";
  errorMessage?: string;
  details?: { message?: string };
}

/** Why a check did not succeed, in the suite's words. */
const why = (check: Check): string => check.errorMessage ?? check.details?.message ?? check.name;

interface SuiteRun {
  code: number | null;
  output: string;
  /** Checks by scenario name, as written to <out>/server-<scenario>-<timestamp>/checks.json. */
  scenarios: Map<string, Check[]>;
}

interface Router {
  endpoints: { context: string; memory: string };
  capability: string;
  read_only_capability: string;
  stop(): Promise<void>;
}

/** One line per scenario (its checks' statuses, and why any did not succeed), then the suite's own verdict. */
function report(endpoint: string, run: SuiteRun): string {
  const lines = [...run.scenarios].map(([scenario, checks]) => {
    const notes = checks
      .filter((check) => check.status !== "SUCCESS" && check.status !== "INFO")
      .map((check) => `${check.status} ${check.id}: ${why(check)}`);
    return `  ${scenario}: ${checks.map((check) => check.status).join(",") || "no checks"}${notes.length ? ` (${notes.join("; ")})` : ""}`;
  });
  const verdict = run.output.slice(run.output.indexOf("=== SUMMARY ==="));
  return `${endpoint} (exit ${run.code})\n${lines.sort().join("\n")}\n${verdict}`;
}

/** At most `slots` suite runs at a time (the suite spawns a fresh client per scenario; the machine has 2 cores). */
function limiter(slots: number): <T>(work: () => Promise<T>) => Promise<T> {
  const waiting: (() => void)[] = [];
  let busy = 0;
  return async (work) => {
    if (busy >= slots) await new Promise<void>((resolve) => waiting.push(resolve));
    busy++;
    try {
      return await work();
    } finally {
      busy--;
      waiting.shift()?.();
    }
  };
}

describe("MCP conformance: server scenarios on every endpoint", () => {
  const cleanups: (() => Promise<void>)[] = [];
  const servers: RunningServer[] = [];
  const routers: Router[] = [];
  const targets: Record<string, { url: string; token: string }> = {};
  const slot = limiter(2);
  let tools: string;
  let env: NodeJS.ProcessEnv;
  let baseline: string[];

  const startRouter = (args: string[]): Promise<Router> =>
    new Promise((resolve, reject) => {
      const child: ChildProcess = spawn(process.execPath, [BIN, "router", "serve", "--json", ...args], {
        env: { ...process.env, ...env },
      });
      let stderr = "";
      child.stderr?.on("data", (chunk) => (stderr += chunk));
      const exited = new Promise<void>((done) => child.on("exit", () => done()));
      createInterface({ input: child.stdout as NodeJS.ReadableStream }).once("line", (line) => {
        const ready = JSON.parse(line) as Omit<Router, "stop">;
        resolve({
          ...ready,
          stop: async () => {
            child.kill("SIGTERM");
            await exited;
          },
        });
      });
      void exited.then(() => reject(new Error(`router exited: ${stderr}`)));
    });

  /** Runs the active suite through a fresh bearer proxy; the child sees only the proxy's URL. */
  const runSuite = async (target: { url: string; token: string }): Promise<SuiteRun> => {
    const url = new URL(target.url);
    const proxy = await startBearerProxy({ target: url.origin, token: target.token });
    const out = await tempDir("ivoai-conformance-");
    cleanups.push(out.cleanup);
    try {
      const child = spawn(
        process.execPath,
        [
          path.join(tools, "node_modules/@modelcontextprotocol/conformance/dist/index.js"),
          "server",
          "--url",
          `${proxy.url}${url.pathname}`,
          "--suite",
          "active",
          "--expected-failures",
          BASELINE,
          "-o",
          out.dir,
        ],
        {
          env: { PATH: process.env.PATH ?? "", HOME: out.dir },
          stdio: ["ignore", "pipe", "pipe"],
          // A hung scenario must not outlive the test (30 scenarios take about 10 s here).
          timeout: 600_000,
          killSignal: "SIGKILL",
        },
      );
      let output = "";
      child.stdout.on("data", (chunk) => (output += chunk));
      child.stderr.on("data", (chunk) => (output += chunk));
      const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
      const scenarios = new Map<string, Check[]>();
      for (const entry of await readdir(out.dir)) {
        const name = /^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/.exec(entry)?.[1];
        if (name === undefined) continue;
        scenarios.set(
          name,
          JSON.parse(await readFile(path.join(out.dir, entry, "checks.json"), "utf8")) as Check[],
        );
      }
      return { code, output, scenarios };
    } finally {
      await proxy.close();
    }
  };

  beforeAll(async () => {
    tools = await ensureNpmTools("conformance-server", {
      "@modelcontextprotocol/conformance": CONFORMANCE_VERSION,
    });
    baseline = (parse(await readFile(BASELINE, "utf8")) as { server: string[] }).server;
    const xdg = await tempDir("ivoai-client-");
    cleanups.push(xdg.cleanup);
    env = {
      XDG_CONFIG_HOME: path.join(xdg.dir, "config"),
      XDG_STATE_HOME: path.join(xdg.dir, "state"),
      XDG_DATA_HOME: path.join(xdg.dir, "data"),
      HOME: xdg.dir,
    };
    const roots: Record<string, string> = {};
    for (const name of ["alpha", "beta"]) {
      const made = await tempDir();
      const docs = await tempDir("ivoai-docs-");
      cleanups.push(made.cleanup, docs.cleanup);
      await writeTree(docs.dir, {
        "deploy.md": `# Deploy (${name})\n\nOn ${name} we deploy with the wombat pipeline.`,
        "guides/onboarding.md": `# Onboarding (${name})\n\nAsk the ${name} team for access.`,
      });
      await initWithDocs(made.dir, docs.dir);
      roots[name] = made.dir;
      servers.push(await startServer(made.dir));
    }
    const [alpha, beta] = servers as [RunningServer, RunningServer];
    const bearer = await enrolledCredential(
      alpha.url,
      roots.alpha as string,
      "context:read,memory:read,memory:write",
    );
    const activation = await runIvoai([
      "server",
      "activation",
      "create",
      "--root",
      roots.alpha as string,
      "--json",
    ]);
    const { code: activationCode } = JSON.parse(activation.stdout) as { code: string };
    const { tokens } = await obtainTokens(alpha.url, activationCode, "context:read memory:read memory:write");
    expect(tokens.access_token).toBeTypeOf("string");

    for (const [alias, server] of [
      ["alpha", alpha],
      ["beta", beta],
    ] as const) {
      const { code } = await createCode(roots[alias] as string);
      const added = await runIvoai(
        ["connect", "server", "add", alias, "--url", server.url, "--purpose", alias, "--code-stdin"],
        { env, input: `${code}\n` },
      );
      expect(added.stderr).toBe("");
      expect(added.code).toBe(0);
    }
    const single = await startRouter(["--knowledge-source", "alpha", "--deadline-ms", "10000"]);
    const federated = await startRouter(["--deadline-ms", "10000"]);
    routers.push(single, federated);

    targets["/v1/mcp/context"] = { url: `${alpha.url}/v1/mcp/context`, token: bearer };
    targets["/v1/memory/mcp"] = { url: `${alpha.url}/v1/memory/mcp`, token: bearer };
    targets["/mcp (OAuth)"] = { url: `${alpha.url}/mcp`, token: tokens.access_token };
    targets["router /mcp/context, one source (pass-through)"] = {
      url: single.endpoints.context,
      token: single.capability,
    };
    targets["router /mcp/memory, one source, read-only capability"] = {
      url: single.endpoints.memory,
      token: single.read_only_capability,
    };
    targets["router /mcp/context, two sources (federated)"] = {
      url: federated.endpoints.context,
      token: federated.capability,
    };
    targets["router /mcp/memory, two sources (federated)"] = {
      url: federated.endpoints.memory,
      token: federated.capability,
    };
  }, 900_000);
  afterAll(async () => {
    for (const router of routers) await router.stop();
    for (const server of servers) await server.stop();
    for (const cleanup of cleanups) await cleanup();
  });

  it("lists every active scenario once: applicable, vacuous or in the baseline", async () => {
    expect(baseline.filter((name) => APPLICABLE.includes(name) || VACUOUS.includes(name))).toEqual([]);
    const listed = await new Promise<string>((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [
          path.join(tools, "node_modules/@modelcontextprotocol/conformance/dist/index.js"),
          "list",
          "--server",
        ],
        { stdio: ["ignore", "pipe", "inherit"] },
      );
      let text = "";
      child.stdout.on("data", (chunk) => (text += chunk));
      child.on("error", reject);
      child.on("close", () => resolve(text));
    });
    const pending = ["json-schema-2020-12", "server-sse-polling"];
    const active = [...listed.matchAll(/^ {2}- (\S+)$/gm)]
      .map((match) => match[1] as string)
      .filter((name) => !pending.includes(name));
    expect([...APPLICABLE, ...VACUOUS, ...baseline].sort()).toEqual([...active].sort());
  });

  it("the proxy adds the bearer, and rewrites Host and Origin only when they name the proxy", async () => {
    const seen: http.IncomingHttpHeaders[] = [];
    const echo = http.createServer((req, res) => {
      seen.push(req.headers);
      req.resume().on("end", () => res.writeHead(200, { "content-type": "text/plain" }).end("ok"));
    });
    await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", resolve));
    const target = `http://127.0.0.1:${(echo.address() as { port: number }).port}`;
    const proxy = await startBearerProxy({ target, token: "secret-token" });
    try {
      expect((await rawPost(`${proxy.url}/mcp`, { origin: proxy.url })).status).toBe(200);
      expect(
        (await rawPost(`${proxy.url}/mcp`, { host: `localhost:${new URL(proxy.url).port}` })).status,
      ).toBe(200);
      expect(
        (await rawPost(`${proxy.url}/mcp`, { host: "evil.example.com", origin: "http://evil.example.com" }))
          .status,
      ).toBe(200);
      expect(seen.map((headers) => [headers.host, headers.origin, headers.authorization])).toEqual([
        [new URL(target).host, target, "Bearer secret-token"],
        [new URL(target).host, undefined, "Bearer secret-token"],
        ["evil.example.com", "http://evil.example.com", "Bearer secret-token"],
      ]);
    } finally {
      await proxy.close();
      await new Promise<void>((resolve) => echo.close(() => resolve()));
    }
  });

  it.concurrent.each([
    "/v1/mcp/context",
    "/v1/memory/mcp",
    "/mcp (OAuth)",
    "router /mcp/context, one source (pass-through)",
    "router /mcp/memory, one source, read-only capability",
    "router /mcp/context, two sources (federated)",
    "router /mcp/memory, two sources (federated)",
  ])(
    "passes every applicable scenario on %s",
    async (endpoint) => {
      const target = targets[endpoint];
      if (target === undefined) throw new Error(`no target ${endpoint}`);
      const run = await slot(() => runSuite(target));
      const problems: string[] = [];
      for (const scenario of APPLICABLE) {
        const checks = run.scenarios.get(scenario);
        if (checks === undefined || checks.length === 0) {
          problems.push(`${endpoint} ${scenario}: no checks recorded (the scenario did not run)`);
          continue;
        }
        for (const check of checks) {
          if (check.status !== "SUCCESS" && check.status !== "INFO")
            problems.push(`${endpoint} ${scenario}: ${check.id} ${check.status}: ${why(check)}`);
        }
      }
      expect(problems, report(endpoint, run)).toEqual([]);
      // Exit 0 also means every baseline scenario still fails (none is stale) and no other one fails.
      expect(run.code, report(endpoint, run)).toBe(0);
      expect([...run.scenarios.keys()].sort(), endpoint).toEqual(
        [...APPLICABLE, ...VACUOUS, ...baseline].sort(),
      );
    },
    900_000,
  );
});
