import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { describe, expect, it } from "vitest";
import { silentLogger } from "../../shared/logger.js";
import { completionsFor, type PromptSpec, registerPrompts } from "./prompts.js";

const spec: PromptSpec = {
  name: "p",
  title: "P",
  description: "A prompt.",
  offeredWith: (tools) => tools.has("context_search"),
  args: {
    source: {
      description: "s",
      required: true,
      maxLength: 10,
      complete: async () => {
        throw new Error("SQLITE_CORRUPT: /secret/path/catalogue.sqlite");
      },
    },
    project: { description: "p", maxLength: 10, needs: "memory_query" },
  },
  render: (args) => `source ${args.source}`,
};

async function connected(tools: string[], logged: unknown[] = []): Promise<Client> {
  const server = new McpServer({ name: "t", version: "1" });
  registerPrompts(
    server,
    [spec],
    new Set(tools),
    { ...silentLogger, error: (message: string, fields?: unknown) => logged.push({ message, fields }) },
    "req_prompt1",
  );
  const [ours, theirs] = InMemoryTransport.createLinkedPair();
  await server.connect(theirs);
  const client = new Client({ name: "c", version: "1" });
  await client.connect(ours);
  return client;
}

describe("MCP prompts", () => {
  it("completes case-insensitively by prefix, sorted, without repeats", () => {
    expect(completionsFor(["hr-wiki", "Handbook", "eng", "hr-wiki"], "h")).toEqual(["Handbook", "hr-wiki"]);
    expect(completionsFor(["a", "b"], "")).toEqual(["a", "b"]);
  });

  it("declares an argument only with the tool it needs, and the prompt only with its tools", async () => {
    const narrow = await connected(["context_search"]);
    expect((await narrow.listPrompts()).prompts).toEqual([
      {
        name: "p",
        title: "P",
        description: "A prompt.",
        arguments: [{ name: "source", description: "s", required: true }],
      },
    ]);
    const wide = await connected(["context_search", "memory_query"]);
    const args = (await wide.listPrompts()).prompts[0]?.arguments?.map((arg) => arg.name);
    expect(args).toEqual(["source", "project"]);
    expect((await connected(["memory_query"])).getServerCapabilities()?.prompts).toBeUndefined();
  });

  it("answers no values when a source fails, and logs why for the operator only", async () => {
    const logged: unknown[] = [];
    const client = await connected(["context_search"], logged);
    const answer = await client.complete({
      ref: { type: "ref/prompt", name: "p" },
      argument: { name: "source", value: "x" },
    });
    expect(answer.completion.values).toEqual([]);
    expect(JSON.stringify(answer)).not.toContain("SQLITE");
    expect(logged).toEqual([
      {
        message: "prompt completion failed",
        fields: {
          prompt: "p",
          argument: "source",
          error_code: "UNEXPECTED",
          request_id: "req_prompt1",
          error: "SQLITE_CORRUPT: /secret/path/catalogue.sqlite",
        },
      },
    ]);
  });
});
