// Optional front matter of a page (title, tags, relations, expires_at) in a small YAML subset, and [[links]].

export interface PageMeta {
  title?: string;
  tags: string[];
  /** Typed edges: relation type → target page paths. */
  relations: Record<string, string[]>;
  expires_at?: string;
}

const LIST = /^\[(.*)\]$/;

function parseList(value: string): string[] {
  const inner = LIST.exec(value.trim())?.[1] ?? value;
  return inner
    .split(",")
    .map((item) => item.trim().replace(/^["']|["']$/g, ""))
    .filter((item) => item.length > 0);
}

/** Splits `---\n…\n---\n` front matter from the body; unknown keys are ignored. */
export function parseFrontMatter(text: string): { meta: PageMeta; body: string } {
  const match = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(text);
  const meta: PageMeta = { tags: [], relations: {} };
  if (!match) return { meta, body: text };
  let inRelations = false;
  for (const line of (match[1] ?? "").split(/\r?\n/)) {
    const nested = /^\s+([\w-]+):\s*(.*)$/.exec(line);
    if (inRelations && nested?.[1]) {
      meta.relations[nested[1]] = parseList(nested[2] ?? "");
      continue;
    }
    inRelations = false;
    const pair = /^([\w-]+):\s*(.*)$/.exec(line);
    if (!pair?.[1]) continue;
    const [key, value = ""] = [pair[1], (pair[2] ?? "").trim()];
    if (key === "title") meta.title = value.replace(/^["']|["']$/g, "");
    else if (key === "tags") meta.tags = parseList(value);
    else if (key === "expires_at") meta.expires_at = value.replace(/^["']|["']$/g, "");
    else if (key === "relations" && value === "") inRelations = true;
  }
  return { meta, body: text.slice(match[0].length) };
}

/** `[[path]]` and `[[path|label]]` targets in a body. */
export function wikiLinks(body: string): string[] {
  const out = new Set<string>();
  for (const match of body.matchAll(/\[\[([^\]|]{1,512})(?:\|[^\]]*)?\]\]/g))
    out.add((match[1] ?? "").trim());
  return [...out].filter((target) => target.length > 0);
}
