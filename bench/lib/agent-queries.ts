// Longer natural-language questions of the kind coding agents send (8–25 words), generated from the corpus's own
// sentences so that they match it: a question frame around a run of one sentence's words. Deterministic.
import { createRandom, sentencePool } from "./corpus.js";

const FRAMES = [
  (words: string) => `What does our documentation say about ${words}?`,
  (words: string) => `How do we handle ${words} in this project?`,
  (words: string) => `Where is it explained why ${words}?`,
  (words: string) => `Find the notes on ${words} and the decisions around it`,
  (words: string) => `Can you explain ${words}, with the relevant references?`,
];

/** `count` questions of 8–25 words each. */
export function agentQueries(count: number, seed = 23): string[] {
  const random = createRandom(seed);
  const pool = sentencePool().map((sentence) => sentence.replace(/[^\p{L}\p{N}\s-]/gu, " ").split(/\s+/));
  const usable = pool.filter((words) => words.length >= 10);
  const queries: string[] = [];
  while (queries.length < count) {
    const words = usable[Math.floor(random() * usable.length)] as string[];
    const frame = FRAMES[Math.floor(random() * FRAMES.length)] as (words: string) => string;
    const frameWords = frame("").split(/\s+/).filter(Boolean).length;
    const length = 4 + Math.floor(random() * (19 - frameWords));
    const start = Math.floor(random() * Math.max(1, words.length - length));
    const question = frame(
      words
        .slice(start, start + length)
        .join(" ")
        .toLowerCase(),
    );
    const total = question.split(/\s+/).length;
    if (total >= 8 && total <= 25) queries.push(question);
  }
  return queries;
}
