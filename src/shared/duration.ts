// Human durations ("10m", "7d") for TTL flags and settings.
import { IvoaiError } from "./errors.js";

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** Parses `90s`, `10m`, `2h`, `7d` into milliseconds. */
export function parseDuration(text: string): number {
  const match = /^(\d{1,6})([smhd])$/.exec(text.trim());
  if (!match) {
    throw new IvoaiError(
      "USAGE",
      `invalid duration '${text}': use a number and a unit s, m, h or d (e.g. 10m)`,
    );
  }
  const amount = Number(match[1]);
  const unit = match[2] as keyof typeof UNIT_MS;
  if (amount <= 0) throw new IvoaiError("USAGE", `invalid duration '${text}': must be positive`);
  return amount * UNIT_MS[unit];
}

/** The shortest exact form of a positive duration (604800000 → "7d", 90000 → "90s"); whole seconds at least. */
export function formatDuration(ms: number): string {
  for (const unit of ["d", "h", "m"] as const)
    if (ms % UNIT_MS[unit] === 0) return `${ms / UNIT_MS[unit]}${unit}`;
  return `${Math.max(1, Math.round(ms / UNIT_MS.s))}s`;
}
