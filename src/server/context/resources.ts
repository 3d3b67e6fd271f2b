// Context documents as MCP resources: ivoai://context/{source}/{+path}, listed in (source, path) order, read
// with context_get_document's 8 MiB cut and untrusted-data notice, and completed from connectors and paths.
import { z } from "zod";
import { IvoaiError } from "../../shared/errors.js";
import {
  expandTemplate,
  type ListedResource,
  MAX_COMPLETION_VALUES,
  type ResourceSpec,
} from "../mcp/resources.js";
import type { Catalogue, DocumentKey, DocumentRecord } from "./catalogue.js";
import { MAX_DOCUMENT_BYTES } from "./filter.js";
import { CONNECTOR_NAME } from "./service.js";
import { UNTRUSTED_NOTICE } from "./tools.js";

export const CONTEXT_RESOURCE_TEMPLATE = "ivoai://context/{source}/{+path}";

const keySchema = z.tuple([z.string(), z.string()]);

function mimeTypeOf(relPath: string): string {
  return /\.(md|markdown|mdx)$/i.test(relPath) ? "text/markdown" : "text/plain";
}

/** A document's URI: the connector and each path segment percent-encoded. */
export function documentUri(connector: string, relPath: string): string {
  return expandTemplate(CONTEXT_RESOURCE_TEMPLATE, { source: connector, path: relPath });
}

/** The text cut to at most `max` bytes of UTF-8, never inside a character. */
export function cutToBytes(text: string, max: number): { text: string; truncated: boolean } {
  if (Buffer.byteLength(text) <= max) return { text, truncated: false };
  // A cut inside a multi-byte character leaves one replacement character at the end: dropped.
  return {
    text: Buffer.from(text)
      .subarray(0, max)
      .toString("utf8")
      .replace(/\uFFFD$/, ""),
    truncated: true,
  };
}

const listed = (doc: DocumentRecord): ListedResource => ({
  uri: documentUri(doc.connector, doc.rel_path),
  name: `${doc.connector}/${doc.rel_path}`,
  title: doc.title,
  mimeType: mimeTypeOf(doc.rel_path),
  size: doc.bytes,
  annotations: { lastModified: doc.modified_at },
});

/** The context resource family over a catalogue. */
export function createContextResources(catalogue: Catalogue): ResourceSpec {
  return {
    name: "context-document",
    template: CONTEXT_RESOURCE_TEMPLATE,
    scope: "context:read",
    title: "Organisation documents",
    description:
      "One indexed document by its source (connector) and relative path, as context_get_document returns it " +
      `(at most 8 MiB). ${UNTRUSTED_NOTICE}`,
    mimeType: "text/plain",
    async list(after, limit) {
      let key: DocumentKey | undefined;
      if (after !== undefined) {
        const parsed = keySchema.safeParse(safeJson(after));
        if (!parsed.success) throw new IvoaiError("USAGE", "invalid document cursor");
        key = { connector: parsed.data[0], rel_path: parsed.data[1] };
      }
      // One more than shown, to know whether a next page exists.
      const docs = await catalogue.listDocuments({ ...(key ? { after: key } : {}), limit: limit + 1 });
      const shown = docs.slice(0, limit);
      const last = shown.at(-1);
      return {
        resources: shown.map(listed),
        ...(docs.length > limit && last ? { next: JSON.stringify([last.connector, last.rel_path]) } : {}),
      };
    },
    async read({ source = "", path = "" }) {
      if (!CONNECTOR_NAME.test(source)) throw new IvoaiError("USAGE", "the source is not a connector name");
      const doc = await catalogue.getDocumentByPath(source, path);
      if (!doc) return undefined;
      const body = cutToBytes(doc.body, MAX_DOCUMENT_BYTES);
      return {
        text: `${UNTRUSTED_NOTICE}\n\n${body.text}`,
        mimeType: mimeTypeOf(doc.rel_path),
        untrusted: true,
        meta: {
          document_id: doc.id,
          title: doc.title,
          source: doc.connector,
          path: doc.rel_path,
          bytes: doc.bytes,
          modified_at: doc.modified_at,
          ...(body.truncated ? { truncated: true, max_bytes: MAX_DOCUMENT_BYTES } : {}),
        },
      };
    },
    complete: {
      async source(value) {
        const names = (await catalogue.listConnectors())
          .map((connector) => connector.name)
          .filter((name) => name.startsWith(value));
        return { values: names.slice(0, MAX_COMPLETION_VALUES), total: names.length };
      },
      async path(value, chosen) {
        if (!chosen.source) return { values: [], total: 0 };
        const { paths, total } = await catalogue.completePaths(chosen.source, value, MAX_COMPLETION_VALUES);
        return { values: paths, total };
      },
    },
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
