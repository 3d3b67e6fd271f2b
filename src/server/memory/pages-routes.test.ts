// The page graph around one page, on a real store: depth, links to pages that do not exist, scopes and the cap.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { tempDir } from "../../../test/helpers.js";
import { preparePageWrite } from "./page-write.js";
import { MAX_GRAPH_NODES, pageGraph } from "./pages-routes.js";
import { type MemoryStore, openMemoryStore } from "./store.js";

describe("page graph", () => {
  let cleanup: () => Promise<void>;
  let store: MemoryStore;
  const write = (scope: string, path: string, body: string) =>
    store.writePage(preparePageWrite({ scope, path, body, author: "cli_a" }), "2026-01-01T00:00:00.000Z");

  beforeEach(async () => {
    const temp = await tempDir();
    cleanup = temp.cleanup;
    store = await openMemoryStore(`${temp.dir}/memory.sqlite`);
  });
  afterEach(async () => {
    await store.close();
    await cleanup();
  });

  it("walks links both ways to the requested depth; missing targets are nodes marked missing", async () => {
    await write("p", "a", "# A\n\n[[b]] [[ghost]]");
    await write("p", "b", "# B\n\n[[c]]");
    await write("p", "c", "# C");
    await write("p", "z", "# Z\n\n[[a]]");
    await write("_global", "g", "# G\n\n[[a]]");
    await write("other", "o", "# O\n\n[[a]]");

    const one = await pageGraph(store, "p", "a", 1);
    expect(one.nodes.map((node) => [node.path, node.scope, node.missing]).sort()).toEqual([
      ["a", "p", false],
      ["b", "p", false],
      ["g", "_global", false],
      ["ghost", "p", true],
      ["z", "p", false],
    ]);
    expect(one.edges).toHaveLength(4);
    expect(one.truncated).toBe(false);

    const two = await pageGraph(store, "p", "a", 2);
    expect(two.nodes.map((node) => node.path).sort()).toEqual(["a", "b", "c", "g", "ghost", "z"]);
    expect(two.edges).toContainEqual({ from: "b", to: "c", type: "links_to" });
  });

  it("stops at the node cap and says so", async () => {
    const links = Array.from({ length: MAX_GRAPH_NODES + 20 }, (_, index) => `[[n/${index}]]`).join(" ");
    await write("p", "hub", `# Hub\n\n${links}`);
    const graph = await pageGraph(store, "p", "hub", 1);
    expect(graph.nodes).toHaveLength(MAX_GRAPH_NODES);
    expect(graph.truncated).toBe(true);
    const names = new Set(graph.nodes.map((node) => node.path));
    expect(graph.edges.every((edge) => names.has(edge.from) && names.has(edge.to))).toBe(true);
  });
});
