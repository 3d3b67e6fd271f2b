import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { build } from "esbuild";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FrontendSessionUpdate, openSessionMap } from "./session-map.js";

let stateDir = "";
beforeEach(async () => {
  stateDir = await mkdtemp(path.join(os.tmpdir(), "ivoai-session-map-"));
});
afterEach(async () => {
  await rm(stateDir, { recursive: true, force: true });
});

const update = (thread: string): FrontendSessionUpdate => ({
  ivoai_session_id: "ses_1",
  threads: { codex: thread, claude: null },
  primary: "codex",
  selection: { requested: "auto", effective: "mdl_0a1b2c3d" },
});
const key = (frontendSession: string, cwd = "/work/a", scope: string[] = ["docs", "acme"]) => ({
  frontendSession,
  cwd,
  scope,
});

/** A clock the test moves by hand. */
function clock(start = Date.parse("2026-11-30T00:00:00Z")) {
  let at = start;
  return { now: () => new Date(at), advance: (ms: number) => (at += ms) };
}

describe("openSessionMap", () => {
  it("stores a mapping privately and finds it by session, directory and scope in any order", async () => {
    const map = openSessionMap(stateDir);
    const stored = await map.put(key("oc_1"), update("thr_a"));
    expect(stored.updated_at).toMatch(/^\d{4}-/);
    expect(await map.get(key("oc_1", "/work/a/", ["acme", "docs", "acme"]))).toEqual(stored);
    expect((await stat(map.file)).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(map.file))).mode & 0o777).toBe(0o700);
    // Reopened (another process would do the same): it is on disk.
    expect(await openSessionMap(stateDir).get(key("oc_1", "/work/a", ["docs", "acme"]))).toEqual(stored);
  });

  it("never crosses directories or knowledge scopes", async () => {
    const map = openSessionMap(stateDir);
    await map.put(key("oc_1"), update("thr_a"));
    await map.put(key("oc_1", "/work/b"), update("thr_b"));
    await map.put(key("oc_1", "/work/a", ["docs"]), update("thr_c"));
    expect((await map.get(key("oc_1")))?.threads.codex).toBe("thr_a");
    expect((await map.get(key("oc_1", "/work/b")))?.threads.codex).toBe("thr_b");
    expect((await map.get(key("oc_1", "/work/a", ["docs"])))?.threads.codex).toBe("thr_c");
    expect(await map.get(key("oc_1", "/work/a", []))).toBeNull();
    expect(await map.get(key("oc_2"))).toBeNull();
    expect(await map.list()).toHaveLength(3);
  });

  it("replaces a mapping in place and lists the most recently updated first", async () => {
    const time = clock();
    const map = openSessionMap(stateDir, { now: time.now });
    await map.put(key("oc_1"), update("thr_1"));
    time.advance(1000);
    await map.put(key("oc_2"), update("thr_2"));
    time.advance(1000);
    await map.put(key("oc_1"), {
      ...update("thr_1"),
      threads: { codex: "thr_1", claude: "thr_c" },
      primary: "claude",
    });
    const listed = await map.list();
    expect(listed.map((record) => record.key.frontendSession)).toEqual(["oc_1", "oc_2"]);
    expect(listed[0]?.value).toMatchObject({
      primary: "claude",
      threads: { codex: "thr_1", claude: "thr_c" },
    });
    expect(listed[0]?.key).toEqual({ frontendSession: "oc_1", cwd: "/work/a", scope: ["acme", "docs"] });
  });

  it("evicts the least recently updated beyond the bound and drops mappings older than the age limit", async () => {
    const time = clock();
    const map = openSessionMap(stateDir, { now: time.now, maxEntries: 3, maxAgeMs: 10_000 });
    for (const name of ["oc_1", "oc_2", "oc_3", "oc_4"]) {
      await map.put(key(name), update(name));
      time.advance(1000);
    }
    expect((await map.list()).map((record) => record.key.frontendSession)).toEqual(["oc_4", "oc_3", "oc_2"]);
    time.advance(7_500); // oc_2 is now 10.5 s old
    expect(await map.get(key("oc_2"))).toBeNull();
    expect((await map.get(key("oc_3")))?.threads.codex).toBe("oc_3");
    await map.put(key("oc_5"), update("oc_5"));
    const file = JSON.parse(await readFile(map.file, "utf8")) as { sessions: unknown[] };
    expect(file.sessions).toHaveLength(3);
  });

  it("keeps no body: only ids, the selection and the time are on disk", async () => {
    const map = openSessionMap(stateDir);
    await map.put(key("oc_1"), { ...update("thr_a"), prompt: "secret prompt" } as FrontendSessionUpdate);
    const text = await readFile(map.file, "utf8");
    expect(text).not.toContain("secret prompt");
    await expect(map.put(key("oc_1"), { ...update("x".repeat(500)) })).rejects.toThrow();
  });

  it("replaces a corrupt file, saying so once per read", async () => {
    const problems: string[] = [];
    const map = openSessionMap(stateDir, { onProblem: (line) => problems.push(line) });
    await mkdir(path.dirname(map.file), { recursive: true });
    await writeFile(map.file, "{not json", { mode: 0o600 });
    expect(await map.get(key("oc_1"))).toBeNull();
    expect(problems).toEqual([expect.stringContaining("is corrupt; it is replaced")]);
    await map.put(key("oc_1"), update("thr_a"));
    expect((await map.get(key("oc_1")))?.threads.codex).toBe("thr_a");
    expect(problems).toHaveLength(2); // the put read the corrupt file once more, under the lock
  });

  it("loses no mapping when several processes write at once", async () => {
    const entry = path.join(stateDir, "child-entry.ts");
    await writeFile(
      entry,
      `import { openSessionMap } from ${JSON.stringify(path.resolve("src/client/frontend/session-map.ts"))};
const [dir, who, count] = process.argv.slice(2);
const map = openSessionMap(dir);
for (let i = 0; i < Number(count); i++)
  await map.put({ frontendSession: who + "_" + i, cwd: "/w", scope: [] }, {
    ivoai_session_id: null, threads: { codex: "t" + i, claude: null }, primary: null,
    selection: { requested: "auto", effective: null } });
`,
    );
    // Bundled beside the worktree's node_modules so the child resolves better-sqlite3 like ivoai does.
    const outDir = path.resolve(".tmp", "session-map-child");
    await mkdir(outDir, { recursive: true });
    const bundle = path.join(outDir, `${path.basename(stateDir)}.mjs`);
    await build({
      entryPoints: [entry],
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      external: ["better-sqlite3"],
      outfile: bundle,
      logLevel: "silent",
    });
    const runChild = (who: string) =>
      new Promise<number | null>((resolve, reject) => {
        const proc = spawn(process.execPath, [bundle, stateDir, who, "15"], {
          stdio: ["ignore", "ignore", "inherit"],
        });
        proc.on("error", reject);
        proc.on("exit", resolve);
      });
    try {
      expect(await Promise.all(["a", "b", "c"].map(runChild))).toEqual([0, 0, 0]);
    } finally {
      await rm(bundle, { force: true });
    }
    const listed = await openSessionMap(stateDir).list();
    expect(listed).toHaveLength(45);
    expect(new Set(listed.map((record) => record.key.frontendSession)).size).toBe(45);
  });
});
