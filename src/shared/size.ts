// Human sizes ("4MiB", "512KiB", "10MB") for settings: binary units are powers of 1024, decimal ones of 1000.
import { IvoaiError } from "./errors.js";

const UNIT_BYTES = {
  B: 1,
  KiB: 1024,
  MiB: 1024 ** 2,
  GiB: 1024 ** 3,
  TiB: 1024 ** 4,
  kB: 1000,
  KB: 1000,
  MB: 1000 ** 2,
  GB: 1000 ** 3,
  TB: 1000 ** 4,
} as const;

/** Parses a whole number of bytes (`4194304`) or digits and a unit (`4MiB`, `4 MiB`, `10MB`) into bytes. */
export function parseSize(value: number | string): number {
  if (typeof value === "number") {
    if (Number.isSafeInteger(value) && value > 0) return value;
    throw new IvoaiError("USAGE", `${value} is not a size: use a whole number of bytes above 0, or 4MiB`);
  }
  const match = /^(\d{1,15})\s*(B|[KMGT]iB|kB|[KMGT]B)?$/.exec(value.trim());
  const bytes = match ? Number(match[1]) * UNIT_BYTES[(match[2] ?? "B") as keyof typeof UNIT_BYTES] : 0;
  if (!Number.isSafeInteger(bytes) || bytes <= 0)
    throw new IvoaiError(
      "USAGE",
      `'${value}' is not a size: use a whole number and a unit B, KiB, MiB, GiB (or kB, MB, GB), like 4MiB`,
    );
  return bytes;
}

/** The shortest exact binary form of a size (4194304 → "4MiB"), or the number of bytes. */
export function formatSize(bytes: number): string | number {
  for (const unit of ["TiB", "GiB", "MiB", "KiB"] as const)
    if (bytes >= UNIT_BYTES[unit] && bytes % UNIT_BYTES[unit] === 0)
      return `${bytes / UNIT_BYTES[unit]}${unit}`;
  return bytes;
}
