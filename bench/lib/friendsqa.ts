// The FriendsQA dev set (one utterance per line, questions with their evidence utterances) as memory pages
// written the way an agent keeping a conversation would: one scope per episode, one folder per scene, front
// matter naming the speaker and the session (the scene), the body what was said.
import { readFileSync } from "node:fs";
import path from "node:path";
import { preparePageWrite } from "../../src/server/memory/page-write.js";
import { writerSession } from "../../src/server/memory/session-term.js";
import type { PageWrite } from "../../src/server/memory/store.js";

export interface Utterance {
  id: string;
  project: string;
  scene: string;
  speaker: string;
  text: string;
}

export interface ConversationSet {
  utterances: Utterance[];
  queries: { id: string; project: string; text: string; evidence: string[] }[];
}

export const MEMORY_DATA = path.resolve(process.env.IVOAI_MEMORY_DATA ?? "../shared/data/memory");

export function loadConversationSet(name = "friendsqa"): ConversationSet {
  const lines = (file: string) =>
    readFileSync(path.join(MEMORY_DATA, name, file), "utf8")
      .split("\n")
      .filter((line) => line.trim().length > 0)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  const utterances = lines("pages.jsonl").map((raw) => ({
    id: String(raw._id),
    project: String(raw.project),
    scene: String(raw.scene),
    speaker: String(raw.speaker),
    text: String(raw.text),
  }));
  const queries = lines("queries.jsonl").map((raw) => ({
    id: String(raw._id),
    project: String(raw.project),
    text: String(raw.text),
    evidence: (raw.evidence as unknown[]).map(String),
  }));
  return { utterances, queries };
}

/** The scope an episode's pages live in. */
export const episodeScope = (project: string) => `friends:${project}`;

/** The page path of an utterance: its scene's folder, then its number in the scene ("s01_e23_c06-u12" → …/u12). */
export const utterancePath = (utterance: Utterance) =>
  `${utterance.scene}/${utterance.id.slice(utterance.id.lastIndexOf("-") + 1)}`;

/** An utterance as a memory page write, in the order of the conversation. */
export function utterancePage(utterance: Utterance): PageWrite {
  const yaml = (text: string) => JSON.stringify(text);
  return preparePageWrite({
    scope: episodeScope(utterance.project),
    path: utterancePath(utterance),
    body: `---\nspeaker: ${yaml(utterance.speaker)}\nsession: ${yaml(utterance.scene)}\n---\n${utterance.text}\n`,
    author: "bench",
  });
}

/**
 * An utterance as an agent writes it with no front matter ("Speaker: text"), one MCP session per scene: the
 * session is the one the server sets on an approved write of credential "bench" in session <scene> (the bench
 * uses the store's write path, not the gate).
 */
export function plainUtterancePage(utterance: Utterance): PageWrite {
  return preparePageWrite({
    scope: episodeScope(utterance.project),
    path: utterancePath(utterance),
    body: `${utterance.speaker}: ${utterance.text}\n`,
    author: "bench",
    session: writerSession("bench", utterance.scene),
  });
}
