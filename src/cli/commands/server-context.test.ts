// `server search` in process with a fake index: the query and typed flags reach the search, the results and the
// empty-index hint print as they would from the real one.
import { describe, expect, it } from "vitest";
import { group, runInProcess } from "../invoke.test-kit.js";
import { createServerSearchCommand, type SearchCommandDeps } from "./server-context.js";

type Asked = Parameters<SearchCommandDeps["search"]>[2] & { query: string };

function fakeIndex(asked: Asked[], documents: number): SearchCommandDeps {
  return {
    search: async (_ctx, query, options) => {
      asked.push({ query, ...options });
      return { hits: [], documents };
    },
  };
}

const run = (deps: SearchCommandDeps, argv: string[]) =>
  runInProcess([group("server", [createServerSearchCommand(deps)])], argv);

describe("server search through its deps", () => {
  it("searches with --limit as a number (default 10) and --source as the connector", async () => {
    const asked: Asked[] = [];
    expect((await run(fakeIndex(asked, 3), ["server", "search", "deploy billing"])).stdout).toBe(
      "no matching documents\n",
    );
    await run(fakeIndex(asked, 3), ["server", "search", "q", "--limit", "25", "--source", "wiki"]);
    expect(asked).toEqual([
      { query: "deploy billing", limit: 10 },
      { query: "q", limit: 25, connector: "wiki" },
    ]);
  });

  it("says the index is empty and what to do", async () => {
    const { stdout } = await run(fakeIndex([], 0), ["server", "search", "q", "--json"]);
    expect(JSON.parse(stdout).hint).toContain("the index is empty");
  });

  it("refuses --limit 1e1 (once read as 10) and 101 before searching", async () => {
    const asked: Asked[] = [];
    for (const limit of ["1e1", "101", "0"]) {
      await expect(run(fakeIndex(asked, 3), ["server", "search", "q", "--limit", limit])).rejects.toThrow(
        `invalid --limit "${limit}": expected an integer from 1 to 100`,
      );
    }
    expect(asked).toEqual([]);
  });
});
