import { hash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { cpuMs } from "../../../test/cpu-time.js";
import { analyzeText, analyzeWithOffsets, joinedTermsBetween } from "../retrieval/analyzer.js";
import { textOf } from "./catalogue.js";
import { chunkText } from "./chunker.js";
import { canonicalDocument } from "./document.js";
import { MAX_DOCUMENT_BYTES } from "./filter.js";
import { PIPELINE_VERSION, type PrepareJob, prepareDocument, toReplacement } from "./ingest-prepare.js";

const paragraph = (words: string, n: number) => `${Array.from({ length: n }, () => words).join(" ")}\n\n`;

/** Files as connectors read them: ASCII, Latin-1 letters, Greek (terms above U+00FF), astral, CRLF, NFD, BOM. */
const FILES: Record<string, Buffer> = {
  ascii: Buffer.from(`# Plain\n\n${paragraph("the wing flow at high speed", 120)}`),
  latin: Buffer.from(`# Ação\n\n${paragraph("a pressão sobre a asa é grande; café, naïve", 110)}`),
  greek: Buffer.from(`# Ελληνικά\n\n${paragraph("η πτέρυγα και η ροή του αέρα", 90)}`),
  astral: Buffer.from(`# Emoji\n\n${paragraph("wing 😀 flow 𝔸 lift", 150)}`),
  crlf: Buffer.from(`# Windows\r\n\r\n${paragraph("line endings\r\nchange here", 120)}`),
  nfd: Buffer.from(`# Decomposed\n\n${paragraph("cafe\u0301 na\u0303o", 200)}`),
  bom: Buffer.concat([
    Buffer.from([0xef, 0xbb, 0xbf]),
    Buffer.from(`# Marked\n\n${paragraph("ação rápida", 150)}`),
  ]),
};

const job = (name: string): PrepareJob => ({
  source: "docs",
  sourceType: "filesystem",
  relPath: `${name}.md`,
  data: new Uint8Array(FILES[name] as Buffer),
  mtimeMs: 1_700_000_000_000,
});

describe("prepareDocument", () => {
  for (const name of Object.keys(FILES)) {
    it(`gives the chunks, ids, terms and fingerprint of the canonical text as a string would (${name})`, () => {
      const prepared = prepareDocument(job(name));
      if (!("plan" in prepared)) throw new Error("not prepared");
      const raw = (FILES[name] as Buffer).toString("utf8").replace(/^\uFEFF/, "");
      const canonical = canonicalDocument({ ...job(name), text: raw });
      const reference = chunkText(canonical.id, canonical.text);
      expect(reference.length).toBeGreaterThan(1);
      expect(prepared.fingerprint).toBe(`${PIPELINE_VERSION}:${hash("sha256", canonical.text, "hex")}`);
      expect(textOf(prepared.body)).toBe(canonical.text);
      const replacement = toReplacement(prepared, "now", 1);
      expect(replacement.document).toMatchObject({ id: canonical.id, title: canonical.title });
      const analysed = analyzeWithOffsets(canonical.text);
      const header = analyzeText(canonical.title, analysed.language).join(" ");
      expect(
        replacement.chunks.map((chunk) => ({
          ...chunk,
          text: textOf(chunk.text),
          terms: textOf(chunk.terms),
        })),
      ).toEqual(
        reference.map((chunk) => {
          const body = joinedTermsBetween(analysed, chunk.unitStart, chunk.unitEnd);
          return {
            id: chunk.id,
            index: chunk.index,
            unitStart: chunk.unitStart,
            text: chunk.text,
            terms: body && header ? `${header} ${body}` : body,
          };
        }),
      );
    });
  }

  it("keeps a canonical file's own bytes as the body, past a byte order mark", () => {
    for (const name of ["ascii", "latin", "greek", "astral", "bom"]) {
      const input = job(name);
      const prepared = prepareDocument(input);
      if (!("plan" in prepared)) throw new Error("not prepared");
      expect(prepared.body.buffer).toBe(input.data.buffer);
      expect(prepared.body.byteOffset).toBe(name === "bom" ? 3 : 0);
    }
    for (const name of ["crlf", "nfd"]) {
      const input = job(name);
      const prepared = prepareDocument(input);
      if (!("plan" in prepared)) throw new Error("not prepared");
      expect(prepared.body.buffer).not.toBe(input.data.buffer);
    }
  });

  it("prepares the largest hostile files in linear time, their chunks rebuilding the exact text", () => {
    const fill = (unit: string) => unit.repeat(Math.floor(MAX_DOCUMENT_BYTES / Buffer.byteLength(unit)));
    const hostile = {
      // No space or newline anywhere (every cut is a hard one), astral and three-byte characters.
      astral: fill("😀𝔸ж"),
      // One endless word of Latin-1 letters.
      word: fill("ç"),
      // Carriage returns everywhere (the canonical text differs from the file) and NFD marks.
      crlf: fill("a\u0301\r\n"),
    };
    for (const [name, text] of Object.entries(hostile)) {
      const data = Buffer.from(text);
      expect(data.byteLength).toBeLessThanOrEqual(MAX_DOCUMENT_BYTES);
      let prepared: ReturnType<typeof prepareDocument> | undefined;
      const ms = cpuMs(
        () => (prepared = prepareDocument({ ...job("ascii"), relPath: `${name}.txt`, data })),
        1,
      );
      expect(ms, name).toBeLessThan(10_000);
      if (!prepared || !("plan" in prepared)) throw new Error(`${name}: not prepared`);
      const { chunks } = toReplacement(prepared, "now", data.byteLength);
      let rebuilt = "";
      for (const chunk of chunks) rebuilt += textOf(chunk.text).slice(rebuilt.length - chunk.unitStart);
      expect(rebuilt === textOf(prepared.body), name).toBe(true);
      expect(rebuilt === canonicalDocument({ ...job("ascii"), text }).text, name).toBe(true);
    }
  });

  it("answers unchanged for the fingerprint it already has, and skips binary content", () => {
    const first = prepareDocument(job("latin"));
    if (!("plan" in first)) throw new Error("not prepared");
    expect(prepareDocument({ ...job("latin"), knownFingerprint: first.fingerprint })).toEqual({
      fingerprint: first.fingerprint,
      unchanged: true,
    });
    expect(prepareDocument({ ...job("latin"), data: new Uint8Array([0x50, 0, 0x4b]) })).toEqual({
      skip: "binary content",
    });
  });
});
