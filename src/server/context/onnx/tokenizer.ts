// A Hugging Face tokenizer.json read in TypeScript, for the models the onnx embedder runs: Unigram (XLM-R's
// SentencePiece, multilingual-e5) and BERT WordPiece (most E5/MiniLM exports); anything else is refused.
// Special tokens written in a document are text: they are never turned into control tokens.
import { z } from "zod";
import { IvoaiError } from "../../../shared/errors.js";
import { type SubwordModel, unigramModel, wordPieceModel } from "./subword-models.js";
import { buildNormalizer, buildPreTokenizer } from "./text-steps.js";

export interface Tokenizer {
  readonly kind: "unigram" | "wordpiece";
  /** What fills a shorter text's row in a batch (the attention mask hides it). */
  readonly padId: number;
  /** Token ids with the model's special tokens, the text cut so that the whole fits `maxLength`. */
  encode(text: string, maxLength: number): number[];
}

const unigramSchema = z.object({
  type: z.literal("Unigram"),
  unk_id: z.number().int().nonnegative().nullable().optional(),
  vocab: z.array(z.tuple([z.string(), z.number()])).min(1),
  byte_fallback: z.boolean().optional(),
});
const wordPieceSchema = z.object({
  type: z.literal("WordPiece"),
  unk_token: z.string().default("[UNK]"),
  continuing_subword_prefix: z.string().default("##"),
  max_input_chars_per_word: z.number().int().positive().default(100),
  vocab: z.record(z.string(), z.number().int().nonnegative()),
});
const fileSchema = z.object({
  added_tokens: z
    .array(z.object({ id: z.number().int(), content: z.string(), special: z.boolean().optional() }))
    .default([]),
  normalizer: z.unknown().optional(),
  pre_tokenizer: z.unknown().optional(),
  post_processor: z.unknown().optional(),
  model: z.object({ type: z.string().optional() }).loose(),
});

/** Parses tokenizer.json's text (`file` names it in errors). */
export function parseTokenizer(text: string, file = "tokenizer.json"): Tokenizer {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new IvoaiError("CONFIG_INVALID", `${file} is not JSON`);
  }
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success) throw new IvoaiError("CONFIG_INVALID", `${file} is not a Hugging Face tokenizer.json`);
  const spec = parsed.data;
  const special = new Map(spec.added_tokens.filter((token) => token.special).map((t) => [t.content, t.id]));
  const { kind, model } = buildModel(spec.model, special, file);
  const normalize = buildNormalizer(spec.normalizer, file);
  const split = buildPreTokenizer(spec.pre_tokenizer, file);
  const { prefix, suffix } = buildPostProcessor(spec.post_processor, special, file);
  return {
    kind,
    padId: special.get("<pad>") ?? special.get("[PAD]") ?? 0,
    encode(input, maxLength) {
      const room = Math.max(0, maxLength - prefix.length - suffix.length);
      const ids: number[] = [];
      for (const word of split(normalize(input))) {
        for (const id of model(word)) {
          if (ids.length === room) return [...prefix, ...ids, ...suffix];
          ids.push(id);
        }
      }
      return [...prefix, ...ids, ...suffix];
    },
  };
}

function buildModel(
  spec: { type?: string | undefined },
  special: ReadonlyMap<string, number>,
  file: string,
): { kind: Tokenizer["kind"]; model: SubwordModel } {
  const invalid = (why: string) => new IvoaiError("CONFIG_INVALID", `${file}: ${why}`);
  if (spec.type === "Unigram") {
    const unigram = unigramSchema.safeParse(spec);
    if (!unigram.success) throw invalid("its Unigram model does not parse");
    const unkId = unigram.data.unk_id;
    if (unkId === null || unkId === undefined || unkId >= unigram.data.vocab.length)
      throw invalid("its Unigram model has no unknown token");
    return {
      kind: "unigram",
      model: unigramModel({
        pieces: unigram.data.vocab,
        unkId,
        byteFallback: unigram.data.byte_fallback ?? false,
        control: new Set(special.values()),
      }),
    };
  }
  if (spec.type === "WordPiece") {
    const wordPiece = wordPieceSchema.safeParse(spec);
    if (!wordPiece.success) throw invalid("its WordPiece model does not parse");
    const vocab = new Map(Object.entries(wordPiece.data.vocab));
    const unkId = vocab.get(wordPiece.data.unk_token);
    if (unkId === undefined)
      throw invalid(`its unknown token ${wordPiece.data.unk_token} is not in the vocabulary`);
    return {
      kind: "wordpiece",
      model: wordPieceModel({
        vocab,
        unkId,
        prefix: wordPiece.data.continuing_subword_prefix,
        maxChars: wordPiece.data.max_input_chars_per_word,
      }),
    };
  }
  throw invalid(`model type ${JSON.stringify(spec.type ?? null)} is not supported (Unigram, WordPiece)`);
}

type Json = Record<string, unknown>;

/** The special tokens around one sequence: TemplateProcessing's `single`, or BERT's / RoBERTa's [cls] … [sep]. */
function buildPostProcessor(
  spec: unknown,
  special: ReadonlyMap<string, number>,
  file: string,
): { prefix: number[]; suffix: number[] } {
  if (spec === null || spec === undefined) return { prefix: [], suffix: [] };
  const step = spec as Json;
  const pairId = (value: unknown) =>
    Array.isArray(value) && typeof value[1] === "number" ? value[1] : undefined;
  switch (step.type) {
    case "BertProcessing":
    case "RobertaProcessing": {
      const [cls, sep] = [pairId(step.cls), pairId(step.sep)];
      if (cls === undefined || sep === undefined)
        throw new IvoaiError("CONFIG_INVALID", `${file}: its post_processor names no cls/sep ids`);
      return { prefix: [cls], suffix: [sep] };
    }
    case "TemplateProcessing":
      return template(step, special, file);
    case "Sequence": {
      const parts = ((step.processors as unknown[]) ?? []).filter(
        (inner) => (inner as Json)?.type !== "ByteLevel",
      );
      return parts.reduce<{ prefix: number[]; suffix: number[] }>(
        (acc, inner) => {
          const next = buildPostProcessor(inner, special, file);
          return { prefix: [...acc.prefix, ...next.prefix], suffix: [...next.suffix, ...acc.suffix] };
        },
        { prefix: [], suffix: [] },
      );
    }
    default:
      throw new IvoaiError(
        "CONFIG_INVALID",
        `${file}: post_processor type ${JSON.stringify(step.type)} is not supported`,
      );
  }
}

function template(step: Json, special: ReadonlyMap<string, number>, file: string) {
  const tokens = (step.special_tokens ?? {}) as Record<string, { ids?: number[] }>;
  const prefix: number[] = [];
  const suffix: number[] = [];
  let seen = false;
  for (const item of (step.single as Json[] | undefined) ?? []) {
    if (item.Sequence) {
      seen = true;
      continue;
    }
    const name = (item.SpecialToken as { id?: string } | undefined)?.id ?? "";
    const ids = tokens[name]?.ids ?? (special.has(name) ? [special.get(name) as number] : undefined);
    if (!ids) throw new IvoaiError("CONFIG_INVALID", `${file}: its template names an unknown token ${name}`);
    (seen ? suffix : prefix).push(...ids);
  }
  return { prefix, suffix };
}
