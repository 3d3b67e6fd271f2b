// Human sizes ("4MiB", "512k", "1G") for settings and flags: every unit is a power of 1024, written with or
// without "iB" and in any case (as journald and most operators' tools read them), so "10MB" is 10 MiB.
import { IvoaiError } from "./errors.js";

const UNIT_BYTES: Record<string, number> = {
  "": 1,
  b: 1,
  k: 1024,
  kb: 1024,
  kib: 1024,
  m: 1024 ** 2,
  mb: 1024 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1024 ** 3,
  gib: 1024 ** 3,
  t: 1024 ** 4,
  tb: 1024 ** 4,
  tib: 1024 ** 4,
};

/**
 * Bytes of a whole number (`4194304`) or digits and a unit (`4MiB`, `4 MiB`, `512k`, `1G`); undefined when it does
 * not read as a size above 0.
 */
export function sizeBytes(value: number | string): number | undefined {
  if (typeof value === "number") return Number.isSafeInteger(value) && value > 0 ? value : undefined;
  const match = /^(\d{1,15})\s*([a-z]*)$/i.exec(value.trim());
  const unit = match ? UNIT_BYTES[(match[2] ?? "").toLowerCase()] : undefined;
  const bytes = match && unit ? Number(match[1]) * unit : Number.NaN;
  return Number.isSafeInteger(bytes) && bytes > 0 ? bytes : undefined;
}

/** sizeBytes, or a USAGE error saying what to write. */
export function parseSize(value: number | string): number {
  const bytes = sizeBytes(value);
  if (bytes !== undefined) return bytes;
  throw new IvoaiError(
    "USAGE",
    typeof value === "number"
      ? `${value} is not a size: use a whole number of bytes above 0, or 4MiB`
      : `'${value}' is not a size: use a whole number and a unit B, KiB, MiB, GiB or TiB, like 4MiB`,
  );
}

/** The shortest exact binary form of a size (4194304 → "4MiB"), or the number of bytes. */
export function formatSize(bytes: number): string | number {
  for (const unit of ["TiB", "GiB", "MiB", "KiB"] as const) {
    const size = UNIT_BYTES[unit.toLowerCase()] as number;
    if (bytes >= size && bytes % size === 0) return `${bytes / size}${unit}`;
  }
  return bytes;
}
