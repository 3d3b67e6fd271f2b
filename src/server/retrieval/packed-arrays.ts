// How the lexical index packs its two big arrays: a posting is one int32 (slot and a small tf), a passage's term
// sequence is a run of variable-length bytes (LEB128: 7 bits a byte, high bit "more"). With typical term ids
// below 16,384 a term takes one or two bytes instead of four, and a posting four bytes instead of eight.

/** Bits of a posting that hold its tf; the slot is in the bits above. */
export const TF_BITS = 7;
/** A posting's tf field at this value means "this many or more": the exact count is read from the sequence. */
export const TF_ESCAPE = (1 << TF_BITS) - 1;
/** Slots a packed posting can name (removed passages count until a rebuild). */
export const MAX_SLOTS = 2 ** (32 - TF_BITS);
/** A term id above this would need more than 4 bytes (and is refused by a snapshot's check). */
export const MAX_TERM_ID = 2 ** 28 - 1;

/** The posting of `slot` with term frequency `tf` (≥ 1): an int32 that reads back with `>>> TF_BITS`. */
export function packPosting(slot: number, tf: number): number {
  return (slot << TF_BITS) | Math.min(tf, TF_ESCAPE);
}

/** An Int32Array that doubles when full; `data` past `length` is spare room. */
export class GrowableInt32 {
  data: Int32Array;
  length = 0;
  constructor(capacity = 4) {
    this.data = new Int32Array(capacity);
  }
  push(value: number): void {
    if (this.length === this.data.length) {
      const next = new Int32Array(Math.max(4, this.data.length * 2));
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = value;
  }
}

/** A byte array of variable-length term ids that doubles when full; `data` past `length` is spare room. */
export class GrowableTerms {
  data: Uint8Array;
  length = 0;
  constructor(capacity = 1024) {
    this.data = new Uint8Array(capacity);
  }
  /** Appends the term ids `ids[0, count)` (each 0 ≤ id ≤ MAX_TERM_ID), one to four bytes each. */
  append(ids: Int32Array, count: number): void {
    if (this.length + count * 4 > this.data.length) {
      const next = new Uint8Array(Math.max(1024, this.data.length * 2, this.length + count * 4));
      next.set(this.data.subarray(0, this.length));
      this.data = next;
    }
    const { data } = this;
    let at = this.length;
    for (let i = 0; i < count; i++) {
      let rest = ids[i] as number;
      while (rest >= 0x80) {
        data[at++] = (rest & 0x7f) | 0x80;
        rest >>>= 7;
      }
      data[at++] = rest;
    }
    this.length = at;
  }
}

/** Decodes `count` term ids from `bytes` at `start` into `out` (which has room); returns where they end. */
export function decodeTerms(bytes: Uint8Array, start: number, count: number, out: Int32Array): number {
  let at = start;
  for (let i = 0; i < count; i++) {
    let byte = bytes[at++] as number;
    let id = byte & 0x7f;
    let shift = 7;
    while (byte >= 0x80) {
      byte = bytes[at++] as number;
      id |= (byte & 0x7f) << shift;
      shift += 7;
    }
    out[i] = id;
  }
  return at;
}

/**
 * Why the `count` term ids at `start` are not a sound run (past `end`, longer than four bytes, or an id of
 * `terms` or more), or undefined; `next` receives where the run ends. A snapshot's check, before any decoding.
 */
export function termRunProblem(
  bytes: Uint8Array,
  start: number,
  count: number,
  terms: number,
  next: { at: number },
): string | undefined {
  let at = start;
  for (let i = 0; i < count; i++) {
    let id = 0;
    let shift = 0;
    for (;;) {
      if (at >= bytes.length || shift > 21) return "sequence range";
      const byte = bytes[at++] as number;
      id |= (byte & 0x7f) << shift;
      shift += 7;
      if (byte < 0x80) break;
    }
    if (id >= terms) return "term out of range";
  }
  next.at = at;
  return undefined;
}
