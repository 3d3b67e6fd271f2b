// The quota manager's contract with the pinned real `codex app-server`, offline and without a login: the
// generated protocol types still have every method and field ivoai reads, and the real server accepts ivoai's
// handshake (no `jsonrpc` field), refuses the rate-limit read with -32600 and lists models in the shape parsed.
import { execFile, spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TESTED_VERSIONS } from "../src/client/agents/catalog.js";
import { NOT_LOGGED_IN, probeCodexAppServer } from "../src/client/auto/quota/codex-app-server.js";
import { codexProfiles } from "../src/client/auto/registry.js";
import { ensureAgentClis } from "./npm-tools.js";

const run = promisify(execFile);
const CODEX = path.resolve(".tmp/agent-clis/node_modules/.bin/codex");
let home: string;
let types: string;
const env = () => ({ PATH: process.env.PATH ?? "", HOME: home });
const read = (file: string) => readFile(path.join(types, file), "utf8");

beforeAll(async () => {
  await ensureAgentClis(TESTED_VERSIONS);
  home = await mkdtemp(path.join(os.tmpdir(), "ivoai-codex-home-"));
  types = path.join(home, "types");
  await run(CODEX, ["app-server", "generate-ts", "--out", types], { env: env(), timeout: 120_000 });
}, 900_000);
afterAll(() => rm(home, { recursive: true, force: true }));

describe("codex app-server generate-ts (the pinned version's protocol)", () => {
  it("still has the methods the quota manager and the catalogue call", async () => {
    const requests = await read("ClientRequest.ts");
    for (const method of ["initialize", "account/rateLimits/read", "model/list"])
      expect(requests, method).toContain(`"method": "${method}"`);
    expect(await read("ClientNotification.ts")).toContain(`"method": "initialized"`);
    expect(await read("ServerNotification.ts")).toMatch(
      /"method": "account\/rateLimits\/updated", "params": AccountRateLimitsUpdatedNotification/,
    );
    expect(await read("InitializeParams.ts")).toMatch(
      /clientInfo: ClientInfo, capabilities: InitializeCapabilities \| null/,
    );
    expect(await read("ClientInfo.ts")).toMatch(/name: string, title: string \| null, version: string/);
  });

  it("still has the rate-limit fields read", async () => {
    const response = await read("v2/GetAccountRateLimitsResponse.ts");
    expect(response).toMatch(/ordinaryUsageAllowed: boolean \| null/);
    expect(response).toMatch(/rateLimits: RateLimitSnapshot/);
    const snapshot = await read("v2/RateLimitSnapshot.ts");
    for (const field of [
      "primary: RateLimitWindow | null",
      "secondary: RateLimitWindow | null",
      "rateLimitReachedType: RateLimitReachedType | null",
    ])
      expect(snapshot, field).toContain(field);
    expect(await read("v2/RateLimitWindow.ts")).toContain(
      "{ usedPercent: number, windowDurationMins: number | null, resetsAt: number | null, }",
    );
    expect(await read("v2/AccountRateLimitsUpdatedNotification.ts")).toContain(
      "{ rateLimits: RateLimitSnapshot, }",
    );
  });

  it("still pages model/list and describes models as parsed", async () => {
    const params = await read("v2/ModelListParams.ts");
    for (const field of ["cursor?: string | null", "limit?: number | null", "includeHidden?: boolean | null"])
      expect(params, field).toContain(field);
    expect(await read("v2/ModelListResponse.ts")).toMatch(
      /data: Array<Model>,[\s\S]*nextCursor: string \| null/,
    );
    const model = await read("v2/Model.ts");
    for (const field of [
      "model: string",
      "displayName: string",
      "hidden: boolean",
      "supportedReasoningEfforts: Array<ReasoningEffortOption>",
      "defaultReasoningEffort: ReasoningEffort",
      "isDefault: boolean",
    ])
      expect(model, field).toContain(field);
    expect(await read("v2/ReasoningEffortOption.ts")).toContain("reasoningEffort: ReasoningEffort");
  });

  it("still types the hard limits the supervisor confirms", async () => {
    const info = await read("v2/CodexErrorInfo.ts");
    for (const variant of ["usageLimitExceeded", "rateLimitExceeded", "contextWindowExceeded"])
      expect(info, variant).toContain(`"${variant}"`);
  });
});

describe("Claude Code's statusline (the pinned binary's own settings schema and payload builder)", () => {
  // The native binary is ~400 MB: grep streams it instead of loading it into the test process.
  const grep = async (pattern: string) => {
    const binary = path.resolve(".tmp/agent-clis/node_modules/@anthropic-ai/claude-code/bin/claude.exe");
    const { stdout } = await run("sh", ["-c", 'grep -a -o -E "$1" "$2" | head -1', "sh", pattern, binary], {
      timeout: 60_000,
    });
    return stdout;
  };

  it("accepts a statusLine command setting (what ivoai injects into interactive sessions)", async () => {
    expect(
      await grep('statusLine:\\(\\)=>[a-zA-Z_$]+\\(\\{type:[a-zA-Z_$]+\\("command"\\),command:'),
    ).not.toBe("");
  });

  it("sends rate_limits.five_hour|seven_day.{used_percentage,resets_at}", async () => {
    for (const window of ["five_hour", "seven_day"])
      expect(await grep(`${window}:\\{used_percentage:[^,]{1,80},resets_at:`), window).not.toBe("");
  });
});

describe("the real codex app-server, offline and logged out", () => {
  it("accepts the handshake without a jsonrpc field and refuses the rate-limit read with -32600", async () => {
    const child = spawn(CODEX, ["app-server"], { env: env(), stdio: ["pipe", "pipe", "ignore"] });
    const answers = new Map<number, Record<string, unknown>>();
    const lines = createInterface({ input: child.stdout });
    const done = new Promise<void>((resolve) => {
      lines.on("line", (line) => {
        const message = JSON.parse(line) as Record<string, unknown>;
        if (typeof message.id === "number") answers.set(message.id, message);
        if (answers.has(1) && answers.has(2)) resolve();
      });
    });
    child.stdin.write(
      `${JSON.stringify({ id: 1, method: "initialize", params: { clientInfo: { name: "ivoai", title: null, version: "0" }, capabilities: null } })}\n`,
    );
    child.stdin.write(`${JSON.stringify({ method: "initialized" })}\n`);
    child.stdin.write(`${JSON.stringify({ id: 2, method: "account/rateLimits/read" })}\n`);
    await done;
    child.stdin.end();
    child.kill("SIGTERM");
    expect(answers.get(1)?.result).toMatchObject({ userAgent: expect.any(String) });
    expect(answers.get(1)).not.toHaveProperty("jsonrpc");
    expect(answers.get(2)?.error).toMatchObject({
      code: -32600,
      message: expect.stringMatching(/authentication/),
    });
  });

  it("is reported by the probe as not logged in, with its bundled models parsed into the catalogue", async () => {
    const probe = await probeCodexAppServer({ cliPath: CODEX, env: env(), timeoutMs: 60_000 });
    expect(probe.account).toBe("logged_out");
    expect(probe.problems).toEqual([NOT_LOGGED_IN]);
    // model/list answers offline from the CLI's own catalogue (seen on 0.171.0).
    expect(probe.models?.length).toBeGreaterThan(0);
    expect(probe.models?.some((model) => model.isDefault)).toBe(true);
    const profiles = codexProfiles(probe.models ?? [], true);
    expect(new Set(profiles.map((profile) => profile.tier))).toEqual(new Set([1, 2, 3]));
  });
});
