// The ivoai-orchestrator MCP as the primary's CLI runs it: the built binary as a stdio child of the official
// SDK client, relaying to a real control server whose handlers are backed by a real ArtifactStore.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ArtifactStore, openArtifactStore, type StoredRef } from "../src/client/auto/artifacts.js";
import type { WorkerResult } from "../src/client/auto/contracts.js";
import { type ControlServer, startControlServer } from "../src/client/auto/orchestrator/control.js";
import { orchestratorMcpServer } from "../src/client/auto/orchestrator/mcp.js";
import type { DelegateInput } from "../src/client/auto/orchestrator/protocol.js";
import { BIN, runIvoai, tempDir } from "./helpers.js";

const PRIMARY = "ses_primary";
const BODY = `# evidence\n${"línea ✓ 🦊 exact bytes matter\n".repeat(6_000)}the end`;
const sha = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

let cleanup: () => Promise<void>;
let store: ArtifactStore;
let foreign: StoredRef;
let evidence: StoredRef;
let control: ControlServer;
let client: Client;
let transport: StdioClientTransport;
const delegated: DelegateInput[] = [];

beforeAll(async () => {
  const temp = await tempDir("ivoai-orc-");
  cleanup = temp.cleanup;
  const artifacts = path.join(temp.dir, "artifacts");
  store = await openArtifactStore({ dir: artifacts, sessionId: PRIMARY });
  evidence = await store.put("t1", BODY);
  const other = await openArtifactStore({ dir: artifacts, sessionId: "ses_other" });
  foreign = await other.put("t9", "another session's evidence");
  const result: WorkerResult = {
    task_id: "t1",
    status: "done",
    summary: "found the config loader",
    findings: ["src/config.ts parses YAML"],
    state_delta: { advisory: true, changes: [{ path: "src/config.ts", change: "validate ports" }] },
    refs: [
      {
        ref: evidence.ref,
        task_id: evidence.task_id,
        bytes: evidence.bytes,
        sha256: evidence.sha256,
        expires_at: evidence.expires_at,
      },
    ],
  };
  control = await startControlServer({
    socketPath: path.join(temp.dir, "run", "orchestrator.sock"),
    handlers: {
      async delegate(input) {
        delegated.push(input);
        return { task_id: "d1", state: "pending", reason: "admitted; waiting for t1" };
      },
      async status(taskId) {
        const tasks = [
          { task_id: "t1", state: "done" as const, result },
          { task_id: "d1", state: "pending" as const },
        ];
        return { tasks: taskId === undefined ? tasks : tasks.filter((task) => task.task_id === taskId) };
      },
      readArtifact: (ref, offset, length) =>
        store.read(ref, {
          sessionId: PRIMARY,
          ...(offset === undefined ? {} : { offset }),
          ...(length === undefined ? {} : { length }),
        }),
    },
  });
  const spec = orchestratorMcpServer([process.execPath, BIN]);
  expect(spec).toEqual({
    name: "ivoai-orchestrator",
    command: process.execPath,
    args: [BIN, "orchestrator-mcp"],
    envVars: ["IVOAI_ORCHESTRATOR_SOCKET", "IVOAI_ORCHESTRATOR_TOKEN"],
  });
  transport = new StdioClientTransport({
    command: spec.command,
    args: spec.args,
    env: { IVOAI_ORCHESTRATOR_SOCKET: control.socketPath, IVOAI_ORCHESTRATOR_TOKEN: control.token },
    stderr: "pipe",
  });
  client = new Client({ name: "orchestrator-e2e", version: "1.0.0" });
  await client.connect(transport);
});

afterAll(async () => {
  await client?.close();
  await control?.close();
  await cleanup?.();
});

describe("ivoai orchestrator-mcp", () => {
  it("lists exactly delegate, task_status and artifact_read", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(["artifact_read", "delegate", "task_status"]);
    const read = tools.find((tool) => tool.name === "artifact_read");
    expect(read?.inputSchema.required).toEqual(["ref"]);
    expect(read?.annotations?.readOnlyHint).toBe(true);
    expect(client.getServerVersion()?.name).toBe("ivoai-orchestrator");
  });

  it("keeps the control token out of its command line", () => {
    const argv = readFileSync(`/proc/${transport.pid}/cmdline`, "utf8").split("\0");
    expect(argv).toContain("orchestrator-mcp");
    expect(argv.join(" ")).not.toContain(control.token);
  });

  it("delegate reaches the supervisor's handler and returns the task id and state", async () => {
    const args = {
      instructions: "find where ports are parsed",
      kind: "research",
      depends_on: ["t1"],
      signals: { complexity: 0.3, est_tokens: 20_000 },
    };
    const result = await client.callTool({ name: "delegate", arguments: args });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({
      task_id: "d1",
      state: "pending",
      reason: "admitted; waiting for t1",
    });
    expect(JSON.parse((result.content as { text: string }[])[0]?.text ?? "")).toEqual(
      result.structuredContent,
    );
    expect(delegated).toEqual([args]);
  });

  it("refuses bad arguments with a clear tool error, without calling the supervisor", async () => {
    const before = delegated.length;
    const result = await client.callTool({
      name: "delegate",
      arguments: { instructions: "", kind: "change" },
    });
    expect(result.isError).toBe(true);
    expect((result.content as { text: string }[])[0]?.text).toMatch(
      /^invalid arguments for delegate: instructions: .*; kind: /,
    );
    expect(delegated.length).toBe(before);
  });

  it("task_status returns the bounded WorkerResult of a finished task", async () => {
    const one = await client.callTool({ name: "task_status", arguments: { task_id: "t1" } });
    const tasks = (one.structuredContent as { tasks: { task_id: string; result?: WorkerResult }[] }).tasks;
    expect(tasks).toHaveLength(1);
    expect(tasks[0]?.result).toMatchObject({
      status: "done",
      summary: "found the config loader",
      state_delta: { advisory: true },
      refs: [{ ref: evidence.ref, sha256: sha(BODY) }],
    });
    const all = await client.callTool({ name: "task_status", arguments: {} });
    expect((all.structuredContent as { tasks: unknown[] }).tasks).toHaveLength(2);
  });

  it("artifact_read pages through an artifact and gets the exact body back", async () => {
    let text = "";
    let offset: number | null = 0;
    let pages = 0;
    while (offset !== null) {
      const page = await client.callTool({ name: "artifact_read", arguments: { ref: evidence.ref, offset } });
      expect(page.isError).toBeFalsy();
      const range = page.structuredContent as {
        text: string;
        offset: number;
        next_offset: number | null;
        bytes: number;
        sha256: string;
      };
      expect(range).toMatchObject({ offset, bytes: evidence.bytes, sha256: evidence.sha256 });
      text += range.text;
      offset = range.next_offset;
      pages += 1;
    }
    expect(pages).toBe(Math.ceil(evidence.bytes / 65_536));
    expect(sha(text)).toBe(evidence.sha256);
    expect(text).toBe(BODY);
  });

  it("refuses another session's ref, an oversized range and a malformed ref", async () => {
    const refused = await client.callTool({ name: "artifact_read", arguments: { ref: foreign.ref } });
    expect(refused.isError).toBe(true);
    const message = (refused.content as { text: string }[])[0]?.text ?? "";
    expect(message).toMatch(/belongs to another session/);
    expect(message).not.toContain("another session's evidence");
    expect(refused.structuredContent).toBeUndefined();
    const tooLong = await client.callTool({
      name: "artifact_read",
      arguments: { ref: evidence.ref, length: 65_537 },
    });
    expect(tooLong.isError).toBe(true);
    const malformed = await client.callTool({
      name: "artifact_read",
      arguments: { ref: "../../etc/passwd" },
    });
    expect((malformed.content as { text: string }[])[0]?.text).toMatch(/refs are art_ followed by 32 hex/);
  });

  it("answers an unknown tool with an MCP error", async () => {
    const call = client.callTool({ name: "write_file", arguments: {} });
    await expect(call).rejects.toBeInstanceOf(McpError);
    await expect(call).rejects.toMatchObject({ code: ErrorCode.InvalidParams });
  });

  it("refuses to start without the control socket and token (one line on stderr, exit 2)", async () => {
    const missing = await runIvoai(["orchestrator-mcp"], {
      env: { IVOAI_ORCHESTRATOR_SOCKET: "", IVOAI_ORCHESTRATOR_TOKEN: "" },
      timeoutMs: 30_000,
    });
    expect(missing.code).toBe(2);
    expect(missing.stdout).toBe("");
    expect(missing.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(missing.stderr).toMatch(/IVOAI_ORCHESTRATOR_SOCKET and IVOAI_ORCHESTRATOR_TOKEN must be set/);
  });

  it("exits cleanly when its stdin ends", async () => {
    const ended = await runIvoai(["orchestrator-mcp"], {
      env: { IVOAI_ORCHESTRATOR_SOCKET: control.socketPath, IVOAI_ORCHESTRATOR_TOKEN: control.token },
      timeoutMs: 30_000,
    });
    expect(ended).toMatchObject({ code: 0, signal: null, stdout: "" });
  });

  it("reports a supervisor that went away as a tool error and keeps serving", async () => {
    await control.close();
    const result = await client.callTool({ name: "task_status", arguments: {} });
    expect(result.isError).toBe(true);
    expect((result.content as { text: string }[])[0]?.text).toMatch(
      /^task_status: cannot reach the ivoai supervisor's control channel/,
    );
    expect((await client.listTools()).tools).toHaveLength(3);
  });
});
