import { describe, expect, it } from "vitest";
import { CHUNK_ID_LENGTH, chunkId, chunkText } from "./chunker.js";

const rebuild = (chunks: ReturnType<typeof chunkText>) => {
  let body = "";
  for (const chunk of chunks) body += chunk.text.slice(body.length - chunk.unitStart);
  return body;
};

describe("chunker", () => {
  const paragraph = (n: number) => `Paragraph ${n} ${"lorem ipsum dolor sit amet ".repeat(12)}\n`;
  const text = Array.from({ length: 30 }, (_, i) => paragraph(i)).join("");

  it("keeps chunks within 1,200 code points with about 150 of overlap, cut at newlines", () => {
    const chunks = chunkText("doc_1", text);
    expect(chunks.length).toBeGreaterThan(5);
    for (const chunk of chunks) expect(Array.from(chunk.text).length).toBeLessThanOrEqual(1200);
    for (const chunk of chunks.slice(0, -1)) expect(chunk.text.endsWith("\n")).toBe(true);
    for (let i = 1; i < chunks.length; i++) {
      const previous = chunks[i - 1] as (typeof chunks)[number];
      const overlap = previous.unitEnd - (chunks[i] as (typeof chunks)[number]).unitStart;
      expect(overlap).toBeGreaterThan(100);
      expect(overlap).toBeLessThan(200);
    }
    expect(rebuild(chunks)).toBe(text);
  });

  it("falls back to word boundaries, then hard cuts, and counts code points not UTF-16 units", () => {
    const words = "palavra ".repeat(400);
    for (const chunk of chunkText("doc_2", words).slice(0, -1)) expect(chunk.text.endsWith(" ")).toBe(true);
    const emoji = "😀".repeat(3000);
    const chunks = chunkText("doc_3", emoji);
    expect(Array.from(chunks[0]?.text ?? "").length).toBe(1200);
    expect(chunks[0]?.text.length).toBe(2400);
    expect(rebuild(chunks)).toBe(emoji);
  });

  it("is deterministic: ids derive from document id, index and text", () => {
    const a = chunkText("doc_1", text);
    const b = chunkText("doc_1", text);
    expect(a.map((chunk) => chunk.id)).toEqual(b.map((chunk) => chunk.id));
    expect(new Set(a.map((chunk) => chunk.id)).size).toBe(a.length);
    expect(chunkText("doc_other", text)[0]?.id).not.toBe(a[0]?.id);
    expect(chunkText("doc_1", "")).toEqual([]);
  });
});

describe("chunkId", () => {
  it("gives one id for a text and for its UTF-8 bytes, however long, and another for another index", () => {
    for (const text of ["Ação — Ελληνικά 😀", "x".repeat(40_000), ""]) {
      const id = chunkId("docs/a.md", 3, text);
      expect(id).toMatch(new RegExp(`^[0-9a-f]{${CHUNK_ID_LENGTH}}$`));
      expect(chunkId("docs/a.md", 3, new TextEncoder().encode(text))).toBe(id);
      expect(chunkId("docs/a.md", 4, text)).not.toBe(id);
    }
  });
});
