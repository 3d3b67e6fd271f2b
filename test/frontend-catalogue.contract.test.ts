// The catalogue's provider config against the pinned, real OpenCode (from npm, offline config reader and one
// `opencode run` against a capturing loopback server): OpenCode accepts the provider and its models, never shows
// the secret, resolves the `{env:…}` key itself, and sends a declared variant as the body's `reasoning_effort`.
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TESTED_VERSIONS } from "../src/client/agents/catalog.js";
import { claudeProfiles, codexProfiles, type ExecutorRegistry } from "../src/client/auto/registry.js";
import { frontendCatalogue, opencodeProviderConfig } from "../src/client/frontend/catalogue.js";
import { ensureAgentClis } from "./npm-tools.js";

const run = promisify(execFile);
const SECRET_ENV = "IVOAI_BRIDGE_SECRET";
const SECRET = "bridge-secret-5f1d2c9a77e0";
const registry: ExecutorRegistry = {
  checked_at: "2026-11-30T00:00:00Z",
  executors: [
    {
      name: "codex",
      path: "/bin/codex",
      version: "codex-cli 0.171.0",
      login: "logged_in",
      login_detail: "",
      catalogue: "model/list",
      profiles: codexProfiles(
        [
          {
            model: "gpt-6.2-sol",
            displayName: "",
            isDefault: true,
            efforts: ["low", "high"],
            defaultEffort: "low",
          },
        ],
        true,
      ),
      problems: [],
    },
    {
      name: "claude",
      path: "/bin/claude",
      version: "2.1.332",
      login: "logged_in",
      login_detail: "",
      catalogue: "static",
      profiles: claudeProfiles(true),
      problems: [],
    },
  ],
};
const entries = frontendCatalogue(registry);

interface Captured {
  authorization: string | undefined;
  session: string | undefined;
  body: { model?: string; reasoning_effort?: string; messages?: { role: string; content: unknown }[] };
}

let bin = "";
let home = "";
let server: Server;
let port = 0;
const captured: Captured[] = [];

/** A minimal OpenAI-compatible endpoint that records what OpenCode sends and streams back "hello". */
function startCapture(): Promise<void> {
  server = createServer((req, res) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => {
      if (text.length < 1_000_000) text += chunk;
    });
    req.on("end", () => {
      const body = JSON.parse(text || "{}") as Captured["body"] & { stream?: boolean };
      captured.push({
        authorization: req.headers.authorization,
        session: req.headers["x-session-id"] as string | undefined,
        body,
      });
      const chunk = (delta: object, finish: string | null) =>
        `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(`${chunk({ role: "assistant", content: "hello" }, null)}${chunk({}, "stop")}data: [DONE]\n\n`);
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      port = (server.address() as AddressInfo).port;
      resolve();
    }),
  );
}

async function opencode(args: string[], config: object) {
  const env = {
    PATH: process.env.PATH ?? "",
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, "config"),
    XDG_DATA_HOME: path.join(home, "data"),
    XDG_CACHE_HOME: path.join(home, "cache"),
    XDG_STATE_HOME: path.join(home, "state"),
    OPENCODE_DISABLE_PROJECT_CONFIG: "1",
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    OPENCODE_CONFIG_CONTENT: JSON.stringify(config),
    [SECRET_ENV]: SECRET,
  };
  try {
    const pending = run(path.join(bin, "opencode"), args, {
      cwd: home,
      env,
      timeout: 120_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    // `opencode run` reads a piped stdin as part of the message: give it an empty one.
    pending.child.stdin?.end();
    const { stdout, stderr } = await pending;
    return { code: 0, out: stdout, err: stderr };
  } catch (error) {
    const failure = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failure.code ?? -1, out: failure.stdout ?? "", err: failure.stderr ?? "" };
  }
}

const providerConfig = () => ({
  share: "disabled",
  autoupdate: false,
  provider: { ivoai: opencodeProviderConfig(entries, `http://127.0.0.1:${port}/v1`, SECRET_ENV) },
});

describe("the catalogue's provider config in the pinned OpenCode", () => {
  beforeAll(async () => {
    bin = await ensureAgentClis(TESTED_VERSIONS);
    home = await mkdtemp(path.join(os.tmpdir(), "ivoai-opencode-catalogue-"));
    await startCapture();
  }, 900_000);
  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    if (home) await rm(home, { recursive: true, force: true });
  });

  it("`opencode debug config` shows the provider, every model and auto's variants, never the secret", async () => {
    const shown = await opencode(["debug", "config"], providerConfig());
    expect(shown.code).toBe(0);
    const config = JSON.parse(shown.out) as {
      provider: Record<string, { npm: string; options: { baseURL: string }; models: Record<string, object> }>;
    };
    const ivoai = config.provider.ivoai;
    expect(ivoai?.npm).toBe("@ai-sdk/openai-compatible");
    expect(ivoai?.options.baseURL).toBe(`http://127.0.0.1:${port}/v1`);
    expect(Object.keys(ivoai?.models ?? {}).sort()).toEqual(entries.map((entry) => entry.id).sort());
    expect(ivoai?.models.auto).toEqual({
      name: "ivoai auto (scheduler decides)",
      variants: {
        low: { reasoningEffort: "low" },
        medium: { reasoningEffort: "medium" },
        high: { reasoningEffort: "high" },
        xhigh: { reasoningEffort: "xhigh" },
      },
    });
    expect(`${shown.out}${shown.err}`).not.toContain(SECRET);
  });

  it("a turn on auto with a variant reaches the bridge as reasoning_effort, authenticated by the env secret", async () => {
    captured.length = 0;
    const answered = await opencode(
      ["run", "--model", "ivoai/auto", "--variant", "high", "say hi"],
      providerConfig(),
    );
    expect(answered.code).toBe(0);
    expect(answered.out).toContain("hello");
    expect(`${answered.out}${answered.err}`).not.toContain(SECRET);
    // OpenCode also asks the same model for a title, with the first declared variant (auto's cheapest effort).
    const isTitle = (request: Captured) => JSON.stringify(request.body.messages).includes("title generator");
    const turn = captured.find((request) => !isTitle(request));
    const title = captured.find(isTitle);
    if (title) expect(title.body.reasoning_effort).toBe("low");
    expect(turn?.body.model).toBe("auto");
    expect(turn?.body.reasoning_effort).toBe("high");
    expect(turn?.authorization).toBe(`Bearer ${SECRET}`);
    // OpenCode itself names its session on every request (the title's too): the bridge can key the mapping on it.
    expect(turn?.session).toMatch(/^ses_[A-Za-z0-9]+$/);
    expect(new Set(captured.map((request) => request.session))).toEqual(new Set([turn?.session]));
  });

  it("an explicit entry declares no variant, so a variant OpenCode carries over is sent as no effort", async () => {
    captured.length = 0;
    const explicit = entries[1];
    const answered = await opencode(
      ["run", "--model", `ivoai/${explicit?.id}`, "--variant", "xhigh", "say hi"],
      providerConfig(),
    );
    expect(answered.code).toBe(0);
    const turn = captured.find((request) => request.body.model === explicit?.id);
    expect(turn).toBeDefined();
    expect(turn?.body.reasoning_effort).toBeUndefined();
  });

  it("`agent.title.disable` stops OpenCode's extra title request (otherwise each new session costs a second turn)", async () => {
    captured.length = 0;
    const answered = await opencode(["run", "--model", "ivoai/auto", "say hi"], {
      ...providerConfig(),
      agent: { title: { disable: true } },
    });
    expect(answered.code).toBe(0);
    expect(captured).toHaveLength(1);
    expect(JSON.stringify(captured[0]?.body.messages)).not.toContain("title generator");
  });
});
