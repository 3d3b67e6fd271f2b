// Optional YAML front matter of a page (title, tags, relations, expires_at; for conversations speaker,
// entities, session and date), and its [[links]], both read in linear time from text an agent wrote.
import { z } from "zod";
import { IvoaiError } from "../../shared/errors.js";
import { parseFrontMatterYaml, splitFrontMatter } from "../../shared/front-matter.js";

export interface PageMeta {
  title?: string;
  tags: string[];
  /** Typed edges: relation type → target page paths. */
  relations: Record<string, string[]>;
  expires_at?: string;
  /** Who said or wrote what the page records. */
  speaker?: string;
  /** People, places and things the page is about, beyond its text. */
  entities?: string[];
  /** The session, thread or conversation the page belongs to (`session` or `thread`). */
  session?: string;
  /** When what the page records happened (`date` or `valid_from`), as written. */
  date?: string;
}

/** A list as YAML (`[a, b]` or a block of `- a`), or one comma-separated string as before YAML. */
const list = z.union([
  z.array(z.string()),
  z.string().transform((text) =>
    text
      .split(",")
      .map((item) => item.trim())
      .filter((item) => item.length > 0),
  ),
]);

/** Every scalar is a string (failsafe schema); an empty value means the key is absent. Unknown keys are ignored. */
const metaSchema = z.object({
  title: z.string().nullish(),
  tags: list.nullish(),
  expires_at: z.string().nullish(),
  relations: z.union([z.record(z.string(), list), z.literal("")]).nullish(),
});

/** Fields for retrieval only: a shape they do not have leaves them out rather than refusing the page. */
const retrievalSchema = z.object({
  speaker: z.string().optional().catch(undefined),
  entities: list.optional().catch(undefined),
  session: z.string().optional().catch(undefined),
  thread: z.string().optional().catch(undefined),
  date: z.string().optional().catch(undefined),
  valid_from: z.string().optional().catch(undefined),
});

/**
 * Splits `---\n…\n---\n` front matter from the body. Throws a USAGE error when the front matter is not
 * valid YAML, exceeds its limits, or gives a field the wrong shape.
 */
export function parseFrontMatter(text: string): { meta: PageMeta; body: string } {
  const split = splitFrontMatter(text);
  const meta: PageMeta = { tags: [], relations: {} };
  if (!split) return { meta, body: text };
  const yaml = parseFrontMatterYaml(split.source);
  const parsed = metaSchema.safeParse(yaml);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.join(".") : "a field";
    throw new IvoaiError("USAGE", `invalid front matter: ${where} has the wrong shape (${issue?.message})`);
  }
  const { title, tags, expires_at, relations } = parsed.data;
  if (title) meta.title = title;
  if (tags) meta.tags = tags;
  if (expires_at) meta.expires_at = expires_at;
  if (relations) meta.relations = relations;
  const retrieval = retrievalSchema.safeParse(yaml);
  if (retrieval.success) {
    const { speaker, entities, session, thread, date, valid_from } = retrieval.data;
    if (speaker?.trim()) meta.speaker = speaker.trim();
    const named = entities?.map((entity) => entity.trim()).filter(Boolean) ?? [];
    if (named.length > 0) meta.entities = named;
    const group = (session ?? thread)?.trim();
    if (group) meta.session = group;
    const when = (date ?? valid_from)?.trim();
    if (when) meta.date = when;
  }
  return { meta, body: split.body };
}

/** `[[path]]` and `[[path|label]]` targets in a body (path: 1–512 characters, no `]` or `|`; label: no `]`). */
export function wikiLinks(body: string): string[] {
  const out = new Set<string>();
  // The next `]` and `|` at or after a position, kept while the scan moves forward: each is searched once.
  // -2: not searched yet; -1: none left in the body.
  let close = -2;
  let pipe = -2;
  let start = body.indexOf("[[");
  while (start !== -1) {
    const from = start + 2;
    if (close < from) close = body.indexOf("]", from);
    if (close === -1) break;
    if (body.charCodeAt(close + 1) !== 93) {
      // No `]]` ends at this `]`, so no link opening before it can match.
      start = body.indexOf("[[", close + 1);
      continue;
    }
    if (pipe !== -1 && pipe < from) pipe = body.indexOf("|", from);
    const targetEnd = pipe !== -1 && pipe < close ? pipe : close;
    const length = targetEnd - from;
    if (length >= 1 && length <= 512) {
      out.add(body.slice(from, targetEnd).trim());
      start = body.indexOf("[[", close + 2);
    } else {
      start = body.indexOf("[[", start + 1);
    }
  }
  return [...out].filter((target) => target.length > 0);
}
