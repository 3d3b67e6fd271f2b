// The references for the gateway benchmark: a bare official-SDK MCP server with one trivial tool, JSON responses,
// no authentication. Stateless by default (a server and a transport per request, as the SDK's stateless example);
// `--stateful`: sessions kept (a server and a transport per session, made at initialize and reused by its every
// request, as the SDK's stateful example), the harder reference since no request pays for building a server.
// Prints {"url": …} on stdout once listening on 127.0.0.1.
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";

const stateful = process.argv.includes("--stateful");
/** Live sessions' transports by session id (stateful only). */
const sessions = new Map();

function newServer() {
  const server = new McpServer({ name: "bare", version: "1" });
  server.registerTool("health", { description: "Says the server is up." }, async () => ({
    content: [{ type: "text", text: "ok" }],
  }));
  return server;
}

async function statelessRequest(req, res, body) {
  const server = newServer();
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  res.on("close", () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}

async function statefulRequest(req, res, body) {
  const id = req.headers["mcp-session-id"];
  let transport = typeof id === "string" ? sessions.get(id) : undefined;
  if (!transport) {
    if (typeof id === "string" || body?.method !== "initialize") {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(
        JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32001, message: "Session not found" } }),
      );
      return;
    }
    const server = newServer();
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (sessionId) => sessions.set(sessionId, transport),
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
      void server.close();
    };
    await server.connect(transport);
  }
  await transport.handleRequest(req, res, body);
}

const http = createServer(async (req, res) => {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString("utf8");
  const body = text ? JSON.parse(text) : undefined;
  await (stateful ? statefulRequest(req, res, body) : statelessRequest(req, res, body));
});
http.listen(0, "127.0.0.1", () => {
  const { port } = http.address();
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}/mcp` })}\n`);
});
process.on("SIGTERM", () => http.close(() => process.exit(0)));
