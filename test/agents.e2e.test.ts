// The launchers with fake codex/claude/opencode executables honouring the real injection contracts:
// knowledge flows from a real server, no token in argv, exit statuses and signals, cleanup, side-by-side sessions.
import { spawn } from "node:child_process";
import { access, chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import net, { type AddressInfo, type Socket } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeTree } from "./context-helpers.js";
import {
  BIN,
  createCode,
  enroll,
  initWithDocs,
  type RunningServer,
  runIvoai,
  startServer,
  tempDir,
} from "./helpers.js";

const FAKE = path.resolve("test/fixtures/fake-agent.mjs");

interface AgentRecord {
  name: string;
  argv: string[];
  env: Record<string, string>;
  files: { mcpConfig?: unknown; mcpConfigPath?: string; settings?: unknown };
  signals: string[];
  search: string | null;
  hook: { status: number } | null;
  waiting?: boolean;
}

/** Runs ivoai to its end, or kills it after `boundMs` and reports it hung. */
function boundedLaunch(args: string[], env: NodeJS.ProcessEnv, boundMs = 20_000): Promise<number | string> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const bound = setTimeout(() => child.kill("SIGKILL"), boundMs);
    child.on("exit", (code, signal) => {
      clearTimeout(bound);
      resolve(signal === "SIGKILL" ? `hung: ${stderr}` : (code ?? `${signal}: ${stderr}`));
    });
  });
}

describe("agent launchers", () => {
  const cleanups: (() => Promise<void>)[] = [];
  const servers: Record<string, { root: string; server: RunningServer }> = {};
  let work: string;
  let env: NodeJS.ProcessEnv;
  let recordFile: string;
  const ivoai = (args: string[], extra: NodeJS.ProcessEnv = {}) =>
    runIvoai(args, { env: { ...env, ...extra } });
  const record = async () => JSON.parse(await readFile(recordFile, "utf8")) as AgentRecord;

  beforeAll(async () => {
    const made = await tempDir("ivoai-agents-");
    cleanups.push(made.cleanup);
    work = made.dir;
    const bin = path.join(work, "bin");
    await mkdir(bin);
    for (const name of ["codex", "claude", "opencode"]) {
      await writeFile(
        path.join(bin, name),
        `#!/bin/sh\nFAKE_AGENT_NAME=${name} exec "${process.execPath}" "${FAKE}" "$@"\n`,
      );
      await chmod(path.join(bin, name), 0o755);
    }
    recordFile = path.join(work, "record.json");
    env = {
      HOME: path.join(work, "home"),
      XDG_CONFIG_HOME: path.join(work, "config"),
      XDG_STATE_HOME: path.join(work, "state"),
      XDG_DATA_HOME: path.join(work, "data"),
      PATH: `${bin}:${process.env.PATH}`,
      FAKE_AGENT_RECORD: recordFile,
      FAKE_LOGIN_MARK: path.join(work, "logged-in"),
    };
    await mkdir(env.HOME as string);
    for (const name of ["acme", "mindsite"]) {
      const root = await tempDir();
      const docs = await tempDir("ivoai-docs-");
      cleanups.push(root.cleanup, docs.cleanup);
      await writeTree(docs.dir, {
        "deploy.md": `# Deploy at ${name}\n\nThe ${name} team deploys with the wombat pipeline.`,
      });
      await initWithDocs(root.dir, docs.dir);
      servers[name] = { root: root.dir, server: await startServer(root.dir) };
      const { code } = await createCode(root.dir);
      const added = await runIvoai(
        [
          "connect",
          "server",
          "add",
          name,
          "--url",
          servers[name].server.url,
          "--purpose",
          name,
          "--code-stdin",
        ],
        { env, input: code },
      );
      expect(added.code).toBe(0);
    }
  });
  afterAll(async () => {
    for (const { server } of Object.values(servers)) await server.stop();
    for (const cleanup of cleanups) await cleanup();
  });

  it("gives codex the router per process: knowledge flows, the token stays out of argv", async () => {
    const result = await ivoai(["codex", "--knowledge-source", "acme", "--", "exec", "hello"], {
      FAKE_AGENT_QUERY: "wombat pipeline",
    });
    expect(result.code).toBe(0);
    const seen = await record();
    expect(seen.search).toContain("Deploy at acme");
    expect(seen.argv.slice(-2)).toEqual(["exec", "hello"]);
    expect(seen.argv).toContain('mcp_servers.ivoai-context.bearer_token_env_var="IVOAI_ROUTER_TOKEN"');
    const capability = seen.env.IVOAI_ROUTER_TOKEN as string;
    expect(capability).toMatch(/^ivoai_cap_/);
    expect(seen.argv.join(" ")).not.toContain(capability);
    expect(JSON.stringify(seen)).not.toMatch(/ivoai_cred_/);
    const sessions = (
      JSON.parse((await ivoai(["session", "list", "--json"])).stdout) as {
        sessions: {
          id: string;
          agent: string;
          status: string;
          exit_code: number;
          knowledge_sources: string[];
          compression: { effective: string; reason: string };
        }[];
      }
    ).sessions;
    expect(sessions[0]).toMatchObject({
      agent: "codex",
      status: "exited",
      exit_code: 0,
      knowledge_sources: ["acme"],
    });
    expect(sessions[0]?.compression.reason).toMatch(/memory\/context active/);
    const shown = await ivoai(["session", "show", sessions[0]?.id as string]);
    expect(shown.stdout).toContain("effective direct");
    const stored = await readFile(
      path.join(env.XDG_STATE_HOME as string, "ivoai/sessions", `${sessions[0]?.id}.json`),
      "utf8",
    );
    expect(stored).not.toContain(capability);
    expect(stored).not.toContain("exec");
  });

  it("gives claude a private MCP config and hooks, removed at exit; the hook records metadata only", async () => {
    const result = await ivoai(["claude", "--knowledge-source", "acme", "--", "-p", "hi"], {
      FAKE_AGENT_QUERY: "wombat",
      FAKE_AGENT_RUN_HOOK: "1",
    });
    expect(result.code).toBe(0);
    const seen = await record();
    expect(seen.search).toContain("Deploy at acme");
    // The literal placeholder Claude expands itself at connect time.
    expect(JSON.stringify(seen.files.mcpConfig)).toContain(["$", "{IVOAI_ROUTER_TOKEN}"].join(""));
    expect(seen.argv).toContain("--append-system-prompt");
    expect(seen.hook?.status).toBe(0);
    await expect(access(seen.files.mcpConfigPath as string)).rejects.toThrow(/ENOENT/);

    const acme = servers.acme as { root: string; server: RunningServer };
    const eventsOf = async (credential: string) => {
      const response = await fetch(
        `${acme.server.url}/v1/memory/events?session_id=${seen.env.IVOAI_SESSION_ID}`,
        { headers: { authorization: `Bearer ${credential}` } },
      );
      return response.ok
        ? ((await response.json()) as { events: { kind: string; data: Record<string, unknown> }[] }).events
        : undefined;
    };
    // Events belong to the credential that recorded them: the client's own acme credential.
    const secrets = JSON.parse(
      await readFile(path.join(env.XDG_CONFIG_HOME as string, "ivoai/secrets.json"), "utf8"),
    ) as { servers: Record<string, { credential: string }> };
    const events = (
      await Promise.all(Object.values(secrets.servers).map((entry) => eventsOf(entry.credential)))
    ).filter((found) => found !== undefined);
    expect(events).toEqual([[expect.objectContaining({ kind: "prompt_submitted", data: { chars: 18 } })]]);
    expect(JSON.stringify(events)).not.toContain("secret prompt text");
    const { code } = await createCode(acme.root);
    const { credential } = (await (await enroll(acme.server.url, code)).json()) as { credential: string };
    expect(await eventsOf(credential)).toEqual([]);
  });

  it("gives opencode its config through OPENCODE_CONFIG_CONTENT", async () => {
    expect(
      (await ivoai(["opencode", "--knowledge-source", "mindsite"], { FAKE_AGENT_QUERY: "wombat" })).code,
    ).toBe(0);
    const seen = await record();
    expect(seen.search).toContain("Deploy at mindsite");
    expect(seen.env.OPENCODE_CONFIG_CONTENT).toContain("{env:IVOAI_ROUTER_TOKEN}");
    expect(seen.env.OPENCODE_CONFIG_CONTENT).not.toContain(seen.env.IVOAI_ROUTER_TOKEN as string);
  });

  it("runs two sessions side by side, each seeing only its own sources, without touching global config", async () => {
    const [a, b] = await Promise.all([
      ivoai(["codex", "--knowledge-source", "acme"], {
        FAKE_AGENT_QUERY: "wombat",
        FAKE_AGENT_RECORD: `${recordFile}.a`,
      }),
      ivoai(["claude", "--knowledge-source", "mindsite"], {
        FAKE_AGENT_QUERY: "wombat",
        FAKE_AGENT_RECORD: `${recordFile}.b`,
      }),
    ]);
    expect([a.code, b.code]).toEqual([0, 0]);
    const first = JSON.parse(await readFile(`${recordFile}.a`, "utf8")) as AgentRecord;
    const second = JSON.parse(await readFile(`${recordFile}.b`, "utf8")) as AgentRecord;
    expect(first.search).toContain("Deploy at acme");
    expect(first.search).not.toContain("Deploy at mindsite");
    expect(second.search).toContain("Deploy at mindsite");
    expect(second.search).not.toContain("Deploy at acme");
    for (const file of [".codex", ".claude", ".claude.json", ".config/opencode"]) {
      await expect(access(path.join(env.HOME as string, file))).rejects.toThrow(/ENOENT/);
    }
  });

  it("propagates the agent's exit status and death by signal", async () => {
    expect((await ivoai(["codex", "--knowledge-source", "acme"], { FAKE_AGENT_EXIT: "7" })).code).toBe(7);
    expect((await ivoai(["claude"], { FAKE_AGENT_SIGNAL: "SIGTERM" })).code).toBe(128 + 15);
  });

  it("forwards signals to the agent, escalates TERM to KILL within a bound, and closes the router", async () => {
    const run = (extra: NodeJS.ProcessEnv) => {
      const child = spawn(process.execPath, [BIN, "codex", "--knowledge-source", "acme"], {
        env: { ...process.env, ...env, ...extra },
      });
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
      return { child, exited };
    };
    const waiting = async () => {
      for (;;) {
        try {
          const seen = await record();
          if (seen.waiting) return seen;
        } catch {
          // not written yet
        }
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    await writeFile(recordFile, "{}");
    const polite = run({ FAKE_AGENT_WAIT_SIGNAL: "SIGTERM", FAKE_AGENT_EXIT: "143" });
    const ready = await waiting();
    // One at a time: a process handles pending signals in signal-number order, not in sending order.
    const received = async (count: number) => {
      while ((await record()).signals.length < count) await new Promise((resolve) => setImmediate(resolve));
    };
    polite.child.kill("SIGWINCH");
    await received(1);
    polite.child.kill("SIGINT");
    await received(2);
    polite.child.kill("SIGTERM");
    expect(await polite.exited).toBe(143);
    expect((await record()).signals).toEqual(["SIGWINCH", "SIGINT", "SIGTERM"]);
    await expect(fetch(ready.env.IVOAI_ROUTER_HOOKS_URL as string, { method: "POST" })).rejects.toThrow();

    await writeFile(recordFile, "{}");
    const unyielding = run({ FAKE_AGENT_WAIT_SIGNAL: "SIGUSR2", IVOAI_KILL_AFTER_MS: "300" });
    await waiting();
    // The agent waits for SIGUSR2 forever: only ivoai's KILL after 300 ms ends it (else the test times out).
    unyielding.child.kill("SIGTERM");
    expect(await unyielding.exited).toBe(128 + 9);
  });

  for (const [setup, knowledge] of [
    ["without servers", []],
    ["with servers", ["acme", "mindsite"]],
  ] as const) {
    it(`returns the status of an agent that exits at once, 100 times ${setup}, recorded exited`, {
      timeout: 600_000,
    }, async () => {
      const instant = path.join(work, "instant-bin");
      await mkdir(instant, { recursive: true });
      await writeFile(path.join(instant, "codex"), "#!/bin/sh\nexit 5\n");
      await chmod(path.join(instant, "codex"), 0o755);
      const extra = {
        PATH: `${instant}:${env.PATH}`,
        XDG_CONFIG_HOME:
          knowledge.length > 0 ? (env.XDG_CONFIG_HOME as string) : path.join(work, "empty-config"),
        XDG_STATE_HOME: path.join(work, `race-state-${setup.replace(/ /g, "-")}`),
      };
      // Four at a time; no new launch starts after a wrong status (a hung launch is killed at its bound).
      const statuses: (number | string)[] = [];
      let started = 0;
      const worker = async () => {
        while (started < 100 && !statuses.some((status) => status !== 5)) {
          started += 1;
          statuses.push(await boundedLaunch(["codex"], { ...env, ...extra }));
        }
      };
      await Promise.all([worker(), worker(), worker(), worker()]);
      expect(statuses).toEqual(Array(100).fill(5));
      const sessions = (
        JSON.parse((await ivoai(["session", "list", "--json"], extra)).stdout) as {
          sessions: {
            status: string;
            exit_code: number | null;
            live: boolean;
            knowledge_sources: string[];
          }[];
        }
      ).sessions;
      expect(sessions).toHaveLength(100);
      for (const session of sessions) {
        expect(session).toMatchObject({ status: "exited", exit_code: 5, live: false });
        expect([...session.knowledge_sources].sort()).toEqual(knowledge);
      }
    });
  }

  it("ends at once on SIGTERM while the launch waits for a stalled knowledge source", async () => {
    const held: Socket[] = [];
    let reached = () => {};
    const connected = new Promise<void>((resolve) => {
      reached = resolve;
    });
    // Accepts connections and never answers: discovery of this source stalls until its deadline.
    const stalled = net.createServer((socket) => {
      held.push(socket);
      reached();
    });
    await new Promise<void>((resolve) => stalled.listen(0, "127.0.0.1", resolve));
    const config = path.join(work, "stalled-config");
    await mkdir(path.join(config, "ivoai"), { recursive: true, mode: 0o700 });
    await writeFile(
      path.join(config, "ivoai/config.toml"),
      `[servers.srv_stalled]\nalias = "stalled"\npurpose = "stalled"\nurl = "http://127.0.0.1:${(stalled.address() as AddressInfo).port}"\n`,
      { mode: 0o600 },
    );
    await writeFile(
      path.join(config, "ivoai/secrets.json"),
      JSON.stringify({ schema: 2, servers: { srv_stalled: { credential: "ivoai_cred_stalled" } } }),
      { mode: 0o600 },
    );
    await writeFile(recordFile, "{}");
    try {
      // Discovery would wait ten minutes: a launch that ends within the test's time ended on the signal.
      const child = spawn(process.execPath, [BIN, "codex", "--knowledge-source", "stalled"], {
        env: { ...process.env, ...env, XDG_CONFIG_HOME: config, IVOAI_READY_TIMEOUT_MS: "600000" },
        stdio: "ignore",
      });
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
      await connected;
      child.kill("SIGTERM");
      expect(await exited).toBe(128 + 15);
      expect(await readFile(recordFile, "utf8")).toBe("{}");
    } finally {
      for (const socket of held) socket.destroy();
      await new Promise((resolve) => stalled.close(resolve));
    }
  });

  it("fails before start for an unavailable selected source; starts directly when nothing is connected", async () => {
    await writeFile(recordFile, "{}");
    const missing = await ivoai(["codex", "--knowledge-source", "nosuch"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/not connected/);
    expect(await readFile(recordFile, "utf8")).toBe("{}");

    const bare = { XDG_CONFIG_HOME: path.join(work, "empty-config") };
    const direct = await ivoai(["codex", "--compression", "headroom"], bare);
    expect(direct.code).toBe(0);
    expect((await record()).argv).toEqual([]);
    const sessions = (
      JSON.parse((await ivoai(["session", "list", "--json"], bare)).stdout) as {
        sessions: {
          compression: { requested: string; effective: string; reason: string };
        }[];
      }
    ).sessions;
    expect(sessions[0]?.compression).toMatchObject({ requested: "headroom", effective: "direct" });
    expect(sessions[0]?.compression.reason).toMatch(/headroom preflight failed/);
  });

  it("delegates logins to the official CLIs and reads status only through them", async () => {
    const before = await ivoai(["doctor", "--json"]);
    const codexRow = (
      JSON.parse(before.stdout) as { components: { component: string; logged_in?: string }[] }
    ).components.find((row) => row.component === "codex");
    expect(codexRow?.logged_in).toBe("logged_out");
    const login = await ivoai(["connect", "chatgpt", "--json"]);
    expect(login.code).toBe(0);
    expect(JSON.parse(login.stdout)).toMatchObject({ agent: "codex", state: "logged_in" });
    const claude = await ivoai(["connect", "claude", "--json"]);
    expect(JSON.parse(claude.stdout)).toMatchObject({ agent: "claude", state: "logged_in" });
    expect(claude.stdout).not.toContain("dev@example.com");
  });
});
