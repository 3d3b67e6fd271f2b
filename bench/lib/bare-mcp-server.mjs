// The reference for the gateway benchmark: a bare official-SDK MCP server, stateless (a server and a transport
// per request, as the SDK's stateless example), JSON responses, one trivial tool, no authentication.
// Prints {"url": …} on stdout once listening on 127.0.0.1.
import { createServer } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";

const http = createServer(async (req, res) => {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString("utf8");
  const server = new McpServer({ name: "bare", version: "1" });
  server.registerTool("health", { description: "Says the server is up." }, async () => ({
    content: [{ type: "text", text: "ok" }],
  }));
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  res.on("close", () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, text ? JSON.parse(text) : undefined);
});
http.listen(0, "127.0.0.1", () => {
  const { port } = http.address();
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}/mcp` })}\n`);
});
process.on("SIGTERM", () => http.close(() => process.exit(0)));
