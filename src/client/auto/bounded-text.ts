// Cutting text to a bound, shared by the plan validator and the prompt builders.

/** At most `max` characters, ending with "…" when cut (never inside a surrogate pair). */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = Math.max(0, max - 1);
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}…`;
}
