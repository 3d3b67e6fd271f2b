// The session (conversation, thread) a page belongs to travels in its analysed terms as one leading marker, so
// that the index learns it with the terms: the marker is read off before indexing and never becomes a term.

const PREFIX = "session:";

/** The marker term for `session` (no analysed word contains ":"; whitespace would split it). */
export function sessionMarker(session: string): string {
  return `${PREFIX}${session.trim().replace(/\s+/g, "_")}`;
}

/** A page's analysed terms split into its session (if marked) and the terms to index. */
export function splitSessionMarker(terms: string): { session?: string; terms: string } {
  if (!terms.startsWith(PREFIX)) return { terms };
  const space = terms.indexOf(" ");
  const end = space < 0 ? terms.length : space;
  return { session: terms.slice(PREFIX.length, end), terms: space < 0 ? "" : terms.slice(space + 1) };
}
