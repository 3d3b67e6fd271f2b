import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createCoordinator,
  isOpaqueTaskId,
  noCoordinator,
  opaqueTaskId,
  PRIMARY_TASK_KEY,
} from "./coordinator.js";
import { RUFLO_FORCED_ENV, rufloEnv, runRuflo, trailingJson } from "./ruflo-process.js";

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), "ivoai-coordinator-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe("noCoordinator", () => {
  it("is the default: admits every session and records nothing", async () => {
    expect(createCoordinator("none")).toBe(noCoordinator);
    const admission = await noCoordinator.admit({ sessionId: "s", runtimeDir: "/nonexistent" });
    expect(admission).toEqual({ admitted: true, reason: "no lifecycle coordinator configured" });
    await expect(noCoordinator.registerTask("anything", "running")).resolves.toBeUndefined();
    await expect(noCoordinator.close()).resolves.toBeUndefined();
  });

  it("ruflo needs its executable", () => {
    expect(() => createCoordinator("ruflo")).toThrow(expect.objectContaining({ code: "CONFIG_MISSING" }));
  });
});

describe("opaque task ids", () => {
  it("are stable hashes that carry no task text", () => {
    const instructions = "Read src/secret.ts and summarise the payment flow";
    const id = opaqueTaskId("sess_1", instructions);
    expect(id).toMatch(/^ivt_[0-9a-f]{32}$/);
    expect(isOpaqueTaskId(id)).toBe(true);
    expect(id).toBe(opaqueTaskId("sess_1", instructions));
    for (const word of instructions.split(" ")) expect(id).not.toContain(word.toLowerCase());
    expect(opaqueTaskId("sess_2", instructions)).not.toBe(id);
    expect(opaqueTaskId("sess_1", PRIMARY_TASK_KEY)).not.toBe(opaqueTaskId("sess_1", "primary"));
    expect(isOpaqueTaskId(instructions)).toBe(false);
  });
});

describe("rufloEnv", () => {
  const parent: NodeJS.ProcessEnv = {
    PATH: "/opt/bin:/usr/bin",
    LANG: "C.UTF-8",
    HOME: "/home/someone",
    OPENAI_API_KEY: "sk-openai",
    ANTHROPIC_API_KEY: "sk-ant",
    ANTHROPIC_AUTH_TOKEN: "tok",
    CLAUDE_CODE_OAUTH_TOKEN: "oauth",
    OPENROUTER_API_KEY: "or",
    OLLAMA_API_KEY: "ol",
    GEMINI_API_KEY: "gem",
    AWS_SECRET_ACCESS_KEY: "aws",
    IVOAI_ROUTER_TOKEN: "router",
    GH_TOKEN: "gh",
    NODE_OPTIONS: "--require /tmp/evil.cjs",
    RUFLO_PROVIDER: "openrouter",
    CLAUDE_FLOW_MEMORY_BACKEND: "hybrid",
  };

  it("drops every credential and keeps only PATH and locale from the parent", () => {
    const env = rufloEnv(parent, "/run/s/ruflo", ["swarm_init", "task_create"]);
    expect(Object.values(env)).not.toEqual(
      expect.arrayContaining([expect.stringMatching(/^(sk-|tok$|oauth$|or$|ol$|gem$|aws$|router$|gh$)/)]),
    );
    for (const name of Object.keys(parent).filter((key) => /KEY|TOKEN|NODE_OPTIONS/.test(key)))
      expect(env).not.toHaveProperty(name);
    expect(env).toEqual({
      PATH: "/opt/bin:/usr/bin",
      LANG: "C.UTF-8",
      HOME: "/run/s/ruflo",
      TMPDIR: "/run/s/ruflo/tmp",
      CLAUDE_FLOW_MCP_TOOLS: "swarm_init,task_create",
      ...RUFLO_FORCED_ENV,
    });
  });

  it("forces the provider and memory switches over the parent's values", () => {
    const env = rufloEnv(parent, "/h", []);
    expect(env.RUFLO_PROVIDER).toBe("ivoai-disabled");
    expect(env.CLAUDE_FLOW_MEMORY_BACKEND).toBe("memory");
  });
});

describe("trailingJson", () => {
  it("takes the value printed after Ruflo's progress lines and tables", () => {
    const stdout = [
      "[INFO] Executing tool: swarm_init",
      '  Parameters: {"topology":"hierarchical"}',
      "",
      "[OK] Tool executed in 81.27ms",
      "{",
      '  "tool": "swarm_init",',
      '  "result": {',
      '    "swarmId": "swarm-1796010193751-tg5naf"',
      "  }",
      "}",
      "",
    ].join("\n");
    expect(trailingJson(stdout, "mcp exec")).toEqual({
      tool: "swarm_init",
      result: { swarmId: "swarm-1796010193751-tg5naf" },
    });
  });

  it("fails clearly without one", () => {
    expect(() => trailingJson("[ERROR] Tool not found: x\n", "mcp exec x")).toThrow(
      "ruflo mcp exec x: no JSON result in its output",
    );
  });
});

describe("runRuflo", () => {
  const script = async (name: string, body: string) => {
    const file = path.join(scratch, name);
    await writeFile(file, body);
    return file;
  };
  const options = (entry: string, timeoutMs = 30_000) => ({
    entry,
    args: ["mcp", "tools"],
    cwd: scratch,
    env: { PATH: process.env.PATH ?? "" },
    ioDir: scratch,
    timeoutMs,
    killAfterMs: 500,
  });

  it("keeps output longer than a pipe buffer when the command exits right after printing", async () => {
    const entry = await script(
      "big.mjs",
      'process.stdout.write(JSON.stringify(Array.from({ length: 5000 }, (_, i) => ({ name: "tool_" + i, pad: "x".repeat(30) })))); process.exit(0);',
    );
    const { stdout } = await runRuflo(options(entry));
    expect(stdout.length).toBeGreaterThan(200_000);
    expect(JSON.parse(stdout)).toHaveLength(5000);
  });

  it("ends a command that does not answer in time, and reports a failed one in one line", async () => {
    const hang = await script("hang.mjs", "setInterval(() => {}, 1000);");
    await expect(runRuflo(options(hang, 300))).rejects.toThrow("ruflo mcp tools: no answer within 300 ms");
    const fail = await script("fail.mjs", 'console.error("[ERROR] Tool not found:\\n  x"); process.exit(1);');
    await expect(runRuflo(options(fail))).rejects.toThrow(
      "ruflo mcp tools: exit 1: [ERROR] Tool not found: x",
    );
  });
});
