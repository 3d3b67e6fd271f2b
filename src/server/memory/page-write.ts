// Turns an agent's page (markdown with optional front matter, plus explicit fields) into a store write:
// normalised path and scope, metadata, analysed terms, graph edges.
import { IvoaiError } from "../../shared/errors.js";
import { firstHeading } from "../../shared/first-heading.js";
import { analyzeText, analyzeWithOffsets } from "../retrieval/analyzer.js";
import { dateExpressionTerms, dayTerms, parseDay, withPeriods } from "../retrieval/dates.js";
import { parseFrontMatter, wikiLinks } from "./front-matter.js";
import { normalizePagePath, normalizeScope } from "./page-path.js";
import { sessionMarker } from "./session-term.js";
import type { PageWrite } from "./store.js";

export interface PageInput {
  scope: string;
  path: string;
  /** Markdown, optionally starting with front matter. */
  body: string;
  title?: string;
  tags?: readonly string[];
  relations?: Readonly<Record<string, readonly string[]>>;
  expires_at?: string;
  author: string;
  /**
   * The session the server saw write the page (writerSession: the proposer's agent session, or a promoted
   * episode's hook session), kept through approval; front matter's `session:` wins over it.
   */
  session?: string;
}

export const MAX_PAGE_BYTES = 1024 * 1024;

/** A page's stored fields as a write would set them (no analysis): what an approver is shown it changes. */
export type PageFields = Pick<
  PageWrite,
  "scope" | "path" | "title" | "tags" | "relations" | "expires_at" | "body"
>;

/** The page `input` writes: its normalised place, metadata (explicit fields over front matter) and body. */
export function pageFields(input: PageInput): PageFields {
  return readPage(input).fields;
}

function readPage(input: PageInput) {
  if (Buffer.byteLength(input.body) > MAX_PAGE_BYTES) {
    throw new IvoaiError("USAGE", `pages are limited to ${MAX_PAGE_BYTES} bytes`);
  }
  // PostgreSQL text cannot hold U+0000, and no page needs it: refused alike on both backends.
  const texts = [
    input.body,
    input.path,
    input.title ?? "",
    ...(input.tags ?? []),
    ...Object.entries(input.relations ?? {}).flat(2),
  ];
  if (texts.some((text) => text.includes("\0")))
    throw new IvoaiError("USAGE", "page text may not contain NUL (U+0000) characters");
  const scope = normalizeScope(input.scope);
  const path = normalizePagePath(input.path);
  const { meta, body } = parseFrontMatter(input.body.replace(/\r\n?/g, "\n"));
  const title = (input.title ?? meta.title ?? firstHeading(body) ?? path.split("/").at(-1) ?? path).slice(
    0,
    300,
  );
  const tags = [...new Set([...(input.tags ?? meta.tags)].map((tag) => tag.trim()).filter(Boolean))].slice(
    0,
    50,
  );
  const relations: Record<string, string[]> = {};
  for (const [type, targets] of Object.entries(input.relations ?? meta.relations)) {
    if (!/^[a-z][a-z0-9_-]{0,40}$/i.test(type))
      throw new IvoaiError("USAGE", `invalid relation type '${type}'`);
    relations[type] = targets.map(normalizePagePath);
  }
  const expiresText = input.expires_at ?? meta.expires_at;
  let expires_at: string | null = null;
  if (expiresText) {
    const at = Date.parse(expiresText);
    if (Number.isNaN(at)) throw new IvoaiError("USAGE", `invalid expires_at '${expiresText}'`);
    expires_at = new Date(at).toISOString();
  }
  return { fields: { scope, path, title, tags, relations, expires_at, body: input.body }, meta, body };
}

export function preparePageWrite(input: PageInput): PageWrite {
  const { fields, meta, body } = readPage(input);
  const { path, title, tags, relations } = fields;
  const edges: [string, string][] = [];
  for (const target of wikiLinks(body)) {
    try {
      edges.push(["links_to", normalizePagePath(target)]);
    } catch {
      // A malformed link stays text; it just makes no edge.
    }
  }
  for (const [type, targets] of Object.entries(relations))
    for (const target of targets) edges.push([type, target]);
  for (const tag of tags) edges.push(["tagged", `tag/${tag.replace(/[^\p{L}\p{N}._-]+/gu, "-")}`]);
  const analysed = analyzeWithOffsets(body);
  // Title, tags, path, speaker and entities form the header (a field, as a chunk's title in context search).
  const header = analyzeText(
    `${title} ${tags.join(" ")} ${path.replace(/[/_.-]+/g, " ")} ${meta.speaker ?? ""} ${(meta.entities ?? []).join(" ")}`,
    analysed.language,
  );
  // A dated page carries its day, and the dates its own words name relative to it ("last week", "in May").
  const day = meta.date === undefined ? undefined : parseDay(meta.date);
  const dated =
    day === undefined
      ? []
      : [...new Set([...dayTerms(day), ...[...dateExpressionTerms(body, day).keys()].flatMap(withPeriods)])];
  const session = meta.session ?? input.session;
  const marker = session === undefined || session.trim() === "" ? [] : [sessionMarker(session)];
  return {
    ...fields,
    author: input.author,
    terms: [...marker, ...dated, ...header, ...analysed.terms].join(" "),
    language: analysed.language,
    edges,
  };
}
