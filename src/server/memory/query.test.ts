// memory_query over a real SQLite store: speaker and entity fields, dates in pages and questions, the turns
// around a match in its session, and scopes confined while ranking.
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { tempDir } from "../../../test/helpers.js";
import { type PageInput, preparePageWrite } from "./page-write.js";
import { createMemorySearcher, type MemorySearcher } from "./query.js";
import { type MemoryStore, openMemoryStore } from "./store.js";

describe("memory_query", () => {
  let cleanup: () => Promise<void>;
  let store: MemoryStore;
  let searcher: MemorySearcher;
  const today = new Date("2026-06-10T09:00:00Z");
  const write = async (page: Omit<PageInput, "author" | "scope"> & { scope?: string }) =>
    store.writePage(
      preparePageWrite({ scope: "host:laptop", author: "agent", ...page }),
      today.toISOString(),
    );
  const paths = async (query: string, scopes = ["host:laptop"]) =>
    (await searcher.search(query, scopes, 10)).map((hit) => hit.page.path);

  beforeEach(async () => {
    let dir: string;
    ({ dir, cleanup } = await tempDir());
    store = await openMemoryStore(path.join(dir, "memory.sqlite"));
    searcher = createMemorySearcher(store, undefined, { now: () => today });
  });
  afterEach(async () => {
    await store.close();
    await cleanup();
  });

  it("finds a speaker's page by the speaker's name, which only the front matter holds", async () => {
    await write({ path: "standup/1", body: "---\nspeaker: Alice Moreau\n---\nThe budget is approved.\n" });
    await write({ path: "standup/2", body: "---\nspeaker: Bruno Lima\n---\nThe budget is approved.\n" });
    await write({
      path: "standup/3",
      body: "---\nentities: [Globex]\n---\nThe budget is approved for the client.\n",
    });
    expect((await paths("what did Alice say about the budget"))[0]).toBe("standup/1");
    expect((await paths("what did Bruno say about the budget"))[0]).toBe("standup/2");
    expect((await paths("Globex budget"))[0]).toBe("standup/3");
  });

  it("prefers pages dated in the month or week a question names, and reads a page's own dates against its date", async () => {
    await write({
      path: "decisions/a",
      body: "---\ndate: 2026-03-04\n---\nWe decided to ship the release.\n",
    });
    await write({
      path: "decisions/b",
      body: "---\ndate: 2026-05-12\n---\nWe decided to ship the release.\n",
    });
    await write({
      path: "decisions/c",
      body: "---\nvalid_from: 2026-06-03\n---\nWe decided to ship the release.\n",
    });
    expect((await paths("what did we decide in May"))[0]).toBe("decisions/b");
    expect((await paths("what did we decide in March"))[0]).toBe("decisions/a");
    // Today is Wednesday 10 June: last week is 1–7 June.
    expect((await paths("what did we decide last week"))[0]).toBe("decisions/c");
    // Undated questions keep the plain ranking: all three, oldest first on a tie.
    expect(await paths("what did we decide")).toEqual(["decisions/a", "decisions/b", "decisions/c"]);

    // Written on 2 June, "last week" is 25–31 May: the page answers a question about May.
    await write({ path: "retro/x", body: "---\ndate: 2026-06-02\n---\nLast week we picked PostgreSQL.\n" });
    await write({ path: "retro/y", body: "---\ndate: 2026-04-02\n---\nWe picked PostgreSQL.\n" });
    expect((await paths("what did we pick in May"))[0]).toBe("retro/x");
  });

  it("passes a match's score to the turns around it in its session, and only in its session", async () => {
    const turn = (session: string, text: string) => `---\nsession: ${session}\n---\n${text}\n`;
    await write({ path: "chat/0", body: turn("evening", "Who is bringing the cake to the party?") });
    await write({ path: "chat/1", body: turn("evening", "Monica will.") });
    await write({ path: "chat/2", body: turn("morning", "Sounds good to me.") });
    await write({ path: "loose/0", body: "Who is baking the cake?" });
    await write({ path: "loose/1", body: "Rachel said so." });
    const hits = await searcher.search("who brings the cake to the party", ["host:laptop"], 10);
    const answer = hits.find((hit) => hit.page.path === "chat/1");
    expect(answer?.via).toEqual(["graph"]);
    expect(answer?.neighbour_of).toEqual({ path: "chat/0", type: "session" });
    const found = hits.map((hit) => hit.page.path);
    // Neither another session's page written next to it nor pages without a session get its context.
    expect(found).not.toContain("chat/2");
    expect(found).not.toContain("loose/1");
  });

  it("weighs the turns of a window by their distance: the turn after the match ranks above one four turns before", async () => {
    const turn = (text: string) => `---\nsession: evening\n---\n${text}\n`;
    // Turns of equal length around the match, so that only their distance to it tells them apart.
    const filler = ["alpha bravo", "charlie delta", "echo foxtrot", "golf hotel", "india juliet"];
    const lines = [...filler, "birthday cake", ...filler.map((text) => text.toUpperCase())];
    for (const [i, text] of lines.entries()) await write({ path: `chat/${i}`, body: turn(text) });
    for (let i = 0; i < 20; i++) await write({ path: `other/${i}`, body: `Note ${i} about the garden.` });
    const found = await paths("birthday cake");
    expect(found[0]).toBe("chat/5");
    expect(found).toContain("chat/1");
    expect(found.indexOf("chat/6")).toBeLessThan(found.indexOf("chat/1"));
  });

  it("ranks within the caller's scopes, however many better matches other scopes hold", async () => {
    await store.writePages(
      Array.from({ length: 120 }, (_, i) =>
        preparePageWrite({
          scope: "git:other/repo",
          path: `notes/${i}`,
          body: "Kubernetes kubernetes cluster.",
          author: "agent",
        }),
      ),
      today.toISOString(),
    );
    await write({
      path: "ours",
      body: "A long note that mentions the kubernetes cluster once, among many other things.",
    });
    expect(await paths("kubernetes")).toEqual(["ours"]);
  });
});
