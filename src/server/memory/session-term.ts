// The session (conversation, thread) a page belongs to travels in its analysed terms as one leading marker, so
// that the index learns it with the terms: the marker is read off before indexing and never becomes a term.
// A page's session is its front matter's `session:`, else the session the server saw write it (writerSession).

const PREFIX = "session:";

/** The marker term for `session` (no analysed word contains ":"; whitespace would split it). */
export function sessionMarker(session: string): string {
  return `${PREFIX}${session.trim().replace(/\s+/g, "_")}`;
}

/**
 * The session of a page its writer's session wrote: the credential and the session id it sent (an agent's
 * `x-ivoai-session-id`, or a hook event's `session_id`), so that two credentials naming the same id never share
 * one. Written with "@", which front matter could only name on purpose.
 */
export function writerSession(credentialId: string, sessionId: string): string {
  return `@${credentialId}/${sessionId}`;
}

/** A page's analysed terms split into its session (if marked) and the terms to index. */
export function splitSessionMarker(terms: string): { session?: string; terms: string } {
  if (!terms.startsWith(PREFIX)) return { terms };
  const space = terms.indexOf(" ");
  const end = space < 0 ? terms.length : space;
  return { session: terms.slice(PREFIX.length, end), terms: space < 0 ? "" : terms.slice(space + 1) };
}
