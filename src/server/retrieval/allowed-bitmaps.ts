// Per group mask lately searched with, a bitmap of the live passages it allows, so a confined search scores only
// those (checked before each posting) instead of scoring everything and filtering at the top-k.
import type { LexicalData } from "./lexical-data.js";

/** Group masks whose passage bitmaps an index keeps (most recently used first), e.g. callers' sets of scopes. */
export const ALLOWED_BITMAPS = 16;
/**
 * Searches since its last use after which the least recently used bitmap may give way to a new mask's. Making
 * one is a pass over every passage (~1.5–3 ms at 500,000 on a busy machine, where a search is a few ms): while
 * more masks than the index keeps are all in use, the ones without a bitmap are searched as before one existed.
 */
const BITMAP_COLD_AFTER = ALLOWED_BITMAPS * 4;

/** The bitmap of the live passages in a mask's groups: bit `slot & 31` of word `slot >>> 5`. */
export interface AllowedBitmap {
  mask: Uint8Array;
  bits: Int32Array;
  /** The search that last used it. */
  used: number;
}

/** Whether two group masks allow the same groups (a shorter mask allows none of the groups past its end). */
export function sameGroups(a: Uint8Array, b: Uint8Array): boolean {
  const length = Math.max(a.length, b.length);
  for (let group = 0; group < length; group++) if ((a[group] === 1) !== (b[group] === 1)) return false;
  return true;
}

/** Sets `slot` (just added in `group`) in the bitmaps whose mask allows that group. */
export function markAllowed(bitmaps: readonly AllowedBitmap[], slot: number, group: number): void {
  for (const { mask, bits } of bitmaps)
    if (mask[group] === 1) bits[slot >>> 5] = (bits[slot >>> 5] as number) | (1 << (slot & 31));
}

/** Clears `slot` (just removed) in every bitmap. */
export function unmarkAllowed(bitmaps: readonly AllowedBitmap[], slot: number): void {
  for (const { bits } of bitmaps) bits[slot >>> 5] = (bits[slot >>> 5] as number) & ~(1 << (slot & 31));
}

/**
 * The bitmap of the live slots in `mask`'s groups: kept from an earlier search, or made (one pass) unless every
 * bitmap kept is still in use (undefined: the search scores every passage and leaves other groups out at the
 * top-k, as before bitmaps).
 */
export function allowedSlots(data: LexicalData, mask: Uint8Array): Int32Array | undefined {
  const now = ++data.confinedSearches;
  const { bitmaps } = data;
  const at = bitmaps.findIndex((bitmap) => sameGroups(bitmap.mask, mask));
  if (at >= 0) {
    const found = bitmaps[at] as AllowedBitmap;
    found.used = now;
    if (at > 0) data.bitmaps = [found, ...bitmaps.slice(0, at), ...bitmaps.slice(at + 1)];
    return found.bits;
  }
  const oldest = bitmaps.at(-1);
  if (bitmaps.length === ALLOWED_BITMAPS && oldest && now - oldest.used < BITMAP_COLD_AFTER) return undefined;
  const bits = bitmapOf(data, mask);
  data.bitmaps = [{ mask: mask.slice(), bits, used: now }, ...bitmaps.slice(0, ALLOWED_BITMAPS - 1)];
  return bits;
}

/** One pass over the slots: the live ones whose group `mask` allows. */
function bitmapOf(data: LexicalData, mask: Uint8Array): Int32Array {
  const { alive, groups } = data;
  const bits = new Int32Array((data.keys.length >>> 5) + 1);
  for (let slot = 0; slot < data.slots; slot++)
    if (alive[slot] === 1 && mask[groups[slot] as number] === 1)
      bits[slot >>> 5] = (bits[slot >>> 5] as number) | (1 << (slot & 31));
  return bits;
}
