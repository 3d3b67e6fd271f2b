// YAML front matter at the top of markdown written by agents or found in documents: located by linear
// scanning, then parsed by the yaml library only once a linear lexer pass has bounded its size, nesting and
// anchors (the parser itself slows down super-linearly on deeply nested or anchor-laden input).
import { Lexer, parseDocument, visit } from "yaml";
import { IvoaiError } from "./errors.js";

/** Real front matter is a few hundred bytes; the bound keeps yaml's worst case near 50 ms of blocked gateway. */
export const MAX_FRONT_MATTER_BYTES = 8 * 1024;
export const MAX_FRONT_MATTER_DEPTH = 16;
/** Anchors, aliases and tags together: front matter has no use for many. */
const MAX_NODE_PROPERTIES = 32;
/** yaml's guard against alias expansion ("billion laughs"). */
const MAX_ALIAS_COUNT = 32;

export interface FrontMatterSplit {
  /** The YAML between the fences. */
  source: string;
  /** Everything after the closing fence line. */
  body: string;
}

/** `---` on the first line up to the next line that is exactly `---`; undefined when the text has none. */
export function splitFrontMatter(text: string): FrontMatterSplit | undefined {
  const open = text.startsWith("---\n") ? 4 : text.startsWith("---\r\n") ? 5 : 0;
  if (open === 0) return undefined;
  let lineStart = open;
  for (;;) {
    const newline = text.indexOf("\n", lineStart);
    const lineEnd = newline === -1 ? text.length : newline;
    const length = lineEnd - lineStart;
    if (
      text.startsWith("---", lineStart) &&
      (length === 3 || (length === 4 && text.charCodeAt(lineStart + 3) === 13))
    ) {
      return { source: text.slice(open, lineStart), body: newline === -1 ? "" : text.slice(newline + 1) };
    }
    if (newline === -1) return undefined;
    lineStart = newline + 1;
  }
}

/**
 * The front matter's top-level mapping, every scalar a string (YAML failsafe schema: `1.0` stays "1.0").
 * Throws a USAGE error naming the problem when it is not valid YAML, too big, too deep or not a mapping.
 */
export function parseFrontMatterYaml(source: string): Record<string, unknown> {
  if (Buffer.byteLength(source) > MAX_FRONT_MATTER_BYTES) {
    throw invalid(`it is larger than ${MAX_FRONT_MATTER_BYTES} bytes`);
  }
  checkShape(source);
  const doc = withoutStackTraces(() =>
    parseDocument(source, { schema: "failsafe", uniqueKeys: false, prettyErrors: false }),
  );
  const error = doc.errors[0];
  if (error) throw invalid(`${error.message.split("\n")[0]} (${where(source, error.pos[0])})`);
  visit(doc, {
    Map(_key, map) {
      const seen = new Set<string>();
      for (const pair of map.items) {
        const key = String(pair.key);
        if (seen.has(key)) throw invalid(`the key '${key}' appears twice`);
        seen.add(key);
      }
    },
  });
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (cause) {
    throw invalid(cause instanceof Error ? cause.message : String(cause));
  }
  if (value === null || value === undefined || value === "") return {};
  if (typeof value !== "object" || Array.isArray(value))
    throw invalid("it must be a mapping of keys to values");
  return value as Record<string, unknown>;
}

/**
 * yaml creates one Error per problem, and hostile input has thousands: capturing their stack traces is most
 * of its cost. Synchronous, so no other code runs with the limit lowered.
 */
function withoutStackTraces<T>(run: () => T): T {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return run();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

function where(source: string, offset: number): string {
  let line = 1;
  let lineStart = 0;
  for (let i = source.indexOf("\n"); i !== -1 && i < offset; i = source.indexOf("\n", i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return `front matter line ${line}, column ${offset - lineStart + 1}`;
}

function invalid(reason: string): IvoaiError {
  return new IvoaiError("USAGE", `invalid front matter: ${reason}`);
}

/**
 * One pass over the lexer's tokens (linear): the nesting depth as block indentation levels plus compact
 * `- - x` indicators on a line plus open flow brackets (at least half the real depth: a sequence may share
 * its parent key's indentation), and the number of anchors, aliases and tags.
 */
function checkShape(source: string): void {
  const indents: number[] = [];
  let flow = 0;
  let lineDepth = 0;
  let column = 0;
  let atLineStart = true;
  let properties = 0;
  for (const token of new Lexer().lex(source)) {
    const first = token[0];
    if (token === "\n" || token === "\r\n") {
      atLineStart = true;
      column = 0;
      continue;
    }
    // Control markers (document, scalar, flow-error) take no room in the source.
    if (first === "\u0002" || first === "\u001f" || first === "\u0018") continue;
    if (first === " " || first === "\t") {
      if (atLineStart) column += token.length;
      continue;
    }
    if (first === "#") continue;
    if (atLineStart) {
      atLineStart = false;
      if (flow === 0) {
        while (indents.length > 0 && (indents.at(-1) as number) >= column) indents.pop();
        indents.push(column);
        lineDepth = indents.length;
      }
    }
    if (flow === 0 && (token === "-" || token === "?")) lineDepth++;
    else if (token === "[" || token === "{") flow++;
    else if (token === "]" || token === "}") flow = Math.max(0, flow - 1);
    else if (first === "&" || first === "*" || first === "!") properties++;
    if (lineDepth + flow > MAX_FRONT_MATTER_DEPTH) {
      throw invalid(`it nests deeper than ${MAX_FRONT_MATTER_DEPTH} levels`);
    }
    if (properties > MAX_NODE_PROPERTIES) {
      throw invalid(`it uses more than ${MAX_NODE_PROPERTIES} anchors, aliases and tags`);
    }
    // A token spanning lines (a block or multi-line scalar) leaves us wherever its last line ends.
    const lastNewline = token.lastIndexOf("\n");
    if (lastNewline !== -1) {
      atLineStart = lastNewline === token.length - 1;
      column = 0;
    }
  }
}
