// AssemblyScript (compiled to WebAssembly by scripts/build-wasm.mjs): the hot loop of document analysis for
// ingestion. It scans a lowercased text for words (the word table says which UTF-16 units are letters or
// digits), finds each word in a lexicon (a flat pool of characters, an FNV-1a hash, open addressing), counts
// stopwords for language detection, and writes each chunk's space-joined terms. Stemming stays in JavaScript:
// the host fills in a word's term the first time a language needs it. `src/server/retrieval/term-scanner.ts`
// drives it and the JavaScript analyser is its reference (a differential test compares them).

const MAX_TOKEN_LENGTH: i32 = 40;
const LANGUAGE_SAMPLE: i32 = 500;
/** The stopword bits of analyzer.ts (stopwordFlags). */
const EN_STOPWORD: u8 = 1;
const PT_STOPWORD: u8 = 2;
const FNV_OFFSET: u32 = 0x811c9dc5;
const FNV_PRIME: u32 = 16777619;
const UNKNOWN: i32 = -1;
const PENDING: i32 = -2;
const WIDE: i32 = -3;
/** What emit returns for a text whose terms need units above 0xFF. */
const NEEDS_WIDE: i32 = -0x40000000;
/** Bytes allocated past the input's, the term pool's and the output's ends, for eight-byte loads and copies. */
const SLACK: usize = 8;

/** Word-ness of every BMP unit: 2 for a letter or digit, else 1 (written by the host once). */
let wordTable: usize = 0;

// The lexicon: open-addressing slots of [hash, entry + 1 | length << 24, the word's first four units] (16 bytes),
// and entries of [pool start (i32), length (u8), stopword flags (u8)] (8 bytes): finding a word of up to four
// units touches one slot, a longer one its slot and the pool.
let slots: usize = 0;
let slotCapacity: i32 = 0;
let records: usize = 0;
let entryCapacity: i32 = 0;
let entryCount: i32 = 0;
let pool: usize = 0;
let poolCapacity: i32 = 0;
let poolUsed: i32 = 0;

// Each entry's term per language (0 English, 1 Portuguese): start and length in the term pool (one byte per
// unit: a term with a unit above 0xFF is WIDE, and a text that needs one is left to the JavaScript analyser).
const termStarts: StaticArray<usize> = [0, 0];
const termLengths: StaticArray<usize> = [0, 0];
let termPool: usize = 0;
let termPoolCapacity: i32 = 0;
let termPoolUsed: i32 = 0;

// The current text and what a scan found in it: each kept word's entry and offset.
let input: usize = 0;
let inputCapacity: i32 = 0;
let wordEntries: usize = 0;
let wordStarts: usize = 0;
let wordCapacity: i32 = 0;
let wordCount: i32 = 0;
let englishVotes: i32 = 0;
let portugueseVotes: i32 = 0;

// What an emit produced or needs: the kept terms, the output and each chunk's end in it.
let kept: usize = 0;
let keptCapacity: i32 = 0;
let output: usize = 0;
let outputCapacity: i32 = 0;
let chunkBounds: usize = 0;
let chunkBytes: usize = 0;
let chunkEnds: usize = 0;
let chunkCapacity: i32 = 0;
let missing: usize = 0;
let missingCapacity: i32 = 0;

function grow(ptr: usize, usedBytes: usize, bytes: usize): usize {
  const bigger = heap.alloc(bytes);
  if (usedBytes > 0) memory.copy(bigger, ptr, usedBytes);
  return bigger;
}

export function init(): void {
  wordTable = heap.alloc(0x10000);
  slotCapacity = 1 << 15;
  slots = heap.alloc(<usize>slotCapacity * SLOT_BYTES);
  memory.fill(slots, 0, <usize>slotCapacity * SLOT_BYTES);
  entryCapacity = 1 << 14;
  records = heap.alloc((<usize>entryCapacity) << 3);
  for (let language = 0; language < 2; language++) {
    termStarts[language] = heap.alloc((<usize>entryCapacity) << 2);
    termLengths[language] = heap.alloc((<usize>entryCapacity) << 2);
  }
  poolCapacity = 1 << 17;
  pool = heap.alloc((<usize>poolCapacity) << 1);
  termPoolCapacity = 1 << 17;
  termPool = heap.alloc(<usize>termPoolCapacity + SLACK);
}

export function wordTablePointer(): usize {
  return wordTable;
}

/** Forgets every word (the host re-adds the stopwords). */
export function clear(): void {
  memory.fill(slots, 0, <usize>slotCapacity * SLOT_BYTES);
  entryCount = 0;
  poolUsed = 0;
  termPoolUsed = 0;
}

export function entries(): i32 {
  return entryCount;
}

/** Where the text of `units` UTF-16 units goes before a scan. */
export function inputPointer(units: i32): usize {
  if (units > inputCapacity) {
    inputCapacity = max(units, inputCapacity << 1);
    input = heap.alloc(((<usize>inputCapacity) << 1) + SLACK);
  }
  return input;
}

function growEntries(): void {
  const old = <usize>entryCapacity;
  entryCapacity <<= 1;
  const size = <usize>entryCapacity;
  records = grow(records, old << 3, size << 3);
  for (let language = 0; language < 2; language++) {
    termStarts[language] = grow(termStarts[language], old << 2, size << 2);
    termLengths[language] = grow(termLengths[language], old << 2, size << 2);
  }
}

const SLOT_BYTES: usize = 16;

function rehash(): void {
  const old = slots;
  const oldCapacity = slotCapacity;
  slotCapacity <<= 1;
  slots = heap.alloc(<usize>slotCapacity * SLOT_BYTES);
  memory.fill(slots, 0, <usize>slotCapacity * SLOT_BYTES);
  const mask = slotCapacity - 1;
  for (let from = 0; from < oldCapacity; from++) {
    const at = old + <usize>from * SLOT_BYTES;
    if (load<i32>(at, 4) === 0) continue;
    let slot = load<i32>(at) & mask;
    while (load<i32>(slots + <usize>slot * SLOT_BYTES, 4) !== 0) slot = (slot + 1) & mask;
    memory.copy(slots + <usize>slot * SLOT_BYTES, at, SLOT_BYTES);
  }
}

/** The word's first four units (zeros past its end), as one number. */
function prefixOf(at: usize, length: i32): u64 {
  // Eight bytes whatever the length (the input has SLACK bytes past its end), the ones past the word masked.
  const all = load<u64>(at);
  return length >= 4 ? all : all & (((<u64>1) << ((<u64>length) << 4)) - 1);
}

/** The entry of the `length` units at `at` (in input or anywhere in memory), added with `wordFlags` when new. */
function find(at: usize, length: i32, hash: i32, wordFlags: u8): i32 {
  const mask = slotCapacity - 1;
  const prefix = prefixOf(at, length);
  for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
    const where = slots + <usize>slot * SLOT_BYTES;
    const stored = load<i32>(where, 4);
    if (stored === 0) return add(at, length, hash, prefix, wordFlags, slot);
    if (load<i32>(where) !== hash || stored >>> 24 !== length || load<u64>(where, 8) !== prefix) continue;
    const entry = (stored & 0xffffff) - 1;
    if (length <= 4) return entry;
    const start = pool + ((<usize>load<i32>(records + ((<usize>entry) << 3))) << 1);
    if (sameTail(start, at, (<usize>length) << 1)) return entry;
  }
  // biome-ignore lint/correctness/noUnreachable: AssemblyScript wants a return after the endless loop.
  return -1;
}

function add(at: usize, length: i32, hash: i32, prefix: u64, wordFlags: u8, slot: i32): i32 {
  if (entryCount === entryCapacity) growEntries();
  if (poolUsed + length > poolCapacity) {
    const old = (<usize>poolUsed) << 1;
    poolCapacity <<= 1;
    pool = grow(pool, old, (<usize>poolCapacity) << 1);
  }
  const entry = entryCount;
  memory.copy(pool + ((<usize>poolUsed) << 1), at, (<usize>length) << 1);
  const record = records + ((<usize>entry) << 3);
  store<i32>(record, poolUsed);
  store<u8>(record, <u8>length, 4);
  store<u8>(record, wordFlags, 5);
  poolUsed += length;
  store<i32>(unchecked(termStarts[0]) + ((<usize>entry) << 2), UNKNOWN);
  store<i32>(unchecked(termStarts[1]) + ((<usize>entry) << 2), UNKNOWN);
  const where = slots + <usize>slot * SLOT_BYTES;
  store<i32>(where, hash);
  store<i32>(where, (entry + 1) | (length << 24), 4);
  store<u64>(where, prefix, 8);
  entryCount += 1;
  if (entryCount << 1 > slotCapacity) rehash();
  return entry;
}

/**
 * Whether the `bytes` (more than 8) bytes at a and b are equal past their first eight (compared already):
 * eight at a time (unaligned loads are cheap), the last eight overlapping the ones before.
 */
function sameTail(a: usize, b: usize, bytes: usize): bool {
  for (let i: usize = 8; i + 8 < bytes; i += 8) if (load<u64>(a + i) !== load<u64>(b + i)) return false;
  return load<u64>(a + bytes - 8) === load<u64>(b + bytes - 8);
}

function hashOf(at: usize, length: i32): i32 {
  let hash = FNV_OFFSET;
  for (let i = 0; i < length; i++) hash = (hash ^ <u32>load<u16>(at + ((<usize>i) << 1))) * FNV_PRIME;
  return <i32>hash;
}

/** Adds a stopword (its `length` units in the input buffer) with its flags. */
export function addStopword(length: i32, wordFlags: u8): void {
  const entry = find(input, length, hashOf(input, length), wordFlags);
  store<u8>(records + ((<usize>entry) << 3), wordFlags, 5);
}

export function wordStart(entry: i32): i32 {
  return load<i32>(records + ((<usize>entry) << 3));
}

export function wordLength(entry: i32): i32 {
  return <i32>load<u8>(records + ((<usize>entry) << 3), 4);
}

export function poolPointer(): usize {
  return pool;
}

/**
 * Scans the `length` units of input (a lowercased text without surrogates) and returns how many words of at
 * most MAX_TOKEN_LENGTH units it holds, or -1 when the lexicon would pass `limit` entries (then the host clears
 * it and scans again). Stopword votes of the first LANGUAGE_SAMPLE words are left in the vote counters.
 */
export function scan(length: i32, limit: i32): i32 {
  if (entryCount + (length >> 1) + 1 > limit) return -1;
  if (length > wordCapacity) {
    wordCapacity = max(length, wordCapacity << 1);
    wordEntries = heap.alloc((<usize>wordCapacity) << 2);
    wordStarts = heap.alloc((<usize>wordCapacity) << 2);
  }
  let count = 0;
  let seen = 0;
  const _en = 0;
  const _pt = 0;
  let start = -1;
  let hash: u32 = 0;
  const table = wordTable;
  const text = input;
  for (let i = 0; i < length; i++) {
    const code = <u32>load<u16>(text + ((<usize>i) << 1));
    if (load<u8>(table + <usize>code) === 2) {
      if (start < 0) {
        start = i;
        hash = FNV_OFFSET;
      }
      hash = (hash ^ code) * FNV_PRIME;
    } else if (start >= 0) {
      count = endWord(start, i, hash, count, seen);
      seen += 1;
      start = -1;
    }
  }
  if (start >= 0) {
    count = endWord(start, length, hash, count, seen);
    seen += 1;
  }
  wordCount = count;
  return count;
}

function endWord(start: i32, end: i32, hash: u32, count: i32, seen: i32): i32 {
  if (end - start > MAX_TOKEN_LENGTH) return count;
  const entry = find(input + ((<usize>start) << 1), end - start, <i32>hash, 0);
  if (seen < LANGUAGE_SAMPLE) {
    const wordFlags = load<u8>(records + ((<usize>entry) << 3), 5);
    if (wordFlags & EN_STOPWORD) englishVotes += 1;
    if (wordFlags & PT_STOPWORD) portugueseVotes += 1;
  }
  store<i32>(wordEntries + ((<usize>count) << 2), entry);
  store<i32>(wordStarts + ((<usize>count) << 2), start);
  return count + 1;
}

export function takeVotes(): i32 {
  const votes = englishVotes >= portugueseVotes ? 0 : 1;
  englishVotes = 0;
  portugueseVotes = 0;
  return votes;
}

/** Where the host writes a term of `units` units (one byte each) before setTerm. */
export function termPointer(units: i32): usize {
  if (termPoolUsed + units > termPoolCapacity) {
    termPoolCapacity = max(termPoolCapacity << 1, termPoolUsed + units);
    termPool = grow(termPool, <usize>termPoolUsed, <usize>termPoolCapacity + SLACK);
  }
  return termPool + <usize>termPoolUsed;
}

/** Records the term of `entry` in `language`: the `units` bytes just written at termPointer(units). */
export function setTerm(language: i32, entry: i32, units: i32): void {
  store<i32>(unchecked(termStarts[language]) + ((<usize>entry) << 2), termPoolUsed);
  store<i32>(unchecked(termLengths[language]) + ((<usize>entry) << 2), units);
  termPoolUsed += units;
}

/** Records that the term of `entry` in `language` has a unit above 0xFF. */
export function setWideTerm(language: i32, entry: i32): void {
  store<i32>(unchecked(termStarts[language]) + ((<usize>entry) << 2), WIDE);
}

/**
 * Where the host writes `chunks` pairs of [start, end) unit offsets, followed by the chunks' header of
 * `headerUnits` units (one byte each, at boundsPointer + chunks * 8), before emit.
 */
export function boundsPointer(chunks: i32, headerUnits: i32): usize {
  const bytes = <usize>chunks * 8 + <usize>headerUnits;
  if (bytes > chunkBytes) {
    chunkBytes = max(bytes, chunkBytes << 1);
    chunkBounds = heap.alloc(chunkBytes);
  }
  if (chunks > chunkCapacity) {
    chunkCapacity = max(chunks, chunkCapacity << 1);
    chunkEnds = heap.alloc((<usize>chunkCapacity) << 2);
  }
  return chunkBounds;
}

export function chunkEndsPointer(): usize {
  return chunkEnds;
}

export function missingPointer(): usize {
  return missing;
}

export function outputPointer(): usize {
  return output;
}

// A kept term: its offset in the text, its entry, and the joined units before it (each term and a space).
const KEPT_STRIDE: usize = 12;

/**
 * Writes the terms of each of `chunks` chunks (bounds and header at boundsPointer) in `language`, one byte per
 * unit: the header and a space before a chunk's own terms when both exist, nothing for a chunk without terms.
 * Returns the output's length, minus the number of entries whose term the host must set first (listed at
 * missingPointer), or NEEDS_WIDE.
 */
export function emit(language: i32, chunks: i32, headerLength: i32): i32 {
  const count = wordCount;
  const termStart = unchecked(termStarts[language]);
  const termLength = unchecked(termLengths[language]);
  let absent = 0;
  let wide = false;
  for (let i = 0; i < count; i++) {
    const entry = load<i32>(wordEntries + ((<usize>i) << 2));
    const at = termStart + ((<usize>entry) << 2);
    const start = load<i32>(at);
    if (start === WIDE) wide = true;
    else if (start === UNKNOWN) {
      if (absent === missingCapacity) {
        const old = (<usize>missingCapacity) << 2;
        missingCapacity = max(1024, missingCapacity << 1);
        missing = grow(missing, old, (<usize>missingCapacity) << 2);
      }
      store<i32>(missing + ((<usize>absent) << 2), entry);
      store<i32>(at, PENDING);
      absent += 1;
    }
  }
  if (absent > 0) return -absent;
  if (wide) return NEEDS_WIDE;
  if (count + 1 > keptCapacity) {
    keptCapacity = max(count + 1, keptCapacity << 1);
    kept = heap.alloc(<usize>keptCapacity * KEPT_STRIDE);
  }
  let keptCount = 0;
  let joined = 0;
  for (let i = 0; i < count; i++) {
    const entry = load<i32>(wordEntries + ((<usize>i) << 2));
    const units = load<i32>(termLength + ((<usize>entry) << 2));
    if (units === 0) continue;
    const at = kept + <usize>keptCount * KEPT_STRIDE;
    store<i32>(at, load<i32>(wordStarts + ((<usize>i) << 2)));
    store<i32>(at, entry, 4);
    store<i32>(at, joined, 8);
    keptCount += 1;
    joined += units + 1;
  }
  store<i32>(kept + <usize>keptCount * KEPT_STRIDE, joined, 8);
  // The chunks' term ranges and the exact output length first (overlapping chunks repeat terms).
  let needed: i64 = 0;
  for (let c = 0; c < chunks; c++) {
    const from = lowerBound(keptCount, load<i32>(chunkBounds + ((<usize>c) << 3)));
    const to = lowerBound(keptCount, load<i32>(chunkBounds + ((<usize>c) << 3), 4));
    store<i32>(chunkBounds + ((<usize>c) << 3), from);
    store<i32>(chunkBounds + ((<usize>c) << 3), to, 4);
    if (to > from)
      needed += <i64>(joinedBefore(to) - joinedBefore(from) - 1 + (headerLength > 0 ? headerLength + 1 : 0));
  }
  if (needed >= <i64>NEEDS_WIDE * -1) return NEEDS_WIDE;
  if (<i32>needed > outputCapacity) {
    outputCapacity = max(<i32>needed, outputCapacity << 1);
    output = heap.alloc(<usize>outputCapacity + SLACK);
  }
  const header = chunkBounds + ((<usize>chunks) << 3);
  let out = output;
  for (let c = 0; c < chunks; c++) {
    const from = load<i32>(chunkBounds + ((<usize>c) << 3));
    const to = load<i32>(chunkBounds + ((<usize>c) << 3), 4);
    if (to > from) {
      if (headerLength > 0) {
        memory.copy(out, header, <usize>headerLength);
        out += <usize>headerLength;
        store<u8>(out, 32);
        out += 1;
      }
      for (let k = from; k < to; k++) {
        const entry = load<i32>(kept + <usize>k * KEPT_STRIDE, 4);
        const units = <usize>load<i32>(termLength + ((<usize>entry) << 2));
        if (k > from) {
          store<u8>(out, 32);
          out += 1;
        }
        // Eight bytes at a time, past the term's end if need be (both buffers have SLACK bytes to spare):
        // terms are short, and a bulk copy per term costs more than the bytes it moves.
        const source = termPool + <usize>load<i32>(termStart + ((<usize>entry) << 2));
        for (let i: usize = 0; i < units; i += 8) store<u64>(out + i, load<u64>(source + i));
        out += units;
      }
    }
    store<i32>(chunkEnds + ((<usize>c) << 2), <i32>(out - output));
  }
  return <i32>(out - output);
}

function joinedBefore(k: i32): i32 {
  return load<i32>(kept + <usize>k * KEPT_STRIDE, 8);
}

/** The first kept term at or after text offset `target`. */
function lowerBound(keptCount: i32, target: i32): i32 {
  let low = 0;
  let high = keptCount;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (load<i32>(kept + <usize>mid * KEPT_STRIDE) < target) low = mid + 1;
    else high = mid;
  }
  return low;
}
