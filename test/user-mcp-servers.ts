// The user's own MCP servers the tests register with `ivoai mcp add`: the stdio fixture's path, and a
// Streamable HTTP server (official SDK, stateless) with the tools named (default one, `lookup`), that answers 401
// without `secret` as its Authorization header.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";

export const USER_STDIO_FIXTURE = path.resolve("test/fixtures/user-stdio-mcp.mjs");

export async function startUserHttpServer(
  secret: string,
  tools: readonly string[] = ["lookup"],
): Promise<{ server: Server; url: string }> {
  const server = createServer(async (req, res) => {
    if (req.headers.authorization !== secret) {
      res.writeHead(401).end();
      return;
    }
    const mcp = new McpServer({ name: "user-http-fixture", version: "1.0.0" });
    for (const tool of tools)
      mcp.registerTool(tool, {}, async () => ({ content: [{ type: "text", text: `${tool} done` }] }));
    const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true });
    await mcp.connect(transport);
    await transport.handleRequest(req, res);
    res.on("close", () => void mcp.close());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp` };
}
