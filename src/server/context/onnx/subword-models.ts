// The two subword models of the embedders ivoai runs: Unigram (SentencePiece, XLM-R's multilingual-e5) with Viterbi
// over the piece scores, and BERT's greedy longest-match-first WordPiece.

export type SubwordModel = (word: string) => number[];

/** What SentencePiece adds to the lowest piece score for a character no piece covers. */
const UNK_PENALTY = 10;

interface TrieNode {
  id: number;
  next: Map<string, TrieNode>;
}

export interface UnigramOptions {
  pieces: readonly (readonly [string, number])[];
  unkId: number;
  byteFallback: boolean;
  /** Ids that are never matched in text (control symbols such as <s>). */
  control: ReadonlySet<number>;
}

export function unigramModel(options: UnigramOptions): SubwordModel {
  const root: TrieNode = { id: -1, next: new Map() };
  let minScore = Number.POSITIVE_INFINITY;
  for (const [id, [piece, score]] of options.pieces.entries()) {
    minScore = Math.min(minScore, score);
    if (options.control.has(id) || piece === "") continue;
    let node = root;
    for (const unit of piece) {
      let child = node.next.get(unit);
      if (!child) {
        child = { id: -1, next: new Map() };
        node.next.set(unit, child);
      }
      node = child;
    }
    node.id = id;
  }
  const unkScore = minScore - UNK_PENALTY;
  const byteIds = new Map<string, number>();
  if (options.byteFallback) {
    for (const [id, [piece]] of options.pieces.entries())
      if (/^<0x[0-9A-F]{2}>$/.test(piece)) byteIds.set(piece, id);
  }
  const unknown = (text: string): number[] => {
    if (!options.byteFallback) return [options.unkId];
    const ids = [...Buffer.from(text, "utf8")].map((byte) =>
      byteIds.get(`<0x${byte.toString(16).toUpperCase().padStart(2, "0")}>`),
    );
    return ids.every((id) => id !== undefined) ? (ids as number[]) : [options.unkId];
  };

  return (word) => {
    // best[i]: the best segmentation of word[0, i) (positions in UTF-16 units, on code point boundaries).
    const size = word.length;
    const score = new Float64Array(size + 1);
    const from = new Int32Array(size + 1).fill(-1);
    const ids = new Int32Array(size + 1);
    for (let start = 0; start < size; ) {
      const base = score[start] as number;
      const charLength = (word.codePointAt(start) as number) > 0xffff ? 2 : 1;
      let single = false;
      let node: TrieNode | undefined = root;
      for (let end = start; end < size && node; ) {
        const step: number = (word.codePointAt(end) as number) > 0xffff ? 2 : 1;
        node = node.next.get(word.slice(end, end + step));
        end += step;
        if (!node || node.id < 0) continue;
        const candidate = base + (options.pieces[node.id]?.[1] ?? 0);
        if (from[end] === -1 || candidate > (score[end] as number)) {
          score[end] = candidate;
          from[end] = start;
          ids[end] = node.id;
        }
        if (end - start === charLength) single = true;
      }
      const end = start + charLength;
      if (!single && (from[end] === -1 || base + unkScore > (score[end] as number))) {
        score[end] = base + unkScore;
        from[end] = start;
        ids[end] = -1;
      }
      start = end;
    }
    // Walk back; neighbouring unknown characters fuse into one unknown token (as Hugging Face's Unigram does).
    const out: number[][] = [];
    let unknownEnd = -1;
    for (let end = size; end > 0; end = from[end] as number) {
      const start = from[end] as number;
      if (ids[end] === -1) {
        if (unknownEnd < 0) unknownEnd = end;
        if (start === 0 || ids[start] !== -1) {
          out.push(unknown(word.slice(start, unknownEnd)));
          unknownEnd = -1;
        }
      } else out.push([ids[end] as number]);
    }
    return out.reverse().flat();
  };
}

export interface WordPieceOptions {
  vocab: ReadonlyMap<string, number>;
  unkId: number;
  prefix: string;
  maxChars: number;
}

export function wordPieceModel(options: WordPieceOptions): SubwordModel {
  return (word) => {
    const points = [...word];
    if (points.length > options.maxChars) return [options.unkId];
    const ids: number[] = [];
    for (let start = 0; start < points.length; ) {
      let end = points.length;
      let found: number | undefined;
      for (; end > start; end--) {
        const piece = (start > 0 ? options.prefix : "") + points.slice(start, end).join("");
        found = options.vocab.get(piece);
        if (found !== undefined) break;
      }
      if (found === undefined) return [options.unkId];
      ids.push(found);
      start = end;
    }
    return ids;
  };
}
