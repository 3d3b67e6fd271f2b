// Plain pages keep their conversation together: pages an agent writes as "Speaker: text" with no front matter are
// ranked with the turns its session (credential + x-ivoai-session-id) wrote around them, through the built server,
// the approval gate and the official MCP client; front matter's session still wins, and no session id means none.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  callTool,
  connectMcp,
  enrolledCredential,
  initRoot,
  proposeAndApprove,
  type RunningServer,
  startServer,
  tempDir,
} from "./helpers.js";

type Result = { path: string; via: string[]; neighbour_of?: { path: string; type: string } };

describe("memory sessions of plain pages", () => {
  let root: string;
  let cleanup: () => Promise<void>;
  let server: RunningServer;
  let approver: string;
  const clients: Client[] = [];

  beforeAll(async () => {
    ({ dir: root, cleanup } = await tempDir());
    await initRoot(root);
    server = await startServer(root);
    approver = await enrolledCredential(server.url, root, "approvals:read,approvals:decide");
  });
  afterAll(async () => {
    for (const client of clients) await client.close();
    await server?.stop();
    await cleanup();
  });

  const agent = async (token: string, session?: string) => {
    const client = await connectMcp(`${server.url}/v1/memory/mcp`, token, {
      "x-ivoai-project": "git:acme/friends",
      ...(session ? { "x-ivoai-session-id": session } : {}),
    });
    clients.push(client);
    return client;
  };
  /** Proposes a page and approves it through the gate, as a person would. */
  const write = async (client: Client, pagePath: string, body: string) => {
    expect(await proposeAndApprove(server.url, client, approver, { path: pagePath, body })).toEqual({
      proposed: "PENDING_HUMAN_APPROVAL",
      decided: 200,
    });
  };

  const query = async (client: Client, text: string) =>
    (await callTool(client, "memory_query", { query: text, limit: 10 })).data.results as Result[];

  it("ranks a plain turn with its session's window; other sessions, even with the same id, never share it", async () => {
    const token = await enrolledCredential(server.url, root);
    const museum = await agent(token, "scene-museum");
    const dentist = await agent(token, "scene-dentist");
    // Another credential naming the same session id is another session.
    const stranger = await agent(await enrolledCredential(server.url, root), "scene-museum");
    // Paths name no word (a folder "museum" would match the question itself). Interleaved, so that the other sessions' turns sit right beside the museum scene's in the store.
    await write(museum, "t1", "Monica: Who wants to come to the dinosaur museum on Saturday?");
    await write(dentist, "t2", "Chandler: Count me out, my molar hurts.");
    await write(stranger, "t3", "Janice: Oh my god, a parade downtown.");
    await write(museum, "t4", "Ross: Me! I will bring the sandwiches.");
    await write(dentist, "t5", "Joey: Pizza tonight then.");
    await write(stranger, "t6", "Janice: Bring an umbrella.");

    const results = await query(museum, "dinosaur museum Saturday");
    expect(results[0]?.path).toBe("t1");
    // The answer shares no word with the question: only its session's window finds it.
    expect(results.find((result) => result.path === "t4")).toMatchObject({
      neighbour_of: { path: "t1", type: "session" },
    });
    expect(results.map((result) => result.path).sort()).toEqual(["t1", "t4"]);
  });

  it("lets front matter's session win over the writing session", async () => {
    const token = await enrolledCredential(server.url, root);
    const first = await agent(token, "thread-1");
    const second = await agent(token, "thread-2");
    await write(first, "t7", "---\nsession: picnic\n---\nPhoebe: Where did we leave the blanket?\n");
    await write(second, "t8", "---\nsession: picnic\n---\nRachel: In the red car.\n");
    await write(second, "t9", "Rachel: The dry cleaner closes at six.");

    const paths = (await query(second, "blanket")).map((result) => result.path);
    expect(paths).toContain("t8");
    expect(paths).not.toContain("t9");
  });

  it("gives pages written without a session id, or with one the server refuses, no window", async () => {
    // An agent's header is untrusted: over 256 characters or with a space it names no session (the header's pattern).
    const hostile = [undefined, "s".repeat(257), "scene one"];
    const drinks = ["espresso", "cappuccino", "macchiato"];
    for (const [index, session] of hostile.entries()) {
      const drink = drinks[index] as string;
      const loner = await agent(await enrolledCredential(server.url, root), session);
      await write(loner, `u${index}a`, `Gunther: The ${drink} machine is broken.`);
      await write(loner, `u${index}b`, "Terry: Call the repairman.");
      // (Feedback expansion may bring an earlier loner's "machine is broken" page; never a session's neighbour.)
      const results = await query(loner, drink);
      expect(results[0]?.path).toBe(`u${index}a`);
      expect(results.filter((result) => result.path.endsWith("b") || result.neighbour_of)).toEqual([]);
    }
  });
});
