// Dates as index terms: a dated passage carries `date:YYYY`, `date:YYYY-MM` and `date:YYYY-MM-DD`, and the date
// expressions of a text ("in May", "last week", "2026-05-03", "yesterday") become the same terms, resolved
// against a reference day (a query's today, a page's own date). No analysed word contains ":", so these terms
// never collide with words.

const MONTHS: Record<string, number> = {
  january: 1,
  jan: 1,
  february: 2,
  feb: 2,
  march: 3,
  mar: 3,
  april: 4,
  apr: 4,
  may: 5,
  june: 6,
  jun: 6,
  july: 7,
  jul: 7,
  august: 8,
  aug: 8,
  september: 9,
  sep: 9,
  sept: 9,
  october: 10,
  oct: 10,
  november: 11,
  nov: 11,
  december: 12,
  dec: 12,
  janeiro: 1,
  fevereiro: 2,
  marco: 3,
  abril: 4,
  maio: 5,
  junho: 6,
  julho: 7,
  agosto: 8,
  setembro: 9,
  outubro: 10,
  novembro: 11,
  dezembro: 12,
};

/**
 * A month by name, with an optional day before or after it and an optional year ("3rd of may", "may 3, 2026").
 * Built once; each run of spaces is owned by the digit or name before it, so a scan is linear in the text.
 */
const NAMED_MONTH = new RegExp(
  `\\b(?:(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+|de\\s+)?)?(${Object.keys(MONTHS).join("|")})\\b(?:\\s+(\\d{1,2})(?:st|nd|rd|th)?\\b)?(?:,?\\s+(?:de\\s+)?(\\d{4})\\b)?`,
  "g",
);

const DAY_MS = 86_400_000;
const pad = (value: number) => String(value).padStart(2, "0");
const dayOf = (time: number) => new Date(time).toISOString().slice(0, 10);
const monthTerm = (year: number, month: number) => `date:${year}-${pad(month)}`;

/** The day (UTC midnight) a page's date field names, or undefined when it is not a date. */
export function parseDay(text: string): number | undefined {
  const at = Date.parse(text.trim());
  if (Number.isNaN(at)) return undefined;
  return Math.floor(at / DAY_MS) * DAY_MS;
}

/** The terms a passage dated `day` carries: its year, month and day. */
export function dayTerms(day: number): string[] {
  const iso = dayOf(day);
  return [`date:${iso.slice(0, 4)}`, `date:${iso.slice(0, 7)}`, `date:${iso}`];
}

/** A date term with the periods that hold it: a day's month and year, a month's year. */
export function withPeriods(term: string): string[] {
  const date = term.slice("date:".length);
  if (date.length === 10) return [`date:${date.slice(0, 4)}`, `date:${date.slice(0, 7)}`, term];
  if (date.length === 7) return [`date:${date.slice(0, 4)}`, term];
  return [term];
}

/**
 * The date expressions of `text` as weighted terms, relative to the day `today` (UTC midnight ms). Each
 * expression weighs 1 in all, shared among the days, months or year it names. A month without a year is the
 * latest one not after `today`.
 */
export function dateExpressionTerms(text: string, today: number): Map<string, number> {
  const terms = new Map<string, number>();
  const add = (list: string[]) => {
    for (const term of list) terms.set(term, (terms.get(term) ?? 0) + 1 / list.length);
  };
  const lowered = text.toLowerCase();
  // Most questions are ASCII and need no folding.
  const lower = !/[^\p{ASCII}]/u.test(lowered) ? lowered : lowered.normalize("NFD").replace(/\p{M}+/gu, "");
  const now = new Date(today);
  const year = now.getUTCFullYear();
  const month = now.getUTCMonth() + 1;
  const days = (from: number, count: number) =>
    Array.from({ length: count }, (_, i) => `date:${dayOf(from + i * DAY_MS)}`);

  for (const match of lower.matchAll(/\b(\d{4})-(\d{2})(?:-(\d{2}))?\b/g)) {
    const [, y, m, d] = match;
    add([d ? `date:${y}-${m}-${d}` : `date:${y}-${m}`]);
  }
  for (const match of lower.matchAll(NAMED_MONTH)) {
    const [whole, before, name, after, givenYear] = match;
    const m = MONTHS[name as string] as number;
    // "may" alone is mostly the verb: a bare month name counts only after "in"/"em"/"during" or with a day or year.
    const day = Number(before ?? after ?? 0);
    const preceding = lower.slice(Math.max(0, (match.index ?? 0) - 7), match.index ?? 0);
    if (!before && !after && !givenYear && !/\b(?:in|em|during|durante|since|desde|de)\s+$/.test(preceding))
      continue;
    if (whole.length === 0) continue;
    const y = givenYear ? Number(givenYear) : m > month ? year - 1 : year;
    add([day >= 1 && day <= 31 ? `date:${y}-${pad(m)}-${pad(day)}` : monthTerm(y, m)]);
  }
  if (/\b(?:today|hoje)\b/.test(lower)) add(days(today, 1));
  if (/\b(?:yesterday|ontem)\b/.test(lower)) add(days(today - DAY_MS, 1));
  // Weeks start on Monday (ISO 8601).
  const monday = today - ((now.getUTCDay() + 6) % 7) * DAY_MS;
  if (/\b(?:last|previous) week\b|\bsemana passada\b/.test(lower)) add(days(monday - 7 * DAY_MS, 7));
  if (/\bthis week\b|\besta semana\b/.test(lower)) add(days(monday, 7));
  if (/\b(?:last|previous) month\b|\bmes passado\b/.test(lower))
    add([month === 1 ? monthTerm(year - 1, 12) : monthTerm(year, month - 1)]);
  if (/\bthis month\b|\beste mes\b/.test(lower)) add([monthTerm(year, month)]);
  if (/\blast year\b|\bano passado\b/.test(lower)) add([`date:${year - 1}`]);
  for (const match of lower.matchAll(/\b(?:in|em|during|durante)\s+(\d{4})\b(?!-)/g))
    add([`date:${match[1]}`]);
  return terms;
}
