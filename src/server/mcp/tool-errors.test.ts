// One error policy on the MCP wire, as on HTTP: a caller's own errors cross with their message; the server's own
// failures answer a fixed text naming the request, and their details (hosts, paths) only reach the log, with the
// error's code (as error_code: the logger redacts any field named `code`, a sign-in code's name). Tools, resource
// reads, listings and completions, and prompts each get every IvoaiError code and an unexpected exception.
import { beforeEach, describe, expect, it } from "vitest";
import { IVOAI_ERROR_CODES, IvoaiError } from "../../shared/errors.js";
import { wireErrorFor } from "../http/problem.js";
import { createMcpEndpoint } from "./endpoint.js";
import { capturingLogger, READER, rpc, searchTool } from "./mcp.test-kit.js";
import type { PromptSpec } from "./prompts.js";
import type { ResourceSpec } from "./resources.js";

/** What each failure's own message carries: a detail only the log may hold. */
const SECRET_DETAIL = "/srv/ivoai/var/lib/secret-place connect ECONNREFUSED 10.0.0.7:5432";
const REQUEST_ID = "req_test42";

let thrown: unknown;
const fail = async (): Promise<never> => {
  throw thrown;
};
const log = capturingLogger();

/** A resource family whose every handler throws `thrown`. */
const failingResources: ResourceSpec = {
  name: "failing",
  template: "ivoai://failing/{name}",
  scope: "context:read",
  title: "Failing",
  description: "Fails.",
  mimeType: "text/plain",
  list: fail,
  read: fail,
  complete: { name: fail },
};
/** A prompt whose rendering throws `thrown`. */
const failingPrompt: PromptSpec = {
  name: "failing_prompt",
  title: "Failing",
  description: "Fails.",
  offeredWith: () => true,
  args: {},
  render: () => {
    throw thrown;
  },
};
const endpoint = createMcpEndpoint({
  name: "test",
  instructions: "test",
  logger: log.logger,
  tools: [searchTool(fail, {})],
  resources: [failingResources],
  prompts: [failingPrompt],
});

beforeEach(() => {
  log.lines.length = 0;
});

/** The message a caller reads when a tool throws `error`. */
async function toolFailure(error: unknown): Promise<string> {
  thrown = error;
  const answer = await rpc<{
    isError?: boolean;
    content: { text: string }[];
    structuredContent: { data: { error: string } };
  }>(endpoint, READER, "tools/call", { name: "context_search", arguments: {} }, REQUEST_ID);
  const result = answer.result;
  expect(result?.isError).toBe(true);
  expect(result?.structuredContent.data.error).toBe(result?.content[0]?.text.replace(/^Error: /, ""));
  return result?.structuredContent.data.error ?? "";
}

/** The JSON-RPC error a caller reads when a handler throws `error` (its code, and its message). */
async function handlerFailure(
  method: string,
  params: unknown,
  error: unknown,
): Promise<{ code: number; message: string }> {
  thrown = error;
  const answer = await rpc(endpoint, READER, method, params, REQUEST_ID);
  expect(answer.result).toBeUndefined();
  return answer.error as { code: number; message: string };
}

/** Each way a caller meets a failing handler, and the log line the server's own failure writes. */
interface Surface {
  name: string;
  logged: string;
  /** Caller-facing codes this surface answers with its own protocol error (a bad address, cursor or value). */
  own: readonly string[];
  answer(error: unknown): Promise<string>;
}

const HANDLERS: [name: string, logged: string, own: string[], method: string, params: unknown][] = [
  [
    "a resource read",
    "resource read failed",
    ["USAGE", "NOT_FOUND"],
    "resources/read",
    { uri: "ivoai://failing/x" },
  ],
  ["a resource listing", "MCP request failed", ["USAGE"], "resources/list", {}],
  [
    "a resource completion",
    "resource completion failed",
    ["USAGE"],
    "completion/complete",
    { ref: { type: "ref/resource", uri: "ivoai://failing/{name}" }, argument: { name: "name", value: "x" } },
  ],
  ["a prompt", "MCP request failed", [], "prompts/get", { name: "failing_prompt" }],
];

const SURFACES: Surface[] = [
  { name: "a tool", logged: "tool failed", own: [], answer: toolFailure },
  ...HANDLERS.map(([name, logged, own, method, params]) => ({
    name,
    logged,
    own,
    answer: async (error: unknown) => {
      const { code, message } = await handlerFailure(method, params, error);
      // The SDK writes an McpError's message with its code in front.
      expect(message.startsWith(`MCP error ${code}: `)).toBe(true);
      const internal = !(error instanceof IvoaiError) || wireErrorFor(error.code).status >= 500;
      expect({ code }).toEqual({ code: internal ? -32603 : -32602 });
      return message.slice(`MCP error ${code}: `.length);
    },
  })),
];

describe.each(SURFACES)("the error policy on $name", (surface) => {
  it("passes a caller's error through and keeps the server's own failures in the log, for every code", async () => {
    for (const code of IVOAI_ERROR_CODES) {
      if (surface.own.includes(code)) continue;
      log.lines.length = 0;
      const message = await surface.answer(new IvoaiError(code, `${code} failed at ${SECRET_DETAIL}`));
      if (wireErrorFor(code).status < 500) {
        expect({ code, message }).toEqual({ code, message: `${code} failed at ${SECRET_DETAIL}` });
        expect(log.at("error")).toEqual([]);
      } else {
        expect({ code, message }).toEqual({
          code,
          message: `${wireErrorFor(code).message} (request ${REQUEST_ID})`,
        });
        expect(log.at("error")).toHaveLength(1);
        expect(log.at("error")[0]).toMatchObject({
          msg: surface.logged,
          error_code: code,
          request_id: REQUEST_ID,
          error: expect.stringContaining(SECRET_DETAIL),
        });
      }
    }
  });

  it("answers an unexpected exception with the generic text and logs it", async () => {
    expect(await surface.answer(new TypeError(`cannot read ${SECRET_DETAIL}`))).toBe(
      `the server failed to handle the request (request ${REQUEST_ID})`,
    );
    expect(log.at("error")).toMatchObject([
      { msg: surface.logged, error_code: "UNEXPECTED", request_id: REQUEST_ID },
    ]);
    expect(JSON.stringify(log.at("error"))).toContain(SECRET_DETAIL);
  });
});
