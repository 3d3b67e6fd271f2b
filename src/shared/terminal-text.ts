// Untrusted text (written by agents, remote servers, file names) made harmless for a terminal.

// C0 controls, DEL, C1 controls, bidi embeddings/overrides (U+202A–U+202E) and isolates (U+2066–U+2069).
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** Whether text holds a character a terminal or a bidi-aware renderer would act on (the set escaped below). */
export function hasUnsafeCharacters(text: string): boolean {
  UNSAFE.lastIndex = 0;
  return UNSAFE.test(text);
}

function visible(char: string): string {
  const code = char.charCodeAt(0);
  return code <= 0xff
    ? `\\x${code.toString(16).padStart(2, "0")}`
    : `\\u${code.toString(16).padStart(4, "0")}`;
}

/**
 * Renders control characters and bidi overrides as visible escapes (ESC becomes `\x1b`, U+202E `\u202e`),
 * so text cannot move the cursor, erase lines or reorder what the reader sees. With `multiline`,
 * newlines and tabs stay for layout (bodies, diffs); otherwise they are escaped too (table cells, fields).
 */
export function terminalText(text: string, options: { multiline?: boolean } = {}): string {
  return text.replace(UNSAFE, (char) =>
    options.multiline && (char === "\n" || char === "\t") ? char : visible(char),
  );
}

/** One field of a line: every control character escaped, newlines included. */
export const oneLine = (text: string): string => terminalText(text);

// JSON.stringify leaves DEL, C1 controls and bidi overrides raw; any other character it already escapes.
const UNSAFE_IN_JSON = /[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** JSON text with the characters a terminal would act on written as `\uXXXX`: still the exact same value. */
export function terminalJson(json: string): string {
  return json.replace(UNSAFE_IN_JSON, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
