// The normalizers and pre-tokenizers of a Hugging Face tokenizer.json that E5/MiniLM exports use: SentencePiece's
// precompiled charsmap (XLM-R), Replace, the Unicode forms, BERT's normalizer and pre-tokenizer, and Metaspace.
import { IvoaiError } from "../../../shared/errors.js";

export type Normalizer = (text: string) => string;
export type PreTokenizer = (text: string) => string[];

type Json = Record<string, unknown>;

function unsupported(file: string, what: string, type: unknown): IvoaiError {
  return new IvoaiError("CONFIG_INVALID", `${file}: ${what} type ${JSON.stringify(type)} is not supported`);
}

/** The normalizer a tokenizer.json describes (`null`: none). */
export function buildNormalizer(spec: unknown, file: string): Normalizer {
  if (spec === null || spec === undefined) return (text) => text;
  const step = spec as Json;
  switch (step.type) {
    case "Sequence": {
      const steps = ((step.normalizers as unknown[]) ?? []).map((inner) => buildNormalizer(inner, file));
      return (text) => steps.reduce((value, apply) => apply(value), text);
    }
    case "Precompiled":
      return precompiledNormalizer(String(step.precompiled_charsmap ?? ""), file);
    case "Replace":
      return replaceNormalizer(step, file);
    case "NFC":
    case "NFD":
    case "NFKC":
    case "NFKD": {
      const form = step.type;
      return (text) => text.normalize(form);
    }
    case "Lowercase":
      return (text) => text.toLowerCase();
    case "StripAccents":
      return stripAccents;
    case "Strip": {
      const [left, right] = [step.left !== false, step.right !== false];
      return (text) => {
        const start = left ? text.trimStart() : text;
        return right ? start.trimEnd() : start;
      };
    }
    case "BertNormalizer":
      return bertNormalizer(step);
    default:
      throw unsupported(file, "normalizer", step.type);
  }
}

function replaceNormalizer(step: Json, file: string): Normalizer {
  const pattern = step.pattern as { Regex?: string; String?: string } | undefined;
  const content = String(step.content ?? "");
  if (typeof pattern?.String === "string") {
    const needle = pattern.String;
    return (text) => text.split(needle).join(content);
  }
  if (typeof pattern?.Regex === "string") {
    const regex = new RegExp(pattern.Regex, "gu");
    return (text) => text.replace(regex, () => content);
  }
  throw unsupported(file, "Replace pattern", pattern);
}

const stripAccents: Normalizer = (text) => text.normalize("NFD").replace(/\p{Mn}/gu, "");

/** SentencePiece's `precompiled_charsmap`: [u32 trie bytes][Darts double array][NUL-separated replacements]. */
export function precompiledNormalizer(base64: string, file: string): Normalizer {
  const bytes = Buffer.from(base64, "base64");
  const trieBytes = bytes.length >= 4 ? bytes.readUInt32LE(0) : -1;
  if (trieBytes < 4 || trieBytes % 4 !== 0 || 4 + trieBytes > bytes.length) {
    throw new IvoaiError("CONFIG_INVALID", `${file}: the precompiled_charsmap does not parse`);
  }
  const units = new Uint32Array(trieBytes / 4);
  for (let i = 0; i < units.length; i++) units[i] = bytes.readUInt32LE(4 + i * 4);
  const replacements = bytes.subarray(4 + trieBytes);
  const offset = (unit: number) => (unit >>> 10) << ((unit & (1 << 9)) >>> 6);
  const replacementAt = (at: number) => {
    const end = replacements.indexOf(0, at);
    return replacements.toString("utf8", at, end < 0 ? replacements.length : end);
  };
  /** [matched byte length, replacement offset] of the longest key at `start`, or undefined. */
  const longest = (input: Buffer, start: number): [number, number] | undefined => {
    let node = offset(units[0] ?? 0);
    let found: [number, number] | undefined;
    for (let i = start; i < input.length; i++) {
      const byte = input[i] as number;
      if (byte === 0) break;
      node ^= byte;
      const unit = units[node];
      // The label keeps bit 31, which only value units set: they never match a byte.
      if (unit === undefined || (unit & 0x800000ff) !== byte) break;
      node ^= offset(unit);
      if ((unit >>> 8) & 1) found = [i + 1 - start, (units[node] ?? 0) & 0x7fffffff];
    }
    return found;
  };
  return (text) => {
    const input = Buffer.from(text, "utf8");
    let out = "";
    let copied = 0;
    for (let at = 0; at < input.length; ) {
      const match = longest(input, at);
      if (match) {
        out += input.toString("utf8", copied, at) + replacementAt(match[1]);
        at += match[0];
        copied = at;
      } else at += utf8Length(input[at] as number);
    }
    return out + input.toString("utf8", copied);
  };
}

function utf8Length(lead: number): number {
  if (lead < 0x80) return 1;
  if (lead >= 0xf0) return 4;
  if (lead >= 0xe0) return 3;
  return lead >= 0xc0 ? 2 : 1;
}

const CONTROL = /\p{C}/u;
const WHITESPACE = /\p{White_Space}/u;

/** CJK ideographs that BERT surrounds with spaces (the ranges of the original BERT tokenizer). */
function isChineseChar(cp: number): boolean {
  return (
    (cp >= 0x4e00 && cp <= 0x9fff) ||
    (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x20000 && cp <= 0x2a6df) ||
    (cp >= 0x2a700 && cp <= 0x2b73f) ||
    (cp >= 0x2b740 && cp <= 0x2b81f) ||
    (cp >= 0x2b920 && cp <= 0x2ceaf) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0x2f800 && cp <= 0x2fa1f)
  );
}

function bertNormalizer(step: Json): Normalizer {
  const clean = step.clean_text !== false;
  const chinese = step.handle_chinese_chars !== false;
  const lowercase = step.lowercase !== false;
  const strip = typeof step.strip_accents === "boolean" ? step.strip_accents : lowercase;
  return (text) => {
    let out = "";
    for (const ch of text) {
      const cp = ch.codePointAt(0) as number;
      if (clean) {
        if (ch === "\t" || ch === "\n" || ch === "\r" || (WHITESPACE.test(ch) && !CONTROL.test(ch))) {
          out += " ";
          continue;
        }
        if (cp === 0 || cp === 0xfffd || CONTROL.test(ch)) continue;
      }
      out += chinese && isChineseChar(cp) ? ` ${ch} ` : ch;
    }
    if (strip) out = stripAccents(out);
    return lowercase ? out.toLowerCase() : out;
  };
}

/** The pre-tokenizer a tokenizer.json describes (`null`: the whole text is one word). */
export function buildPreTokenizer(spec: unknown, file: string): PreTokenizer {
  if (spec === null || spec === undefined) return (text) => (text ? [text] : []);
  const step = spec as Json;
  switch (step.type) {
    case "Sequence": {
      const steps = ((step.pretokenizers as unknown[]) ?? []).map((inner) => buildPreTokenizer(inner, file));
      return (text) => steps.reduce<string[]>((words, split) => words.flatMap(split), [text]);
    }
    case "Metaspace":
      return metaspace(step);
    case "BertPreTokenizer":
      return bertWords;
    case "WhitespaceSplit":
      return (text) => text.split(/\p{White_Space}+/u).filter(Boolean);
    default:
      throw unsupported(file, "pre_tokenizer", step.type);
  }
}

function metaspace(step: Json): PreTokenizer {
  const replacement = typeof step.replacement === "string" ? step.replacement : "▁";
  const scheme =
    typeof step.prepend_scheme === "string"
      ? step.prepend_scheme
      : step.add_prefix_space === false
        ? "never"
        : "always";
  const split = step.split !== false;
  return (text) => {
    if (!text) return [];
    let value = text.replaceAll(" ", replacement);
    if (scheme !== "never" && !value.startsWith(replacement)) value = replacement + value;
    if (!split) return value ? [value] : [];
    // MergedWithNext: every replacement character starts a new word.
    const words: string[] = [];
    let from = 0;
    for (let at = value.indexOf(replacement, 1); at > 0; at = value.indexOf(replacement, at + 1)) {
      words.push(value.slice(from, at));
      from = at;
    }
    if (from < value.length) words.push(value.slice(from));
    return words.filter(Boolean);
  };
}

const PUNCTUATION = /[\p{P}!-/:-@[-`{-~]/u;

/** BERT: split on whitespace, and every punctuation character is a word of its own. */
function bertWords(text: string): string[] {
  const words: string[] = [];
  let word = "";
  for (const ch of text) {
    if (WHITESPACE.test(ch)) {
      if (word) words.push(word);
      word = "";
    } else if (PUNCTUATION.test(ch)) {
      if (word) words.push(word);
      words.push(ch);
      word = "";
    } else word += ch;
  }
  if (word) words.push(word);
  return words;
}
