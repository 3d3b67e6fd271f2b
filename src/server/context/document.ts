// The canonical document every connector's file becomes: stable id, source, path, title, normalised text.
import { createHash } from "node:crypto";
import path from "node:path";

export interface CanonicalDocument {
  id: string;
  source: string;
  relPath: string;
  title: string;
  text: string;
  modifiedAt: string;
  metadata: Record<string, unknown>;
}

/** Stable across re-ingests: derived from the connector name and the relative path only. */
export function documentId(source: string, relPath: string): string {
  return `doc_${createHash("sha256").update(`${source}\0${relPath}`).digest("hex").slice(0, 24)}`;
}

/** Line endings unified and Unicode composed, so the same content always yields the same chunks. */
export function normalizeText(text: string): string {
  return text.replace(/\r\n?/g, "\n").normalize("NFC");
}

/** Front-matter `title:`, else the first markdown heading, else the file name without extension. */
export function extractTitle(text: string, relPath: string): string {
  const frontMatter = /^---\n([\s\S]*?)\n---\n/.exec(text)?.[1];
  const fromFrontMatter = frontMatter && /^title:\s*["']?(.+?)["']?\s*$/m.exec(frontMatter)?.[1];
  if (fromFrontMatter) return fromFrontMatter.slice(0, 300);
  const heading = /^#{1,3}\s+(.+?)\s*#*\s*$/m.exec(text.slice(0, 4096))?.[1];
  if (heading) return heading.slice(0, 300);
  return path.basename(relPath).replace(/\.[^.]+$/, "");
}

export function canonicalDocument(input: {
  source: string;
  sourceType: string;
  relPath: string;
  text: string;
  mtimeMs: number;
}): CanonicalDocument {
  const text = normalizeText(input.text);
  return {
    id: documentId(input.source, input.relPath),
    source: input.source,
    relPath: input.relPath,
    title: extractTitle(text, input.relPath),
    text,
    modifiedAt: new Date(Math.floor(input.mtimeMs)).toISOString(),
    metadata: {
      connector_type: input.sourceType,
      extension: path.extname(input.relPath).slice(1).toLowerCase(),
    },
  };
}
