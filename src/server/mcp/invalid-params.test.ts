// Malformed params of every method the endpoint answers through the SDK: -32602 with a one-line reason, never
// -32603 (an internal error) with zod's dump, on a real endpoint with tools, prompts and resources.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { silentLogger } from "../../shared/logger.js";
import type { Catalogue } from "../context/catalogue.js";
import { createContextResources } from "../context/resources.js";
import type { AuthenticatedClient } from "../enrollment/service.js";
import { createMcpEndpoint, defineTool } from "./endpoint.js";
import { createGatewayPrompts } from "./gateway-prompts.js";
import { mcpPost, rpcMessage, searchTool } from "./mcp.test-kit.js";

const catalogue = {
  listConnectors: async () => [{ name: "docs" }],
  completePaths: async () => ({ paths: [], total: 0 }),
  getDocumentByPath: async () => undefined,
  listDocuments: async () => [],
} as unknown as Catalogue;

const endpoint = createMcpEndpoint({
  name: "test",
  instructions: "test",
  logger: silentLogger,
  tools: [
    searchTool(async ({ query }) => ({ data: { query }, text: `found ${query}` })),
    defineTool({
      name: "context_get_document",
      title: "Get",
      description: "Gets.",
      tier: "read",
      scope: "context:read",
      input: { id: z.string() },
      output: z.object({}),
      run: async () => ({ data: {}, text: "doc" }),
    }),
  ],
  prompts: createGatewayPrompts({ context: { catalogue } }),
  resources: [createContextResources(catalogue)],
});
const client: AuthenticatedClient = { id: "cli_p", name: "p", scopes: ["context:read"] };

/** Sends one request as a client without a protocol version header does. */
async function ask(
  method: string,
  params: unknown,
  who: AuthenticatedClient = client,
): Promise<{ error?: { code: number; message: string } }> {
  const message = rpcMessage(method, params);
  return (await (await endpoint(mcpPost(message, { "mcp-protocol-version": null }), who)).json()) as {
    error?: { code: number; message: string };
  };
}

describe("malformed params", () => {
  it.each([
    ["resources/read", {}],
    ["resources/read", { uri: 5 }],
    ["resources/list", { cursor: 5 }],
    ["completion/complete", undefined],
    ["completion/complete", { ref: { type: "ref/prompt", uri: "x" }, argument: { name: "a", value: "" } }],
    ["completion/complete", { ref: { type: "ref/resource", name: "x" }, argument: { name: "a", value: "" } }],
    ["completion/complete", { ref: { type: "ref/prompt", name: "x" }, argument: { name: "a", value: 5 } }],
    ["logging/setLevel", { level: "loud" }],
    ["logging/setLevel", {}],
    ["prompts/get", { name: "ivoai_find_document", arguments: { source: 5, query: "q" } }],
    ["prompts/get", {}],
  ])("%s %j is -32602 with a short reason", async (method, params) => {
    const { error } = await ask(method, params);
    expect(error?.code).toBe(-32602);
    expect(error?.message).toMatch(/Invalid params: params/);
    expect(error?.message.length).toBeLessThan(600);
    expect(error?.message).not.toContain("\n");
  });

  it("still answers well-formed requests, and a handler's own refusal keeps its code", async () => {
    // A level for another credential: this one's answers stay JSON.
    expect(await ask("logging/setLevel", { level: "info" }, { ...client, id: "cli_other" })).toMatchObject({
      result: {},
    });
    expect(
      await ask("prompts/get", { name: "ivoai_find_document", arguments: { source: "docs" } }),
    ).toMatchObject({ error: { code: -32602 } });
    expect(await ask("resources/read", { uri: "ivoai://context/docs/missing.md" })).toMatchObject({
      error: { code: -32002 },
    });
  });
});
