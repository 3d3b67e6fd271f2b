// The canonical document every connector's file becomes: stable id, source, path, title, normalised text.
import { hash } from "node:crypto";
import path from "node:path";
import { firstHeading } from "../../shared/first-heading.js";
import { parseFrontMatterYaml, splitFrontMatter } from "../../shared/front-matter.js";

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
  return `doc_${hash("sha256", `${source}\0${relPath}`, "hex").slice(0, 24)}`;
}

/** Line endings unified and Unicode composed, so the same content always yields the same chunks. */
/**
 * A character from U+0300 on. Below it every character is its own NFC form and combines with nothing
 * (NFC_Quick_Check=Yes, canonical combining class 0), so a text without one is already in NFC.
 */
const MAY_CHANGE_UNDER_NFC = /[\u0300-\uffff]/;

export function normalizeText(text: string): string {
  const lines = text.includes("\r") ? text.replace(/\r\n?/g, "\n") : text;
  // normalize() copies the whole text to check it: a text in Latin-1 and its neighbours is skipped.
  return MAY_CHANGE_UNDER_NFC.test(lines) ? lines.normalize("NFC") : lines;
}

/**
 * Front-matter `title:`, else the first markdown heading, else the file name without extension. Front matter
 * that is not valid YAML (or exceeds its limits) is ignored: a document is still indexed, by its body.
 */
export function extractTitle(text: string, relPath: string): string {
  const split = splitFrontMatter(text);
  const title = split ? frontMatterTitle(split.source) : undefined;
  if (title) return title.slice(0, 300);
  const heading = firstHeading(split ? split.body : text);
  if (heading) return heading.slice(0, 300);
  return path.basename(relPath).replace(/\.[^.]+$/, "");
}

function frontMatterTitle(source: string): string | undefined {
  try {
    const title = parseFrontMatterYaml(source).title;
    return typeof title === "string" && title.trim() ? title.trim() : undefined;
  } catch {
    return undefined;
  }
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
