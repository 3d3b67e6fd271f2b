// Ingestion of hostile trees: a directory chain too deep to walk recursively, and hard links to files elsewhere.
import { execFileSync } from "node:child_process";
import { link, mkdir } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MAX_DEPTH } from "../src/server/context/connectors/index.js";
import { contextTree, writeTree } from "./context-helpers.js";
import { initRoot, runIvoai, tempDir } from "./helpers.js";

describe("context ingestion of hostile trees", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
  });
  const scratch = async () => {
    const made = await tempDir("ivoai-src-");
    cleanups.push(made.cleanup);
    return made.dir;
  };
  const tree = async () => {
    const made = await contextTree();
    cleanups.push(made.cleanup);
    return made;
  };
  const search = async (context: Awaited<ReturnType<Awaited<ReturnType<typeof tree>>["open"]>>, q: string) =>
    (await context.searcher.search(q, { limit: 10 })).map((hit) => hit.document.rel_path).sort();

  it("skips a 2,000-level directory chain past the depth limit and still indexes its siblings", async () => {
    const source = await scratch();
    const chain = (levels: number) => Array.from({ length: levels }, () => "d").join("/");
    await mkdir(path.join(source, chain(2000)), { recursive: true });
    await writeTree(source, {
      "a.md": "wombat first sibling",
      "z/b.md": "wombat last sibling",
      [`${chain(MAX_DEPTH)}/inside.md`]: "wombat at the depth limit",
      [`${chain(2000)}/beyond.md`]: "wombat far too deep",
    });
    const context = await (await tree()).open();
    try {
      await context.addConnector({ name: "docs", type: "filesystem", path: source });
      const [summary] = await context.ingest([]);
      expect(summary).toMatchObject({ added: 3, complete: true, skipped_by_reason: { "too deep": 1 } });
      expect(summary?.skipped_examples).toEqual([{ path: chain(MAX_DEPTH + 1), reason: "too deep" }]);
      expect(await search(context, "wombat")).toEqual(["a.md", `${chain(MAX_DEPTH)}/inside.md`, "z/b.md"]);
    } finally {
      await context.close();
    }
  });

  it("skips a hard link to a file outside the root unless the connector allows hard links", async () => {
    const source = await scratch();
    const outside = await scratch();
    await writeTree(outside, { "secret.md": "# Secret\n\nnarwhal launch codes" });
    await writeTree(source, { "guide.md": "narwhal guide" });
    await link(path.join(outside, "secret.md"), path.join(source, "innocent.md"));
    const context = await (await tree()).open();
    try {
      await context.addConnector({ name: "docs", type: "filesystem", path: source });
      const [summary] = await context.ingest([]);
      expect(summary).toMatchObject({ added: 1, complete: true, skipped_by_reason: { "hard link": 1 } });
      expect(await search(context, "narwhal")).toEqual(["guide.md"]);

      await context.removeConnector("docs");
      const added = await context.addConnector({
        name: "docs",
        type: "filesystem",
        path: source,
        allowHardlinks: true,
      });
      expect(added.allow_hardlinks).toBe(true);
      expect((await context.ingest([]))[0]).toMatchObject({ added: 2, skipped: 0 });
      expect(await search(context, "narwhal")).toEqual(["guide.md", "innocent.md"]);
    } finally {
      await context.close();
    }
  });

  it("skips hard-linked and too deep files of a git checkout too", async () => {
    const repo = await scratch();
    const outside = await scratch();
    await writeTree(outside, { "secret.md": "narwhal launch codes" });
    const deep = `${Array.from({ length: MAX_DEPTH + 1 }, () => "d").join("/")}/deep.md`;
    await writeTree(repo, { "README.md": "narwhal readme", [deep]: "narwhal deep" });
    await link(path.join(outside, "secret.md"), path.join(repo, "linked.md"));
    const git = (...args: string[]) => execFileSync("git", ["-C", repo, ...args], { stdio: "pipe" });
    git("init", "-q");
    git("add", "README.md", "linked.md", deep);
    const context = await (await tree()).open();
    try {
      await context.addConnector({ name: "repo", type: "git", path: repo });
      const [summary] = await context.ingest(["repo"]);
      expect(summary).toMatchObject({ added: 1, skipped_by_reason: { "hard link": 1, "too deep": 1 } });
      expect(await search(context, "narwhal")).toEqual(["README.md"]);
    } finally {
      await context.close();
    }
  });

  it("stores the opt-in given to 'server connector add --allow-hardlinks'", async () => {
    const root = await scratch();
    const source = await scratch();
    await initRoot(root);
    const add = (name: string, ...extra: string[]) =>
      runIvoai([
        "server",
        "connector",
        "add",
        name,
        "--type",
        "filesystem",
        "--path",
        source,
        "--root",
        root,
        "--json",
        ...extra,
      ]);
    expect(JSON.parse((await add("plain")).stdout)).toMatchObject({ allow_hardlinks: false });
    expect(JSON.parse((await add("linked", "--allow-hardlinks")).stdout)).toMatchObject({
      allow_hardlinks: true,
    });
    const list = JSON.parse(
      (await runIvoai(["server", "connector", "list", "--root", root, "--json"])).stdout,
    );
    expect(list).toMatchObject({
      connectors: [
        { name: "linked", allow_hardlinks: true },
        { name: "plain", allow_hardlinks: false },
      ],
    });
  });
});
