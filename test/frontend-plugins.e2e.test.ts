import { mkdir, mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TESTED_VERSIONS } from "../src/client/agents/catalog.js";
import {
  FRONTEND_MESSAGE_HEADER,
  FRONTEND_SESSION_HEADER,
  pluginConfig,
  pluginFiles,
  writePluginFiles,
} from "../src/client/frontend/plugins/index.js";
import { ensureAgentClis } from "./npm-tools.js";
import { opencodeEnv, runOpencode } from "./opencode.js";

let bin = "";
let root = "";
let server: http.Server;
let baseUrl = "";
const requests: {
  headers: http.IncomingHttpHeaders;
  body: { messages?: { role: string; content: unknown }[] };
}[] = [];

function chunk(delta: object, finish: string | null): string {
  const value = {
    id: "c1",
    object: "chat.completion.chunk",
    created: 0,
    model: "auto",
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
  return `data: ${JSON.stringify(value)}\n\n`;
}

function run(
  args: string[],
  extra: object = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const home = path.join(root, "oc-home");
  const plugins = pluginConfig(path.join(root, "plugins"));
  const config = {
    share: "disabled",
    autoupdate: false,
    agent: { title: { disable: true } },
    provider: {
      ivoai: {
        npm: "@ai-sdk/openai-compatible",
        name: "ivoai",
        options: { baseURL: `${baseUrl}/v1`, apiKey: "{env:IVOAI_TEST_SECRET}" },
        models: { auto: { name: "auto" } },
      },
    },
    ...plugins.opencode,
    ...extra,
  };
  return runOpencode(path.join(bin, "opencode"), args, {
    cwd: path.join(root, "project"),
    env: opencodeEnv(home, config, { IVOAI_TEST_SECRET: "test-secret" }),
  });
}

beforeAll(async () => {
  bin = path.join(path.dirname(await ensureAgentClis(TESTED_VERSIONS)), ".bin");
  root = await mkdtemp(path.join(os.tmpdir(), "ivoai-frontend-plugins-"));
  await mkdir(path.join(root, "project"), { recursive: true });
  await mkdir(path.join(root, "plugins"), { recursive: true, mode: 0o700 });
  await writePluginFiles(
    path.join(root, "plugins"),
    pluginFiles({ statusUrl: "http://127.0.0.1:9/status", statusTokenEnv: "IVOAI_STATUS_TOKEN" }),
  );
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (data: Buffer) => chunks.push(data));
    req.on("end", () => {
      if (req.method === "GET") {
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ object: "list", data: [{ id: "auto", object: "model" }] }));
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString() || "{}");
      requests.push({ headers: req.headers, body });
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(chunk({ role: "assistant", content: "recorded answer" }, null));
      res.write(chunk({}, "stop"));
      res.end("data: [DONE]\n\n");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 900_000);

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  if (root) await rm(root, { recursive: true, force: true });
});

describe("ivoai's OpenCode plugins in the real OpenCode", () => {
  it("puts the frontend session and message ids on every bridge request", async () => {
    const result = await run(["run", "-m", "ivoai/auto", "hi"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("recorded answer");
    expect(requests.length).toBeGreaterThan(0);
    for (const request of requests) {
      const session = request.headers[FRONTEND_SESSION_HEADER];
      expect(session).toMatch(/^ses_/);
      expect(session).toBe(request.headers["x-session-id"]);
      expect(request.headers[FRONTEND_MESSAGE_HEADER]).toMatch(/^msg_/);
    }
    // A follow-up turn in the same session: same session id, another message id.
    const before = requests.length;
    const second = await run(["run", "-c", "-m", "ivoai/auto", "again"]);
    expect(second.code, second.stderr).toBe(0);
    const next = requests[before];
    expect(next?.headers[FRONTEND_SESSION_HEADER]).toBe(requests[0]?.headers[FRONTEND_SESSION_HEADER]);
    expect(next?.headers[FRONTEND_MESSAGE_HEADER]).not.toBe(requests[0]?.headers[FRONTEND_MESSAGE_HEADER]);
  });

  it("does not add the headers to another provider's requests", async () => {
    requests.length = 0;
    const other = {
      provider: {
        other: {
          npm: "@ai-sdk/openai-compatible",
          name: "other",
          options: { baseURL: `${baseUrl}/v1`, apiKey: "x" },
          models: { auto: { name: "auto" } },
        },
      },
    };
    const result = await run(["run", "-m", "other/auto", "hi"], other);
    expect(result.code, result.stderr).toBe(0);
    expect(requests.length).toBeGreaterThan(0);
    for (const request of requests) expect(request.headers[FRONTEND_SESSION_HEADER]).toBeUndefined();
  });

  it("lists the server plugin in OpenCode's resolved config", async () => {
    const result = await run(["debug", "config"]);
    expect(result.code, result.stderr).toBe(0);
    const resolved = JSON.parse(result.stdout) as { plugin?: unknown[] };
    expect(JSON.stringify(resolved.plugin)).toContain(
      pluginConfig(path.join(root, "plugins")).opencode.plugin[0],
    );
  });
});
