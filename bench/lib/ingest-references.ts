// References for the ingest bench, over the same files in the same run: `wc -w` (reading and splitting words,
// the floor of any indexer) and SQLite FTS5 inserting them (a well-known single-threaded full-text indexer).
import { spawn } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import Database from "better-sqlite3";

/** Seconds `wc -w` takes over every file under `dir` (listed by find, passed by xargs), and the words it counts. */
export function wcWords(dir: string): Promise<{ seconds: number; words: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn("sh", ["-c", 'find "$1" -type f -print0 | xargs -0 wc -w', "sh", dir], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let total = 0;
    let tail = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (text: string) => {
      const lines = (tail + text).split("\n");
      tail = lines.pop() ?? "";
      // xargs may run wc more than once: sum the per-file counts, not the "total" lines.
      for (const line of lines) {
        const [count, name] = line.trim().split(/\s+/, 2);
        if (name !== "total") total += Number(count) || 0;
      }
    });
    child.once("error", reject);
    child.once("exit", (code) =>
      code === 0
        ? resolve({ seconds: (performance.now() - started) / 1000, words: total })
        : reject(new Error(`wc -w exited ${code}`)),
    );
  });
}

/** Seconds FTS5 (unicode61 tokenizer) takes to read every file under `dir` and index it, 500 per transaction. */
export async function fts5Insert(dir: string, dbFile: string): Promise<{ seconds: number; rows: number }> {
  const started = performance.now();
  const db = new Database(dbFile);
  try {
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.exec("CREATE VIRTUAL TABLE docs USING fts5(path, body, tokenize = 'unicode61 remove_diacritics 2')");
    const insert = db.prepare("INSERT INTO docs (path, body) VALUES (?, ?)");
    const batch = db.transaction((rows: [string, string][]) => {
      for (const row of rows) insert.run(row);
    });
    let rows = 0;
    let pending: [string, string][] = [];
    for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const file = path.join(entry.parentPath, entry.name);
      pending.push([file, await readFile(file, "utf8")]);
      if (pending.length === 500) {
        batch(pending);
        rows += pending.length;
        pending = [];
      }
    }
    batch(pending);
    rows += pending.length;
    return { seconds: (performance.now() - started) / 1000, rows };
  } finally {
    db.close();
  }
}
