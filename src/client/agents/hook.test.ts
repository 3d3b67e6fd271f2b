import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { sendHook } from "./hook.js";

const servers: ReturnType<typeof createServer>[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

/** A real router stand-in on 127.0.0.1:0; returns its hooks URL and every request it got. */
async function endpoint(answer: (request: IncomingMessage, response: ServerResponse) => void) {
  const got: { headers: IncomingMessage["headers"]; body: unknown }[] = [];
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => {
      got.push({ headers: request.headers, body: JSON.parse(body) });
      answer(request, response);
    });
  });
  servers.push(server);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/memory`, got };
}

const session = (url: string) => ({
  IVOAI_ROUTER_HOOKS_URL: url,
  IVOAI_ROUTER_TOKEN: "capability",
  IVOAI_SESSION_ID: "ses_1",
  IVOAI_PROJECT: "acme",
});

describe("sendHook", () => {
  it("posts the observation with the router's capability and reports it sent", async () => {
    const router = await endpoint((_request, response) => response.writeHead(202).end());
    expect(await sendHook(session(router.url), "tool_used", { tool: "Bash" })).toBe("sent");
    expect(router.got).toEqual([
      {
        headers: expect.objectContaining({
          authorization: "Bearer capability",
          "content-type": "application/json",
        }),
        body: { session_id: "ses_1", project: "acme", event: "tool_used", data: { tool: "Bash" } },
      },
    ]);
  });

  it("reports a failure for an error answer, a redirect (not followed) and a router that does not answer", async () => {
    const elsewhere = await endpoint((_request, response) => response.writeHead(202).end());
    const failing = await endpoint((_request, response) => response.writeHead(500).end("no"));
    const redirecting = await endpoint((_request, response) =>
      response.writeHead(307, { location: elsewhere.url }).end(),
    );
    const silent = await endpoint(() => {});
    expect(await sendHook(session(failing.url), "session_end", {})).toBe("failed");
    expect(await sendHook(session(redirecting.url), "session_end", {})).toBe("failed");
    expect(elsewhere.got).toEqual([]);
    expect(await sendHook(session(silent.url), "session_end", {}, 200)).toBe("failed");
    expect(silent.got).toHaveLength(1);
  });

  it("skips outside an ivoai session and fails for a URL it cannot post to", async () => {
    expect(await sendHook({}, "session_start", {})).toBe("skipped");
    const { IVOAI_SESSION_ID: _, ...noSession } = session("http://127.0.0.1:9/");
    expect(await sendHook(noSession, "session_start", {})).toBe("skipped");
    expect(await sendHook(session("not a url"), "session_start", {})).toBe("failed");
    expect(await sendHook(session("file:///etc/passwd"), "session_start", {})).toBe("failed");
  });
});
