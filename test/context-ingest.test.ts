// Ingestion against real files: what is skipped and why, nothing outside the root, reconciliation, determinism.
import { execFileSync } from "node:child_process";
import { chmod, mkdir, rm, symlink, truncate, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { serverConfigSchema } from "../src/config/server-config.js";
import { serverPaths } from "../src/config/server-paths.js";
import { STAT_TRUST_MS } from "../src/server/context/connectors/safe-fs.js";
import { PIPELINE_VERSION } from "../src/server/context/ingest-prepare.js";
import { openContextService } from "../src/server/context/service.js";
import { silentLogger } from "../src/shared/logger.js";
import { catalogueSnapshot, contextTree, writeTree } from "./context-helpers.js";
import { tempDir } from "./helpers.js";

const FORGED = `${PIPELINE_VERSION}:forged`;

describe("context ingestion", () => {
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

  it("skips hostile and unusable entries with a reason and never reads outside the root", async () => {
    const source = await scratch();
    const outside = await scratch();
    await writeTree(outside, { "secret-plans.md": "# Outside\n\nzebracorn launch codes" });
    await writeTree(source, {
      "docs/guide.md": "# Guide\n\nHow to rotate the zebracorn keys safely.",
      "docs/invalid.md": Buffer.from([0x66, 0x6f, 0xff, 0xfe, 0x6f]),
      "docs/binary.txt": Buffer.concat([Buffer.from("looks like text"), Buffer.alloc(64, 0)]),
      ".env": "TOKEN=zebracorn",
      ".git/HEAD": "ref: refs/heads/main",
    });
    await symlink(path.join(outside, "secret-plans.md"), path.join(source, "docs/linked.md"));
    await symlink(outside, path.join(source, "linked-dir"));
    execFileSync("mkfifo", [path.join(source, "docs/pipe.md")]);
    await truncate(path.join(source, "docs/huge.md"), 50 * 1024 * 1024).catch(async () => {
      await writeFile(path.join(source, "docs/huge.md"), "");
      await truncate(path.join(source, "docs/huge.md"), 50 * 1024 * 1024);
    });
    const context = await (await tree()).open();
    try {
      await context.addConnector({ name: "docs", type: "filesystem", path: source });
      const [summary] = await context.ingest([]);
      expect(summary).toMatchObject({ added: 1, complete: true });
      expect(summary?.skipped_by_reason).toEqual({
        "sensitive file": 1,
        "vcs internals": 1,
        symlink: 2,
        "special file": 1,
        "too large": 1,
        "invalid UTF-8": 1,
        "binary content": 1,
      });
      const hits = await context.searcher.search("zebracorn", { limit: 10 });
      expect(hits.map((hit) => hit.document.rel_path)).toEqual(["docs/guide.md"]);
      expect(JSON.stringify(hits)).not.toContain("launch codes");
    } finally {
      await context.close();
    }
  });

  it("enforces aggregate quotas and keeps what is already indexed", async () => {
    const source = await scratch();
    await writeTree(source, { "a.md": "alpha", "b.md": "bravo", "c.md": "charlie" });
    const made = await tree();
    const paths = serverPaths(made.root);
    const config = serverConfigSchema.parse({
      server: { public_url: "http://127.0.0.1:1" },
      context: { max_documents: 2 },
    });
    const context = openContextService({ paths, config, logger: silentLogger });
    try {
      await context.addConnector({ name: "docs", type: "filesystem", path: source });
      const [summary] = await context.ingest([]);
      expect(summary).toMatchObject({ added: 2, skipped: 1, skipped_by_reason: { "quota: documents": 1 } });
      expect((await context.catalogue.stats()).documents).toBe(2);
    } finally {
      await context.close();
    }
  });

  it("refuses a connector root that is a symlink or not a directory", async () => {
    const source = await scratch();
    const link = path.join(await scratch(), "link");
    await symlink(source, link);
    const context = await (await tree()).open();
    try {
      await expect(context.addConnector({ name: "a", type: "filesystem", path: link })).rejects.toThrow(
        /symbolic link/,
      );
      await expect(
        context.addConnector({ name: "b", type: "filesystem", path: "relative/dir" }),
      ).rejects.toThrow(/absolute/);
      await expect(
        context.addConnector({ name: "Bad Name", type: "filesystem", path: source }),
      ).rejects.toThrow(/invalid connector name/);
      await context.addConnector({ name: "ok", type: "filesystem", path: source });
      await expect(context.addConnector({ name: "ok", type: "filesystem", path: source })).rejects.toThrow(
        /already exists/,
      );
    } finally {
      await context.close();
    }
  });

  it("reconciles: updates changed documents, removes vanished ones, leaves unchanged ones alone", async () => {
    const source = await scratch();
    await writeTree(source, {
      "a.md": "# A\n\nalpha content",
      "b.md": "# B\n\nbravo content",
      "c.md": "# C\n\ncharlie",
    });
    const context = await (await tree()).open();
    try {
      await context.addConnector({ name: "docs", type: "filesystem", path: source });
      expect((await context.ingest([]))[0]).toMatchObject({ added: 3, updated: 0, removed: 0 });
      await writeFile(path.join(source, "b.md"), "# B\n\nbravo rewritten with delta");
      await rm(path.join(source, "c.md"));
      expect((await context.ingest([]))[0]).toMatchObject({ added: 0, updated: 1, unchanged: 1, removed: 1 });
      expect((await context.searcher.search("charlie", { limit: 5 })).length).toBe(0);
      const delta = await context.searcher.search("delta", { limit: 5 });
      expect(delta.map((hit) => hit.document.rel_path)).toEqual(["b.md"]);
      const body = await context.catalogue.getDocument(delta[0]?.document.id ?? "");
      expect(body?.body).toBe("# B\n\nbravo rewritten with delta");
    } finally {
      await context.close();
    }
  });

  it("does not remove anything when the enumeration fails part-way", async () => {
    const source = await scratch();
    await writeTree(source, { "a.md": "alpha", "sub/b.md": "bravo" });
    const context = await (await tree()).open();
    try {
      await context.addConnector({ name: "docs", type: "filesystem", path: source });
      await context.ingest([]);
      await rm(source, { recursive: true });
      const [summary] = await context.ingest([]);
      expect(summary?.complete).toBe(false);
      expect(summary?.removed).toBe(0);
      expect((await context.catalogue.stats()).documents).toBe(2);
    } finally {
      await context.close();
    }
  });

  it("gives identical catalogues for identical input, and removing a connector removes its documents", async () => {
    const source = await scratch();
    const long = Array.from(
      { length: 40 },
      (_, i) => `Line ${i} about turbines and compressores de ar.`,
    ).join("\n");
    await writeTree(source, { "x/long.md": `# Long\n\n${long}`, "y.md": "# Y\n\nyankee", "empty.md": "" });
    const first = await tree();
    const second = await tree();
    for (const made of [first, second]) {
      const context = await made.open();
      await context.addConnector({ name: "docs", type: "filesystem", path: source });
      await context.ingest([]);
      await context.close();
    }
    expect(catalogueSnapshot(first.root)).toBe(catalogueSnapshot(second.root));

    const context = await first.open();
    try {
      expect(await context.removeConnector("docs")).toEqual({ removed_documents: 3 });
      expect(await context.catalogue.stats()).toMatchObject({ documents: 0, chunks: 0, connectors: 0 });
      await expect(context.removeConnector("docs")).rejects.toThrow(/no connector/);
    } finally {
      await context.close();
    }
  });

  it("re-ingests files whose stat is unchanged without reading them, and reads touched or rewritten ones", async () => {
    const source = await scratch();
    await writeTree(source, {
      "a.md": "# A\n\nalpha",
      "sub/b.md": "# B\n\nbravo",
      "c.md": "# C\n\ncharlie",
      "d.md": "# D\n\ndelta",
    });
    const made = await tree();
    const catalogue = path.join(made.root, "var/lib/ivoai/context/catalogue.sqlite");
    const sql = (statement: string) => {
      const db = new Database(catalogue);
      try {
        return db.prepare(statement).all();
      } finally {
        db.close();
      }
    };
    const stats = () => sql("SELECT rel_path, source_stat FROM documents ORDER BY rel_path");
    const context = await made.open();
    try {
      await context.addConnector({ name: "docs", type: "filesystem", path: source });
      // A file changed in the last seconds is not trusted by its stat (a rewrite within the same timestamp tick
      // would keep it): the first run records none.
      expect((await context.ingest([]))[0]).toMatchObject({ added: 4 });
      expect(stats()).toEqual([
        { rel_path: "a.md", source_stat: null },
        { rel_path: "c.md", source_stat: null },
        { rel_path: "d.md", source_stat: null },
        { rel_path: "sub/b.md", source_stat: null },
      ]);
      // The files' age, not synchronisation: past the window, a run reads, finds them equal, records stats.
      await new Promise((resolve) => setTimeout(resolve, STAT_TRUST_MS + 100));
      expect((await context.ingest([]))[0]).toMatchObject({ unchanged: 4, updated: 0 });
      expect(stats().every((row) => typeof (row as { source_stat: unknown }).source_stat === "string")).toBe(
        true,
      );
      // Proof that the next run does not read them: a forged fingerprint survives it.
      sql(`UPDATE documents SET fingerprint = '${FORGED}' WHERE rel_path = 'a.md' RETURNING id`);
      expect((await context.ingest([]))[0]).toMatchObject({ unchanged: 4, updated: 0, removed: 0 });
      expect(sql("SELECT fingerprint FROM documents WHERE rel_path = 'a.md'")).toEqual([
        { fingerprint: FORGED },
      ]);
      // Touched (same bytes, new times), rewritten with the same bytes, or rewritten at the same size with other
      // bytes: read again, and compared by content.
      const before = sql("SELECT fingerprint FROM documents WHERE rel_path = 'd.md'");
      await utimes(path.join(source, "a.md"), new Date(), new Date());
      await writeFile(path.join(source, "c.md"), "# C\n\ncharlie CHANGED");
      await writeFile(path.join(source, "sub/b.md"), "# B\n\nbravo");
      await writeFile(path.join(source, "d.md"), "# D\n\nDELTA");
      expect((await context.ingest([]))[0]).toMatchObject({ updated: 3, unchanged: 1, added: 0 });
      expect(sql("SELECT fingerprint FROM documents WHERE rel_path = 'd.md'")).not.toEqual(before);
      const hits = await context.searcher.search("changed", { limit: 5 });
      expect(hits.map((hit) => hit.document.rel_path)).toEqual(["c.md"]);
      expect(sql("SELECT fingerprint FROM documents WHERE rel_path = 'a.md'")).not.toEqual([
        { fingerprint: FORGED },
      ]);
    } finally {
      await context.close();
    }
  });

  // root reads any file, so this only means something for an unprivileged user.
  it.runIf(process.getuid?.() !== 0)("skips unreadable files and keeps going", async () => {
    const source = await scratch();
    await writeTree(source, { "ok.md": "fine", "locked.md": "nope" });
    await chmod(path.join(source, "locked.md"), 0o000);
    const context = await (await tree()).open();
    try {
      await context.addConnector({ name: "docs", type: "filesystem", path: source });
      expect((await context.ingest([]))[0]?.skipped_by_reason).toEqual({ unreadable: 1 });
    } finally {
      await context.close();
    }
  });

  it("enumerates a git checkout without running its hooks or fsmonitor", async () => {
    const repo = await scratch();
    const marker = path.join(await scratch(), "fsmonitor-ran");
    const git = (...args: string[]) => execFileSync("git", ["-C", repo, ...args], { stdio: "pipe" });
    git("init", "-q");
    await writeTree(repo, {
      "README.md": "# Repo\n\nquokka documentation",
      "notes/follow-ups.md": "quokka follow-ups",
      "untracked.md": "quokka untracked",
      "hook.sh": `#!/bin/sh\ntouch ${marker}\n`,
    });
    await chmod(path.join(repo, "hook.sh"), 0o755);
    await symlink("/etc/passwd", path.join(repo, "passwd.md"));
    git("add", "README.md", "notes/follow-ups.md", "passwd.md");
    git("config", "core.fsmonitor", path.join(repo, "hook.sh"));
    await mkdir(path.join(repo, "nested"));
    const context = await (await tree()).open();
    try {
      await context.addConnector({ name: "repo", type: "git", path: repo });
      const [summary] = await context.ingest(["repo"]);
      expect(summary).toMatchObject({ added: 2, complete: true });
      expect(summary?.skipped_by_reason).toEqual({ symlink: 1 });
      const paths = (await context.searcher.search("quokka", { limit: 10 }))
        .map((hit) => hit.document.rel_path)
        .sort();
      expect(paths).toEqual(["README.md", "notes/follow-ups.md"]);
      await expect(import("node:fs/promises").then((fs) => fs.access(marker))).rejects.toThrow(/ENOENT/);
      await expect(
        context.addConnector({ name: "notgit", type: "git", path: await scratch() }),
      ).rejects.toThrow(/cannot enumerate git checkout/);
    } finally {
      await context.close();
    }
  });
});
