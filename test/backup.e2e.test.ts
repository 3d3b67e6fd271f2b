// Backup and restore through the built binary: a round trip under a live server, consistency under concurrent
// writes, and hostile backups refused with nothing written to the target.
import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { promises as fs, readFileSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  addDocsConnector,
  createCode,
  enroll,
  initRoot,
  type RunningServer,
  runIvoai,
  startServer,
  tempDir,
} from "./helpers.js";

type Envelope = { status: string; data: Record<string, unknown> };

const DOCS: Record<string, string> = {
  "queue.md": "# Billing queue\n\nThe axolotl queue carries billing events between services.\n",
  "deploy.md": "# Deploying\n\nDeploys run through the pangolin pipeline every Tuesday.\n",
  "oncall.md": "# On call\n\nThe on-call rotation pages through the quokka pager.\n",
};

async function writeDocs(dir: string): Promise<void> {
  for (const [name, text] of Object.entries(DOCS)) await fs.writeFile(path.join(dir, name), text);
}

async function ok(args: string[]): Promise<string> {
  const result = await runIvoai(args);
  if (result.code !== 0) throw new Error(`ivoai ${args.join(" ")} failed (${result.code}): ${result.stderr}`);
  return result.stdout;
}

/** Every row a user would miss after a restore, read straight from the memory store. */
function memoryRows(root: string): Record<string, unknown[]> {
  const db = new Database(path.join(root, "var/lib/ivoai/memory/memory.sqlite"), { readonly: true });
  try {
    return {
      pages: db
        .prepare(
          "SELECT scope, path, title, body, version, author, created_at FROM pages ORDER BY scope, path",
        )
        .all(),
      versions: db
        .prepare(
          "SELECT scope, path, version, body, deleted FROM page_versions ORDER BY scope, path, version",
        )
        .all(),
      edges: db.prepare("SELECT * FROM edges ORDER BY scope, from_path, type, to_path").all(),
      episodes: db
        .prepare("SELECT event_id, session_id, kind, data, credential_id FROM episodes ORDER BY id")
        .all(),
      approvals: db
        .prepare("SELECT id, status, path, base_version, decided_by FROM approvals ORDER BY id")
        .all(),
    };
  } finally {
    db.close();
  }
}

/** Every file under `dir` with its type, mode, size and content hash: "nothing written" means this is unchanged. */
async function treeState(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (current: string) => {
    for (const entry of await fs.readdir(current, { withFileTypes: true })) {
      const full = path.join(current, entry.name);
      const stat = await fs.lstat(full);
      const rel = path.relative(dir, full);
      if (entry.isDirectory()) {
        out[rel] = `dir ${stat.mode.toString(8)}`;
        await walk(full);
      } else {
        const hash = entry.isFile()
          ? createHash("sha256")
              .update(await fs.readFile(full))
              .digest("hex")
          : "";
        out[rel] = `${stat.mode.toString(8)} ${stat.size} ${hash}`;
      }
    }
  };
  await walk(dir);
  return out;
}

describe("server backup and restore", () => {
  let root: string;
  let cleanup: () => Promise<void>;
  let server: RunningServer | undefined;

  beforeAll(async () => {
    ({ dir: root, cleanup } = await tempDir());
    const docs = path.join(root, "docs");
    await fs.mkdir(docs);
    await writeDocs(docs);
    await initRoot(root);
    await addDocsConnector(root, docs);
    await ok(["server", "ingest", "--root", root]);
  });
  afterAll(async () => {
    await server?.stop();
    await cleanup();
  });

  it("round-trips documents, pages with history, approvals and episodes through a backup taken while serving", async () => {
    server = await startServer(root);
    const { code } = await createCode(root);
    const token = ((await (await enroll(server.url, code)).json()) as { credential: string }).credential;
    const agent = new Client({ name: "ivoai-test", version: "1" });
    await agent.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/v1/memory/mcp`), {
        requestInit: {
          headers: {
            authorization: `Bearer ${token}`,
            "x-ivoai-session-id": "s1",
            "x-ivoai-project": "git:acme/api",
          },
        },
      }),
    );
    const write = async (page: string, body: string) =>
      (
        (await agent.callTool({ name: "memory_write_page", arguments: { path: page, body } }))
          .structuredContent as Envelope
      ).data.approval_id as string;
    for (const body of [
      "# Queue\n\nWe use axolotl. See [[ops/pager]].",
      "# Queue\n\nWe use axolotl v2. See [[ops/pager]].",
    ]) {
      await ok(["server", "approvals", "approve", await write("decisions/queue", body), "--root", root]);
    }
    await ok([
      "server",
      "approvals",
      "reject",
      await write("decisions/queue", "# Queue\n\nrejected"),
      "--root",
      root,
    ]);
    await write("decisions/pending", "# Pending\n\nstill waiting");
    const hook = await fetch(`${server.url}/v1/memory`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({
        session_id: "s1",
        project: "git:acme/api",
        event: "prompt_submitted",
        data: { n: 1 },
      }),
    });
    expect(hook.status).toBe(202);
    await agent.close();

    const searches = async () =>
      Promise.all(
        ["axolotl queue", "pangolin", "quokka pager"].map((q) =>
          ok(["server", "search", q, "--json", "--root", root]),
        ),
      );
    // Requester names come from the tree's enrolled clients, which a backup does not carry (credentials stay
    // with their server): the requests themselves must come back exactly.
    const approvals = async () =>
      (
        JSON.parse(
          await ok(["server", "approvals", "list", "--status", "all", "--json", "--root", root]),
        ) as {
          approvals: Record<string, unknown>[];
        }
      ).approvals.map(({ requester_name: _name, ...request }) => request);
    const beforeSearch = await searches();
    expect(JSON.parse(beforeSearch[0] ?? "{}").results).toHaveLength(1);
    const beforeApprovals = await approvals();
    const beforeMemory = memoryRows(root);
    expect(beforeMemory.versions).toHaveLength(2);
    expect(beforeMemory.episodes).toHaveLength(1);

    // Taken while the server runs (SQLite's online backup, not a file copy), kept outside the data that is lost.
    const offsite = path.join(root, "offsite");
    const created = JSON.parse(
      await ok(["server", "backup", "create", "--out", offsite, "--json", "--root", root]),
    ) as {
      path: string;
      entries: { path: string }[];
    };
    expect(created.entries.map((entry) => entry.path).sort()).toEqual([
      "catalogue.sqlite",
      "index-rebuild.json",
      "memory.sqlite",
      "server.toml",
    ]);
    expect((await fs.stat(offsite)).mode & 0o777).toBe(0o700);
    expect((await fs.stat(created.path)).mode & 0o777).toBe(0o700);
    for (const name of await fs.readdir(created.path)) {
      expect((await fs.stat(path.join(created.path, name))).mode & 0o777).toBe(0o600);
    }
    const verified = await runIvoai(["server", "backup", "verify", created.path, "--json"]);
    expect(verified.code).toBe(0);
    const listed = JSON.parse(await ok(["server", "backup", "list", "--out", offsite, "--json"])) as {
      backups: { path: string; valid: boolean; format_version: number }[];
    };
    expect(listed.backups).toMatchObject([{ path: created.path, valid: true, format_version: 1 }]);

    // Restoring under the live server is refused, and the HTTP surface has no restore route.
    const live = await runIvoai(["server", "restore", created.path, "--root", root]);
    expect(live.code).toBe(1);
    expect(live.stderr).toMatch(/stop the server/);
    for (const route of ["/v1/restore", "/v1/admin/restore", "/v1/backup"]) {
      const response = await fetch(`${server.url}${route}`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}` },
      });
      expect(response.status).toBe(404);
    }
    await server.stop();
    server = undefined;

    await fs.rm(path.join(root, "var/lib/ivoai"), { recursive: true });
    // The connector definitions (folders the next ingest reads) come back only when the operator says so.
    const restored = await runIvoai([
      "server",
      "restore",
      created.path,
      "--root",
      root,
      "--apply-connectors",
      "--json",
    ]);
    expect(restored.code, restored.stderr).toBe(0);
    // This server signed it (its key stays in etc/ivoai/secrets), and its own settings are the backup's.
    const report = JSON.parse(restored.stdout);
    expect(report.restored.map((row: { action: string }) => row.action)).toEqual(["created", "created"]);
    expect(report.signature.status).toBe("this_server");
    expect(report.config).toEqual({ action: "unchanged", changes: [] });
    expect(report.not_restored).toEqual([]);
    await ok(["server", "init", "--root", root]);
    server = await startServer(root);
    expect((await fetch(`${server.url}/ready`)).status).toBe(200);
    expect(await searches()).toEqual(beforeSearch);
    expect(await approvals()).toEqual(beforeApprovals);
    expect(memoryRows(root)).toEqual(beforeMemory);
    await server.stop();
    server = undefined;

    // Restoring again into the populated tree merges: nothing is duplicated, nothing deleted.
    const again = JSON.parse(await ok(["server", "restore", created.path, "--root", root, "--json"]));
    expect(again.restored[1]).toMatchObject({
      action: "merged",
      added: { pages: 0, versions: 0, episodes: 0 },
    });
    expect(memoryRows(root)).toEqual(beforeMemory);
  });

  it("keeps rows the target has that the backup lacks", async () => {
    const { dir: other, cleanup: done } = await tempDir();
    try {
      await initRoot(other);
      const docs = path.join(other, "docs");
      await fs.mkdir(docs);
      await fs.writeFile(
        path.join(docs, "local.md"),
        "# Local\n\nOnly the target knows the wombat runbook.\n",
      );
      await ok([
        "server",
        "connector",
        "add",
        "local",
        "--type",
        "filesystem",
        "--path",
        docs,
        "--root",
        other,
      ]);
      await ok(["server", "ingest", "--root", other]);
      const backup = JSON.parse(await ok(["server", "backup", "create", "--json", "--root", root])) as {
        path: string;
      };
      // Another server's backup: its signature and its connector need the operator's word.
      await ok(["server", "restore", backup.path, "--root", other, "--allow-unsigned", "--apply-connectors"]);
      const hits = (q: string) =>
        ok(["server", "search", q, "--json", "--root", other]).then((text) => JSON.parse(text).results);
      expect(await hits("wombat runbook")).toHaveLength(1);
      expect(await hits("pangolin")).toHaveLength(1);
    } finally {
      await done();
    }
  });

  it("takes consistent backups while another process writes", async () => {
    const store = path.join(root, "var/lib/ivoai/memory/memory.sqlite");
    // A writer in its own process: each transaction adds a page, its version row and bumps the generation.
    const writer: ChildProcess = spawn(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `import Database from "better-sqlite3";
         const db = new Database(${JSON.stringify(store)}, { timeout: 10000 });
         db.pragma("journal_mode = WAL");
         const page = db.prepare("INSERT INTO pages (scope, path, title, tags, relations, body, version, author, created_at, updated_at, terms, language) VALUES ('load', ?, 't', '[]', '{}', ?, 1, 'w', 'x', 'x', 'load', 'en')");
         const version = db.prepare("INSERT INTO page_versions (scope, path, version, title, body, tags, relations, author, written_at) VALUES ('load', ?, 1, 't', ?, '[]', '{}', 'w', 'x')");
         const bump = db.prepare("UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) WHERE key = 'load'");
         db.prepare("INSERT OR IGNORE INTO meta (key, value) VALUES ('load', '0')").run();
         const one = db.transaction((i) => { const body = "x".repeat(2000) + i; page.run("p" + i, body); version.run("p" + i, body); bump.run(); });
         for (let i = 0; ; i++) { one(i); if (i === 200) console.log("ready"); }`,
      ],
      { cwd: process.cwd(), stdio: ["ignore", "pipe", "inherit"] },
    );
    try {
      await new Promise<void>((resolve, reject) => {
        createInterface({ input: writer.stdout as NodeJS.ReadableStream }).once("line", () => resolve());
        writer.once("exit", (status) => reject(new Error(`writer exited ${status}`)));
      });
      for (let round = 0; round < 3; round++) {
        const backup = JSON.parse(await ok(["server", "backup", "create", "--json", "--root", root])) as {
          path: string;
        };
        expect((await runIvoai(["server", "backup", "verify", backup.path])).code).toBe(0);
        const db = new Database(path.join(backup.path, "memory.sqlite"), { readonly: true });
        const count = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
        const pages = count("SELECT COUNT(*) AS n FROM pages WHERE scope = 'load'");
        expect(pages).toBeGreaterThan(200);
        expect(count("SELECT COUNT(*) AS n FROM page_versions WHERE scope = 'load'")).toBe(pages);
        expect(count("SELECT CAST(value AS INTEGER) AS n FROM meta WHERE key = 'load'")).toBe(pages);
        db.close();
      }
    } finally {
      writer.kill("SIGKILL");
    }
  });
});

describe("hostile backups", () => {
  let work: string;
  let cleanup: () => Promise<void>;
  let good: string;
  let target: string;

  beforeAll(async () => {
    ({ dir: work, cleanup } = await tempDir());
    const source = path.join(work, "source");
    const docs = path.join(work, "docs");
    await fs.mkdir(docs);
    await writeDocs(docs);
    await initRoot(source);
    await addDocsConnector(source, docs);
    await ok(["server", "ingest", "--root", source]);
    // A first start creates the memory store, so the backup holds both stores.
    await (await startServer(source)).stop();
    good = (
      JSON.parse(await ok(["server", "backup", "create", "--json", "--root", source])) as { path: string }
    ).path;
    // The target has data of its own, which a refused restore must leave exactly as it was.
    target = path.join(work, "target");
    await initRoot(target);
    await addDocsConnector(target, docs);
  });
  afterAll(async () => cleanup());

  let serial = 0;
  /** A copy of the good backup, changed by `mutate`; its manifest is rewritten by `edit`. */
  async function hostile(
    mutate: (dir: string) => Promise<void>,
    edit?: (manifest: {
      format_version: number;
      stores: Record<string, { schema: number }>;
      entries: Record<string, unknown>[];
    }) => void,
  ): Promise<string> {
    serial += 1;
    const dir = path.join(work, `hostile-${serial}`);
    await fs.cp(good, dir, { recursive: true });
    await mutate(dir);
    if (edit) {
      const file = path.join(dir, "manifest.json");
      const manifest = JSON.parse(await fs.readFile(file, "utf8"));
      edit(manifest);
      await fs.writeFile(file, JSON.stringify(manifest));
    }
    return dir;
  }
  const sha = (data: Buffer | string) => createHash("sha256").update(data).digest("hex");
  const entry = (m: { entries: Record<string, unknown>[] }, name: string) =>
    m.entries.find((e) => e.path === name) as Record<string, unknown>;
  const noop = async () => {};
  /** Makes room for one more entry: a manifest lists at most as many entries as the format has names. */
  const dropOne = (m: { entries: Record<string, unknown>[] }) => {
    m.entries = m.entries.filter((e) => e.path !== "index-rebuild.json");
  };

  const cases: [string, () => Promise<string>, RegExp][] = [
    [
      "a path traversal entry",
      () =>
        hostile(noop, (m) => {
          entry(m, "server.toml").path = "../server.toml";
        }),
      /leaves the backup directory/,
    ],
    [
      "an absolute path entry",
      () =>
        hostile(noop, (m) => {
          entry(m, "server.toml").path = "/etc/ivoai/server.toml";
        }),
      /is absolute/,
    ],
    [
      "a symlinked entry",
      () =>
        hostile(async (dir) => {
          const outside = path.join(work, `outside-${serial}.sqlite`);
          await fs.rename(path.join(dir, "catalogue.sqlite"), outside);
          await fs.symlink(outside, path.join(dir, "catalogue.sqlite"));
        }),
      /symbolic link/,
    ],
    [
      "an entry bigger than the manifest says",
      () =>
        hostile(
          (dir) => fs.appendFile(path.join(dir, "server.toml"), "#".repeat(10_000)),
          (m) => {
            entry(m, "server.toml").size = 10;
          },
        ),
      /is \d+ bytes, the manifest says 10/,
    ],
    [
      "an entry over its size bound",
      async () => {
        const big = `${"#".repeat(2 * 1024 * 1024)}\n`;
        return hostile(
          (dir) => fs.writeFile(path.join(dir, "server.toml"), big),
          (m) => {
            Object.assign(entry(m, "server.toml"), { size: Buffer.byteLength(big), sha256: sha(big) });
          },
        );
      },
      /over its bound/,
    ],
    [
      "a wrong format version",
      () =>
        hostile(noop, (m) => {
          m.format_version = 2;
        }),
      /format version 2 is not supported/,
    ],
    [
      "a store schema newer than this ivoai",
      () =>
        hostile(noop, (m) => {
          (m.stores.catalogue as { schema: number }).schema = 99;
        }),
      /schema 99, newer than this ivoai/,
    ],
    [
      "a hash mismatch",
      () =>
        hostile(async (dir) => {
          const file = path.join(dir, "catalogue.sqlite");
          const data = await fs.readFile(file);
          data[data.length - 1] = (data[data.length - 1] ?? 0) ^ 0xff;
          await fs.writeFile(file, data);
        }),
      /does not match its SHA-256/,
    ],
    [
      "a store that is not a sound SQLite database (hash and size made to match)",
      async () => {
        const junk = Buffer.alloc(8192, 0x5a);
        return hostile(
          (dir) => fs.writeFile(path.join(dir, "catalogue.sqlite"), junk),
          (m) => {
            Object.assign(entry(m, "catalogue.sqlite"), { size: junk.length, sha256: sha(junk) });
          },
        );
      },
      /fails integrity_check/,
    ],
    [
      "a secrets entry",
      () =>
        hostile(
          (dir) =>
            fs
              .mkdir(path.join(dir, "secrets"))
              .then(() => fs.writeFile(path.join(dir, "secrets/key.pem"), "k")),
          (m) => {
            dropOne(m);
            m.entries.push({ path: "secrets/key.pem", kind: "config", size: 1, sha256: sha("k") });
          },
        ),
      /never restores secrets/,
    ],
    [
      "an OAuth store entry",
      () =>
        hostile(noop, (m) => {
          dropOne(m);
          m.entries.push({ path: "oauth.sqlite", kind: "memory", size: 0, sha256: sha("") });
        }),
      /never restores secrets/,
    ],
  ];

  /** Adds `sql` to a store of the backup and recomputes its size and SHA-256, as a reviewer with a hex editor would. */
  const tampered = (store: string, sql: string) =>
    hostile(
      async (dir) => {
        const db = new Database(path.join(dir, store));
        db.exec(sql);
        db.close();
      },
      (m) => {
        const data = readFileSync(path.join(work, `hostile-${serial}`, store));
        Object.assign(entry(m, store), { size: data.length, sha256: sha(data) });
      },
    );
  cases.push(
    [
      "a catalogue with a trigger and an extra table (hashes recomputed)",
      () =>
        tampered(
          "catalogue.sqlite",
          `CREATE TABLE loot (x TEXT);
           CREATE TRIGGER evil AFTER INSERT ON documents BEGIN INSERT INTO loot VALUES (new.id); END;`,
        ),
      /catalogue.sqlite holds schema ivoai does not create: unknown table "loot"; unknown trigger "evil"/,
    ],
    [
      "a memory store whose trigger would self-approve (hashes recomputed)",
      () =>
        tampered(
          "memory.sqlite",
          `CREATE TRIGGER approve AFTER INSERT ON approvals
           BEGIN UPDATE approvals SET status = 'approved' WHERE id = new.id; END;`,
        ),
      /memory.sqlite holds schema ivoai does not create: unknown trigger "approve"/,
    ],
    [
      "a store with a view",
      () => tampered("memory.sqlite", "CREATE VIEW pages_view AS SELECT * FROM pages;"),
      /unknown view "pages_view"/,
    ],
    [
      "a store whose table has a column of its own",
      () => tampered("catalogue.sqlite", "ALTER TABLE documents ADD COLUMN extra TEXT;"),
      /table "documents" has an unknown column extra/,
    ],
  );

  it.each(cases)("refuses %s and writes nothing", async (_name, make, message) => {
    const dir = await make();
    const before = await treeState(target);
    const result = await runIvoai(["server", "restore", dir, "--root", target]);
    expect(result.stderr).toMatch(message);
    expect(result.code).toBe(1);
    expect(await treeState(target)).toEqual(before);
    // verify reports the same problem.
    const verify = await runIvoai(["server", "backup", "verify", dir]);
    expect(verify.code).toBe(1);
    expect(verify.stderr).toMatch(message);
  });

  it("refuses to back up a store that is a symbolic link, and leaves no partial backup", async () => {
    const linked = path.join(work, "linked");
    await initRoot(linked);
    const catalogue = path.join(linked, "var/lib/ivoai/context/catalogue.sqlite");
    await fs.symlink(path.join(good, "catalogue.sqlite"), catalogue);
    const result = await runIvoai(["server", "backup", "create", "--root", linked]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/catalogue.sqlite: it is a symbolic link/);
    expect(await fs.readdir(path.join(linked, "var/lib/ivoai/backups"))).toEqual([]);
  });

  it("refuses a relative path, and a root whose pid file names a live server", async () => {
    const relative = await runIvoai([
      "server",
      "restore",
      path.relative(process.cwd(), good),
      "--root",
      target,
    ]);
    expect(relative.code).toBe(2);
    expect(relative.stderr).toMatch(/must be absolute/);
    // A real `ivoai server start` on the target: its pid file (JSON) names it, and restore refuses by that pid.
    const live = await startServer(target);
    try {
      const record = JSON.parse(await fs.readFile(path.join(target, "run/ivoai/server.pid"), "utf8")) as {
        pid: number;
      };
      expect(record.pid).toBe(live.child.pid);
      const running = await runIvoai(["server", "restore", good, "--root", target]);
      expect(running.code).toBe(1);
      expect(running.stderr).toMatch(new RegExp(`running \\(pid ${record.pid}, from .*server\\.pid\\)`));
    } finally {
      await live.stop();
    }
  });

  it("refuses while the server's start lock is held, writing nothing", async () => {
    // The lock `server start` takes to claim the pid file, held here the way it holds it.
    const lock = new Database(path.join(target, "run/ivoai/server.pid.lock"), { timeout: 0 });
    // Read the tree before locking: closing any descriptor of the lock file would drop this process's lock.
    const before = await treeState(target);
    lock.exec("BEGIN EXCLUSIVE");
    let result: Awaited<ReturnType<typeof runIvoai>>;
    try {
      result = await runIvoai(["server", "restore", good, "--root", target, "--allow-unsigned"]);
    } finally {
      lock.close();
    }
    expect(result.code, result.stdout).toBe(1);
    expect(result.stderr).toMatch(/a server for .* is starting or stopping \(.*server\.pid\.lock is held\)/);
    expect(await treeState(target)).toEqual(before);
  });

  it.runIf(process.getuid?.() === 0)(
    "as root, keeps the owner of every file it replaces and gives new ones their directory's owner",
    async () => {
      const owned = path.join(work, "owned");
      await initRoot(owned);
      await fs.rm(path.join(owned, "var/lib/ivoai/context"), { recursive: true, force: true });
      await fs.rm(path.join(owned, "var/lib/ivoai/memory"), { recursive: true, force: true });
      // A tree set up for a service user, as `server init --apply` leaves it (65534: nobody).
      const chownTree = async (dir: string) => {
        await fs.lchown(dir, 65534, 65534);
        for (const item of await fs.readdir(dir, { withFileTypes: true })) {
          const full = path.join(dir, item.name);
          if (item.isDirectory()) await chownTree(full);
          else await fs.lchown(full, 65534, 65534);
        }
      };
      await chownTree(owned);
      const result = await runIvoai(["server", "restore", good, "--root", owned, "--allow-unsigned"]);
      expect(result.code, result.stderr).toBe(0);
      for (const rel of [
        "etc/ivoai/server.toml",
        "var/lib/ivoai/context",
        "var/lib/ivoai/context/catalogue.sqlite",
        "var/lib/ivoai/memory",
        "var/lib/ivoai/memory/memory.sqlite",
        "run/ivoai/server.pid.lock",
      ]) {
        const stat = await fs.lstat(path.join(owned, rel));
        expect({ rel, uid: stat.uid, gid: stat.gid }).toEqual({ rel, uid: 65534, gid: 65534 });
      }
    },
  );
});

describe("restore keeps the target's settings and connectors, and tells signed backups apart", () => {
  let work: string;
  let cleanup: () => Promise<void>;
  let target: string;
  /** A backup of the target, signed by it. */
  let own: string;
  /** A backup of another server (its own signing key). */
  let foreign: string;

  beforeAll(async () => {
    ({ dir: work, cleanup } = await tempDir());
    const docs = path.join(work, "docs");
    await fs.mkdir(docs);
    await writeDocs(docs);
    const source = path.join(work, "source");
    await initRoot(source);
    await addDocsConnector(source, docs);
    await ok(["server", "ingest", "--root", source]);
    foreign = (
      JSON.parse(await ok(["server", "backup", "create", "--json", "--root", source])) as { path: string }
    ).path;
    target = path.join(work, "target");
    await initRoot(target);
    await addDocsConnector(target, docs);
    await ok(["server", "ingest", "--root", target]);
    own = (
      JSON.parse(await ok(["server", "backup", "create", "--json", "--root", target])) as { path: string }
    ).path;
  });
  afterAll(async () => cleanup());

  let serial = 0;
  const sha = (data: Buffer) => createHash("sha256").update(data).digest("hex");
  /** A copy of `from` changed by `mutate`, its manifest rehashed as someone who can write the folder would. */
  async function tamper(
    from: string,
    mutate: (dir: string) => Promise<void>,
    options: { keepSignature?: boolean } = {},
  ): Promise<string> {
    serial += 1;
    const dir = path.join(work, `tampered-${serial}`);
    await fs.cp(from, dir, { recursive: true });
    await mutate(dir);
    const file = path.join(dir, "manifest.json");
    const manifest = JSON.parse(await fs.readFile(file, "utf8")) as {
      entries: { path: string; size: number; sha256: string }[];
    };
    for (const entry of manifest.entries) {
      const data = await fs.readFile(path.join(dir, entry.path));
      Object.assign(entry, { size: data.length, sha256: sha(data) });
    }
    await fs.writeFile(file, JSON.stringify(manifest, null, 2));
    if (!options.keepSignature) await fs.rm(path.join(dir, "manifest.sig"));
    return dir;
  }
  /**
   * treeState without SQLite's -shm index and an empty -wal: the snapshot `backup create` takes leaves them beside
   * the target's store, and any later open of that store (the running-server check included) may tidy them away.
   */
  const dataState = async (dir: string) =>
    Object.fromEntries(
      Object.entries(await treeState(dir)).filter(
        ([name, state]) => !name.endsWith("-shm") && !(name.endsWith("-wal") && state.split(" ")[1] === "0"),
      ),
    );
  const sql = (file: string, text: string) => {
    const db = new Database(file);
    db.exec(text);
    db.close();
  };
  /** `server restore BACKUP --root target --allow-unsigned` with any further flags (the tampered backups are unsigned). */
  const restoreUnsigned = (backup: string, ...flags: string[]) =>
    runIvoai(["server", "restore", backup, "--root", target, "--allow-unsigned", ...flags]);
  const connectors = (root: string) => {
    const db = new Database(path.join(root, "var/lib/ivoai/context/catalogue.sqlite"), { readonly: true });
    try {
      return db.prepare("SELECT name, path FROM connectors ORDER BY name").all();
    } finally {
      db.close();
    }
  };

  it("verify takes --root (or IVOAI_SERVER_ROOT) and says whether that server signed the backup", async () => {
    const key = await fs.stat(path.join(target, "etc/ivoai/secrets/backup-signing.key"));
    expect(key.mode & 0o777).toBe(0o600);
    const mine = await runIvoai(["server", "backup", "verify", own, "--root", target, "--json"]);
    expect(mine.code, mine.stderr).toBe(0);
    expect(JSON.parse(mine.stdout).signature).toMatchObject({ status: "this_server" });
    const byEnv = await runIvoai(["server", "backup", "verify", own], { env: { IVOAI_SERVER_ROOT: target } });
    expect(byEnv.code, byEnv.stderr).toBe(0);
    expect(byEnv.stdout).toMatch(/signature: signed by this server \(key id [0-9a-f]{16}\)/);
    const theirs = await runIvoai(["server", "backup", "verify", foreign, "--root", target]);
    expect(theirs.code, theirs.stderr).toBe(0);
    expect(theirs.stdout).toContain(
      `warning: NOT signed by the server at ${target}: signed with another server's key`,
    );
  });

  it("refuses a backup whose data was changed and manifest rehashed, and needs --allow-unsigned once the signature is gone", async () => {
    // A change SQLite's integrity_check cannot see: the connector now reads /root.
    const change = (dir: string) =>
      Promise.resolve(sql(path.join(dir, "catalogue.sqlite"), "UPDATE connectors SET path = '/root'"));
    const resigned = await tamper(own, change, { keepSignature: true });
    const verify = await runIvoai(["server", "backup", "verify", resigned, "--root", target]);
    expect(verify.code).toBe(1);
    expect(verify.stderr).toContain("its signature does not match manifest.json");
    const restore = await restoreUnsigned(resigned);
    expect(restore.code).toBe(1);
    expect(restore.stderr).toContain("its signature does not match manifest.json");
    const before = await dataState(target);

    const stripped = await tamper(own, change);
    const unsigned = await runIvoai(["server", "backup", "verify", stripped, "--root", target, "--json"]);
    expect(unsigned.code, unsigned.stderr).toBe(0);
    expect(JSON.parse(unsigned.stdout).signature.status).toBe("unsigned");
    const refused = await runIvoai(["server", "restore", stripped, "--root", target]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/refusing to restore: the backup is unsigned .*pass --allow-unsigned/);
    expect(await dataState(target)).toEqual(before);
  });

  it("keeps the target's server.toml against a hostile backup, shows the diff, and applies it only with --apply-config", async () => {
    const hostileToml = [
      "[server]",
      'public_url = "https://evil.example"',
      'listen = "0.0.0.0:8080"',
      'trusted_proxy_cidrs = ["0.0.0.0/0"]',
      "[limits]",
      "max_body_bytes = 1099511627776",
      "[context.embedder]",
      'provider = "tei"',
      'url = "https://evil.example/embed"',
      "",
    ].join("\n");
    const hostile = await tamper(own, (dir) => fs.writeFile(path.join(dir, "server.toml"), hostileToml));
    const configFile = path.join(target, "etc/ivoai/server.toml");
    const mine = await fs.readFile(configFile, "utf8");

    const restored = await restoreUnsigned(hostile, "--json");
    expect(restored.code, restored.stderr).toBe(0);
    expect(await fs.readFile(configFile, "utf8")).toBe(mine);
    const report = JSON.parse(restored.stdout);
    expect(report.config.action).toBe("kept");
    expect(report.config.changes).toEqual(
      expect.arrayContaining([
        { key: "server.listen", target: "127.0.0.1:0", backup: "0.0.0.0:8080" },
        { key: "server.trusted_proxy_cidrs", target: [], backup: ["0.0.0.0/0"] },
        { key: "server.public_url", target: "http://127.0.0.1:0", backup: "https://evil.example" },
        { key: "limits.max_body_bytes", target: "4MiB", backup: "1TiB" },
        { key: "context.embedder.url", backup: "https://evil.example/embed" },
      ]),
    );
    expect(report.restored.map((row: { entry: string }) => row.entry)).not.toContain("server.toml");
    const text = await restoreUnsigned(hostile);
    expect(text.stdout).toContain("NOT restored:");
    expect(text.stdout).toContain(
      "server.toml: the target's settings are kept; the backup's would change 10 (pass --apply-config to take them): ",
    );
    expect(text.stdout).toContain('server.listen: "127.0.0.1:0" -> "0.0.0.0:8080"');

    const before = await dataState(target);
    const dry = await runIvoai([
      "server",
      "restore",
      hostile,
      "--root",
      target,
      "--apply-config",
      "--dry-run",
      "--json",
    ]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ dry_run: true, config: { action: "written" } });
    expect(JSON.parse(dry.stdout).blocked[0]).toMatch(/unsigned/);
    expect(await dataState(target)).toEqual(before);

    const applied = await restoreUnsigned(hostile, "--apply-config");
    expect(applied.code, applied.stderr).toBe(0);
    expect(await fs.readFile(configFile, "utf8")).toBe(hostileToml);
    await fs.writeFile(configFile, mine);
  });

  it("never adds a backup's connector unless --apply-connectors, nor its documents", async () => {
    const hostile = await tamper(own, async (dir) =>
      sql(
        path.join(dir, "catalogue.sqlite"),
        `INSERT INTO connectors (name, type, path, created_at, allow_hardlinks)
           VALUES ('loot', 'filesystem', '/root', '2026-01-01T00:00:00Z', 1);
         INSERT INTO documents (id, connector, rel_path, title, language, fingerprint, bytes, modified_at, ingested_at, metadata)
           VALUES ('doc-loot', 'loot', '.ssh/id_rsa', 'key', 'en', 'f', 6, 'x', 'x', '{}');
         INSERT INTO chunks (doc, id, idx, unit_start, text, terms)
           SELECT key, 'chunk-loot', 0, 0, 'hunter2', 'hunter2' FROM documents WHERE id = 'doc-loot';`,
      ),
    );
    const before = connectors(target);
    const restored = await restoreUnsigned(hostile, "--json");
    expect(restored.code, restored.stderr).toBe(0);
    const report = JSON.parse(restored.stdout);
    expect(report.connectors).toContainEqual({
      name: "loot",
      action: "skip_new",
      backup: { type: "filesystem", path: "/root", allow_hardlinks: true },
      target: null,
      documents: 1,
    });
    expect(report.not_restored.join("\n")).toContain(
      'connector "loot" (filesystem "/root", hard links allowed) and its 1 document: the target has no such connector (pass --apply-connectors',
    );
    expect(connectors(target)).toEqual(before);
    const search = await ok(["server", "search", "hunter2", "--json", "--root", target]);
    expect(JSON.parse(search).results).toEqual([]);

    const applied = await restoreUnsigned(hostile, "--apply-connectors", "--json");
    expect(applied.code, applied.stderr).toBe(0);
    expect(connectors(target)).toContainEqual({ name: "loot", path: "/root" });
  });

  it("on a tree that does not exist, prints a command that works as printed, whose next steps work too", async () => {
    const fresh = path.join(work, "fresh/host");
    const dry = await runIvoai(["server", "restore", foreign, "--root", fresh, "--dry-run", "--json"]);
    expect(dry.code, dry.stderr).toBe(0);
    const plan = JSON.parse(dry.stdout);
    expect(plan.blocked).toHaveLength(2);
    expect(plan.config.changes).toContainEqual({ key: "server.listen", backup: "127.0.0.1:0" });
    await expect(fs.access(path.join(work, "fresh"))).rejects.toThrow();

    const refused = await runIvoai(["server", "restore", foreign, "--root", fresh]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`no server at ${fresh}`);
    await expect(fs.access(path.join(work, "fresh"))).rejects.toThrow();
    const command = /to go ahead, run: (ivoai .*)$/m.exec(refused.stderr)?.[1];
    expect(command, refused.stderr).toBe(
      `ivoai server restore ${foreign} --root ${fresh} --apply-config --allow-unsigned`,
    );
    const restored = await runIvoai((command ?? "").split(" ").slice(1));
    expect(restored.code, restored.stderr).toBe(0);
    const init = /^ {2}(ivoai server init .*?) {3}/m.exec(restored.stdout)?.[1];
    expect(init, restored.stdout).toBe(`ivoai server init --root ${fresh}`);
    const initialised = await runIvoai((init ?? "").split(" ").slice(1));
    expect(initialised.code, initialised.stderr).toBe(0);
    const server = await startServer(fresh);
    try {
      expect((await fetch(`${server.url}/ready`)).status).toBe(200);
    } finally {
      await server.stop();
    }
  });
});
