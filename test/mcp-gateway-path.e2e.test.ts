// The gateway's fast MCP path end to end: calls answered from the cached tool tables still stop at a
// revocation made by another process on the very next request, and a stopped server (SIGTERM) has written
// every call it answered to the audit log, though audit records are written in batches after the response.
import { request as httpRequest } from "node:http";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  connectMcp,
  createCode,
  enroll,
  initRoot,
  type RunningServer,
  runIvoai,
  startServer,
  tempDir,
} from "./helpers.js";

describe("gateway MCP path", () => {
  let root: string;
  let cleanup: () => Promise<void>;
  let server: RunningServer;

  beforeAll(async () => {
    ({ dir: root, cleanup } = await tempDir());
    await initRoot(root);
    server = await startServer(root);
  });
  afterAll(async () => {
    await server?.stop();
    await cleanup();
  });

  async function enrolled(): Promise<{ id: string; credential: string }> {
    const { code } = await createCode(root);
    const body = (await (await enroll(server.url, code)).json()) as { client_id: string; credential: string };
    return { id: body.client_id, credential: body.credential };
  }

  it("refuses oversized bodies and survives deeply nested JSON-RPC on the fast path", async () => {
    const { credential } = await enrolled();
    /**
     * The status the server answers. Kept alive (Node's default agent), the server reads and drops the rest of a
     * refused body; with `Connection: close` it would reset the socket, and the reset can lose its 413 in transit.
     */
    const post = (body: string, chunked = false) =>
      new Promise<number>((resolve, reject) => {
        const request = httpRequest(`${server.url}/v1/mcp/context`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${credential}`,
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            ...(chunked ? {} : { "content-length": Buffer.byteLength(body) }),
          },
        });
        request.on("response", (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        });
        request.on("error", (error: NodeJS.ErrnoException) => {
          if (error.code !== "EPIPE" && error.code !== "ECONNRESET") reject(error);
        });
        // Chunked: the body goes in 64 KiB writes with no length announced.
        for (let at = 0; at < body.length; at += 65_536) request.write(body.slice(at, at + 65_536));
        request.end();
      });
    const call = (args: string) =>
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"context_health","arguments":${args}}}`;
    const big = call(JSON.stringify({ pad: "x".repeat(5 * 1024 * 1024) }));
    expect(await post(big)).toBe(413);
    expect(await post(big, true)).toBe(413);
    // Nesting far deeper than any parser's stack, inside the size limit: an error answer, never a crash.
    const nested = await fetch(`${server.url}/v1/mcp/context`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${credential}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: call(`{"nest":${"[".repeat(200_000)}${"]".repeat(200_000)}}`),
    });
    expect(nested.status).toBeGreaterThanOrEqual(200);
    expect(nested.status).toBeLessThan(500);
    expect(await nested.json()).toMatchObject({ jsonrpc: "2.0", id: 1 });
    const client = await connectMcp(`${server.url}/v1/mcp/context`, credential);
    try {
      expect((await client.callTool({ name: "context_health", arguments: {} })).isError).toBeFalsy();
    } finally {
      await client.close();
    }
  });

  it("refuses a revoked credential on its very next call", async () => {
    const { id, credential } = await enrolled();
    const client = await connectMcp(`${server.url}/v1/mcp/context`, credential);
    try {
      for (let index = 0; index < 3; index++) {
        expect((await client.callTool({ name: "context_health", arguments: {} })).isError).toBeFalsy();
      }
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain("context_health");
      expect((await runIvoai(["server", "clients", "revoke", id, "--root", root])).code).toBe(0);
      await expect(client.callTool({ name: "context_health", arguments: {} })).rejects.toThrow(
        /invalid_token/,
      );
      await expect(client.listTools()).rejects.toThrow(/invalid_token/);
    } finally {
      await client.close();
    }
  });

  it("writes every answered call to the audit log before it stops on SIGTERM", async () => {
    const { credential } = await enrolled();
    const clients: Client[] = await Promise.all(
      Array.from({ length: 4 }, () =>
        connectMcp(`${server.url}/v1/mcp/context`, credential, { "x-ivoai-session-id": "sess-stop" }),
      ),
    );
    // Four clients in closed loops, then SIGTERM the moment the last answer is in: the last batch is
    // still pending then (records wait up to 20 ms for others), so only the flush on stop can save it.
    const answered = (
      await Promise.all(
        clients.map(async (client) => {
          let calls = 0;
          for (let index = 0; index < 25; index++) {
            const result = await client.callTool({ name: "context_health", arguments: {} });
            if (!result.isError) calls++;
          }
          return calls;
        }),
      )
    ).reduce((sum, calls) => sum + calls, 0);
    const stopped = await server.stop("SIGTERM");
    expect(stopped).toEqual({ code: 0, signal: null });
    await Promise.all(clients.map((client) => client.close()));

    const audit = await runIvoai(["server", "audit", "--root", root, "--json", "--kind", "tool_call"]);
    expect(audit.code).toBe(0);
    const events = (JSON.parse(audit.stdout) as { events: { session_id: string | null }[] }).events;
    expect(answered).toBe(100);
    expect(events.filter((event) => event.session_id === "sess-stop")).toHaveLength(answered);
    server = await startServer(root);
  });
});
