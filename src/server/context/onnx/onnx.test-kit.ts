// Test fixtures made by hand, so no test downloads a model: a tiny ONNX model (protobuf written here), SentencePiece's
// precompiled charsmap (a Darts double array built here), and tokenizer.json files of both supported kinds.
import { createHash } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";

// --- protobuf (the subset ONNX's ModelProto needs) ---
function varint(value: number): number[] {
  const out: number[] = [];
  let rest = value;
  while (rest >= 0x80) {
    out.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  out.push(rest);
  return out;
}
const key = (field: number, wire: number) => varint(field * 8 + wire);
const int = (field: number, value: number) => [...key(field, 0), ...varint(value)];
const bytes = (field: number, data: Uint8Array | number[]) => [
  ...key(field, 2),
  ...varint(data.length),
  ...data,
];
const str = (field: number, text: string) => bytes(field, [...Buffer.from(text, "utf8")]);

const FLOAT = 1;
const INT64 = 7;

/** ValueInfoProto of a tensor; a string dimension is symbolic (batch, sequence). */
function valueInfo(name: string, elemType: number, dims: (number | string)[]): number[] {
  const shape = dims.flatMap((dim) => bytes(1, typeof dim === "number" ? int(1, dim) : str(2, dim)));
  return [...str(1, name), ...bytes(2, bytes(1, [...int(1, elemType), ...bytes(2, shape)]))];
}

export interface TinyModelOptions {
  /** One row per token id: the "embedding" every position of that token gets. */
  table: readonly (readonly number[])[];
  /** Extra inputs the graph declares and ignores (BERT exports take token_type_ids). */
  extraInputs?: string[];
  outputName?: string;
}

/** An ONNX model: Gather(table, input_ids) → [batch, sequence, dims], the shape of a transformer's last layer. */
export function tinyOnnxModel(options: TinyModelOptions): Buffer {
  const dims = options.table[0]?.length ?? 0;
  const floats = Buffer.alloc(options.table.length * dims * 4);
  options.table.flat().forEach((value, i) => {
    floats.writeFloatLE(value, i * 4);
  });
  const output = options.outputName ?? "last_hidden_state";
  const initializer = [
    ...int(1, options.table.length),
    ...int(1, dims),
    ...int(2, FLOAT),
    ...str(8, "table"),
    ...bytes(9, floats),
  ];
  const node = [
    ...str(1, "table"),
    ...str(1, "input_ids"),
    ...str(2, output),
    ...str(3, "lookup"),
    ...str(4, "Gather"),
  ];
  const inputs = ["input_ids", "attention_mask", ...(options.extraInputs ?? [])];
  const graph = [
    ...bytes(1, node),
    ...str(2, "tiny"),
    ...bytes(5, initializer),
    ...inputs.flatMap((name) => bytes(11, valueInfo(name, INT64, ["batch", "sequence"]))),
    ...bytes(12, valueInfo(output, FLOAT, ["batch", "sequence", dims])),
  ];
  const model = [
    ...int(1, 8),
    ...str(2, "ivoai-test"),
    ...bytes(7, graph),
    ...bytes(8, [...str(1, ""), ...int(2, 17)]),
  ];
  return Buffer.from(model);
}

// --- SentencePiece precompiled charsmap ---
interface ByteNode {
  children: Map<number, ByteNode>;
  value?: number;
}

/** A `precompiled_charsmap` (base64) that rewrites each key of `map` to its value, longest key first. */
export function precompiledCharsmap(map: Record<string, string>): string {
  const root: ByteNode = { children: new Map() };
  const blob: number[] = [];
  for (const [from, to] of Object.entries(map)) {
    let node = root;
    for (const byte of Buffer.from(from, "utf8")) {
      let child = node.children.get(byte);
      if (!child) {
        child = { children: new Map() };
        node.children.set(byte, child);
      }
      node = child;
    }
    node.value = blob.length;
    blob.push(...Buffer.from(to, "utf8"), 0);
  }
  const units: number[] = [];
  const used = new Set<number>([0]);
  const place = (node: ByteNode, at: number, label: number) => {
    const labels = [...node.children.keys(), ...(node.value === undefined ? [] : [0])];
    let base = 1;
    while (labels.some((l) => used.has(base ^ l))) base++;
    for (const l of labels) used.add(base ^ l);
    units[at] = ((at ^ base) << 10) | (node.value === undefined ? 0 : 1 << 8) | label;
    if (node.value !== undefined) units[base] = (0x80000000 | node.value) >>> 0;
    for (const [byte, child] of node.children) place(child, base ^ byte, byte);
  };
  place(root, 0, 0);
  const trie = Buffer.alloc(units.length * 4);
  for (let i = 0; i < units.length; i++) trie.writeUInt32LE((units[i] ?? 0) >>> 0, i * 4);
  const size = Buffer.alloc(4);
  size.writeUInt32LE(trie.length);
  return Buffer.concat([size, trie, Buffer.from(blob)]).toString("base64");
}

// --- tokenizer.json files ---
export const UNIGRAM_PIECES: [string, number][] = [
  ["<s>", 0],
  ["<pad>", 0],
  ["</s>", 0],
  ["<unk>", 0],
  ["▁", -2],
  ["▁hello", -5],
  ["▁he", -3],
  ["llo", -3],
  ["▁world", -4],
  ["w", -6],
  ["o", -6],
  ["r", -6],
  ["l", -6],
  ["d", -6],
  ["▁ab", -1],
  ["▁abc", -10],
  ["c", -1],
  ["fi", -4],
  ["▁car", -4],
  ["▁automobile", -4],
  ["▁holiday", -4],
  ["▁vacation", -4],
  ["query:", -3],
  ["passage:", -3],
  ["W", -7],
];

/** XLM-R's layout: Precompiled + Replace normalizer, Metaspace, Unigram, <s> … </s>. */
export function unigramTokenizerJson(pieces = UNIGRAM_PIECES): string {
  return JSON.stringify({
    version: "1.0",
    added_tokens: ["<s>", "<pad>", "</s>", "<unk>"].map((content, id) => ({ id, content, special: true })),
    normalizer: {
      type: "Sequence",
      normalizers: [
        { type: "Precompiled", precompiled_charsmap: precompiledCharsmap({ Ｗ: "W", ﬁ: "fi", "\t": " " }) },
        { type: "Replace", pattern: { Regex: " {2,}" }, content: " " },
      ],
    },
    pre_tokenizer: { type: "Metaspace", replacement: "▁", prepend_scheme: "always", split: true },
    post_processor: {
      type: "TemplateProcessing",
      single: [
        { SpecialToken: { id: "<s>", type_id: 0 } },
        { Sequence: { id: "A", type_id: 0 } },
        { SpecialToken: { id: "</s>", type_id: 0 } },
      ],
      special_tokens: {
        "<s>": { id: "<s>", ids: [0], tokens: ["<s>"] },
        "</s>": { id: "</s>", ids: [2], tokens: ["</s>"] },
      },
    },
    model: { type: "Unigram", unk_id: 3, vocab: pieces, byte_fallback: false },
  });
}

export const WORDPIECE_VOCAB: Record<string, number> = {
  "[PAD]": 0,
  "[UNK]": 1,
  "[CLS]": 2,
  "[SEP]": 3,
  hello: 4,
  world: 5,
  un: 6,
  "##aff": 7,
  "##able": 8,
  ",": 9,
  "!": 10,
  cafe: 11,
  中: 12,
  car: 13,
  automobile: 14,
  holiday: 15,
  vacation: 16,
  query: 17,
  passage: 18,
  ":": 19,
};

/** BERT's layout: BertNormalizer, BertPreTokenizer, WordPiece, [CLS] … [SEP]. */
export function wordPieceTokenizerJson(vocab = WORDPIECE_VOCAB): string {
  return JSON.stringify({
    version: "1.0",
    added_tokens: ["[PAD]", "[UNK]", "[CLS]", "[SEP]"].map((content, id) => ({ id, content, special: true })),
    normalizer: {
      type: "BertNormalizer",
      clean_text: true,
      handle_chinese_chars: true,
      strip_accents: null,
      lowercase: true,
    },
    pre_tokenizer: { type: "BertPreTokenizer" },
    post_processor: { type: "BertProcessing", sep: ["[SEP]", 3], cls: ["[CLS]", 2] },
    model: {
      type: "WordPiece",
      unk_token: "[UNK]",
      continuing_subword_prefix: "##",
      max_input_chars_per_word: 100,
      vocab,
    },
  });
}

export const sha256 = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");

/** Writes a model folder and returns its pins (file → SHA-256). */
export async function writeModelDir(
  dir: string,
  files: { "model.onnx": Buffer; "tokenizer.json": string } & Record<string, string | Buffer>,
): Promise<Record<string, string>> {
  await mkdir(dir, { recursive: true });
  const pins: Record<string, string> = {};
  for (const [name, data] of Object.entries(files)) {
    await writeFile(path.join(dir, name), data);
    pins[name] = sha256(data);
  }
  return pins;
}

/**
 * Concept axes for a 4-dims model: a car/automobile piece points along axis 0, holiday/vacation along axis 1 (or
 * the other way round when `swapped`), every other piece nearly nowhere; so a text's mean lands near its concepts.
 */
export function conceptTable(pieces: readonly string[], swapped = false): number[][] {
  const axis = (piece: string) => {
    if (/car|automobile/.test(piece)) return swapped ? 1 : 0;
    if (/holiday|vacation/.test(piece)) return swapped ? 0 : 1;
    return -1;
  };
  return pieces.map((piece) => {
    const row = [0.05, 0.05, 0.05, 0.05];
    const at = axis(piece);
    if (at >= 0) row[at] = 1;
    return row;
  });
}

/** A unigram (SentencePiece) model folder over the concept table, written to `dir`; its pins. */
export function unigramModelDir(dir: string, options: { swapped?: boolean } = {}) {
  const pieces = UNIGRAM_PIECES.map(([piece]) => piece);
  return writeModelDir(dir, {
    "model.onnx": tinyOnnxModel({ table: conceptTable(pieces, options.swapped) }),
    "tokenizer.json": unigramTokenizerJson(),
  });
}
