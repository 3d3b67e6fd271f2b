// A deterministic synthetic corpus: documents stitched from the test collections' real sentences.
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { mulberry32 } from "../../src/shared/random.js";
import { loadCollection } from "./ir.js";

/** A seeded generator so every run generates the same corpus. */
export const createRandom = mulberry32;

export function sentencePool(): string[] {
  const pool: string[] = [];
  for (const name of ["cranfield", "adi", "faquad"]) {
    for (const doc of loadCollection(name).docs) {
      for (const sentence of doc.text.split(/(?<=[.!?])\s+/))
        if (sentence.length > 30) pool.push(sentence.trim());
    }
  }
  return pool;
}

export interface GeneratedCorpus {
  dir: string;
  files: number;
  bytes: number;
}

/** Writes `files` markdown files of about `bytesPerFile` each under `dir`, in folders of 500. */
export async function generateCorpus(
  dir: string,
  files: number,
  bytesPerFile: number,
  seed = 7,
): Promise<GeneratedCorpus> {
  const random = createRandom(seed);
  const pool = sentencePool();
  let bytes = 0;
  for (let file = 0; file < files; file++) {
    const folder = path.join(dir, `part-${String(Math.floor(file / 500)).padStart(4, "0")}`);
    if (file % 500 === 0) await mkdir(folder, { recursive: true });
    const title = pool[Math.floor(random() * pool.length)]?.slice(0, 80) ?? "untitled";
    const parts = [`# ${title}\n`];
    let size = parts[0]?.length ?? 0;
    while (size < bytesPerFile) {
      const paragraph: string[] = [];
      for (let i = 0; i < 3 + Math.floor(random() * 4); i++)
        paragraph.push(pool[Math.floor(random() * pool.length)] ?? "");
      const text = `${paragraph.join(" ")}\n\n`;
      parts.push(text);
      size += text.length;
    }
    const body = parts.join("");
    bytes += Buffer.byteLength(body);
    await writeFile(path.join(folder, `doc-${file}.md`), body);
  }
  return { dir, files, bytes };
}
