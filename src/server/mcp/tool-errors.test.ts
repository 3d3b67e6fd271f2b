// One error policy on the MCP tools' wire, as on HTTP: a caller's own errors cross with their message; the
// server's own failures answer a fixed text naming the request, and their details (hosts, paths) only reach
// the log, with the error's code (as error_code: the logger redacts any field named `code`, a sign-in code's
// name).
import { expect, it } from "vitest";
import { z } from "zod";
import { IVOAI_ERROR_CODES, IvoaiError } from "../../shared/errors.js";
import { createLogger } from "../../shared/logger.js";
import type { AuthenticatedClient } from "../enrollment/service.js";
import { wireErrorFor } from "../http/problem.js";
import { createMcpEndpoint, defineTool } from "./endpoint.js";

/** What each failure's own message carries: a detail only the log may hold. */
const SECRET_DETAIL = "/srv/ivoai/var/lib/secret-place connect ECONNREFUSED 10.0.0.7:5432";

const logged: string[] = [];
/** The error lines logged so far (every call also logs an info line). */
const failures = () =>
  logged.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.level === "error");
let thrown: unknown;
const endpoint = createMcpEndpoint({
  name: "test",
  instructions: "test",
  logger: createLogger({ write: (line) => logged.push(line) }),
  tools: [
    defineTool({
      name: "context_search",
      title: "Search",
      description: "Searches.",
      tier: "read",
      scope: "context:read",
      input: {},
      output: z.object({}),
      run: async () => {
        throw thrown;
      },
    }),
  ],
});
const client: AuthenticatedClient = { id: "cli_reader", name: "r", scopes: ["context:read"] };

async function callFailing(error: unknown): Promise<string> {
  thrown = error;
  const response = await endpoint(
    new Request("http://127.0.0.1/mcp", {
      method: "POST",
      headers: {
        accept: "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": "2025-06-18",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "context_search", arguments: {} },
      }),
    }),
    client,
    "req_test42",
  );
  const body = (await response.json()) as {
    result: {
      isError?: boolean;
      content: { text: string }[];
      structuredContent: { data: { error: string } };
    };
  };
  expect(body.result.isError).toBe(true);
  expect(body.result.structuredContent.data.error).toBe(body.result.content[0]?.text.replace(/^Error: /, ""));
  return body.result.structuredContent.data.error;
}

it("passes a caller's error through and keeps the server's own failures in the log, for every code", async () => {
  for (const code of IVOAI_ERROR_CODES) {
    logged.length = 0;
    const message = await callFailing(new IvoaiError(code, `${code} failed at ${SECRET_DETAIL}`));
    if (wireErrorFor(code).status < 500) {
      expect({ code, message }).toEqual({ code, message: `${code} failed at ${SECRET_DETAIL}` });
      expect(failures()).toEqual([]);
    } else {
      expect({ code, message }).toEqual({
        code,
        message: `${wireErrorFor(code).message} (request req_test42)`,
      });
      expect(failures()).toHaveLength(1);
      expect(failures()[0]).toMatchObject({
        msg: "tool failed",
        error_code: code,
        request_id: "req_test42",
        error: expect.stringContaining(SECRET_DETAIL),
      });
    }
  }
});

it("answers an unexpected exception with the generic text and logs it", async () => {
  logged.length = 0;
  expect(await callFailing(new TypeError(`cannot read ${SECRET_DETAIL}`))).toBe(
    "the server failed to handle the request (request req_test42)",
  );
  expect(JSON.stringify(failures())).toContain(SECRET_DETAIL);
});
