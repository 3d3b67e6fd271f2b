// memory_query: lexical hits in the caller's scopes (dates in the question as date terms), a turn of a session scored
// with the turns around it as its context, fused with the pages' vector ranking when memory has vectors (a model
// embedder: memory/vectors.ts), adjusted by feedback, fused with their graph neighbours.

import type { Logger } from "../../shared/logger.js";
import { DEFAULT_FUSION, type FusionParams, fuseRankings, fusionDepth } from "../context/fusion.js";
import { analyzeQuery, foldDiacritics, type Language, words } from "../retrieval/analyzer.js";
import { dateExpressionTerms } from "../retrieval/dates.js";
import { DEFAULT_LEXICAL_PARAMS, type LexicalParams } from "../retrieval/lexical-index.js";
import { makeSnippet } from "../retrieval/snippet.js";
import { createSyncedIndex, type SyncedIndex } from "../retrieval/synced-index.js";
import { splitSessionMarker } from "./session-term.js";
import type { MemoryStore, PageHead, PageRecord } from "./store.js";
import type { MemoryVectors } from "./vectors.js";

export type MemoryVia = "lexical" | "vector" | "graph";

export interface MemoryHit {
  page: PageRecord;
  score: number;
  snippet: string;
  via: MemoryVia[];
  /** For graph results: the matching page it is linked with, and how. */
  neighbour_of?: { path: string; type: string };
  flagged: boolean;
}

export interface MemorySearcher {
  refresh(): Promise<void>;
  search(query: string, scopes: readonly string[], limit: number): Promise<MemoryHit[]>;
  readonly size: number;
}

/** Share of a matching page's score that its graph neighbours receive. */
const GRAPH_WEIGHT = 0.5;
/** Turns each side of a page in its session that form its context window. */
const SESSION_WINDOW = 5;
/**
 * Weight of a turn `d` turns away from the page in its window: DECAY ** d (0.7: a turn two away counts half).
 * Turns further off say less about what the page is about, but an answer is often a few turns after its question.
 */
const SESSION_DECAY = 0.7;
/** A session page's own score's share against its window's (the rest): the turn itself says a little more. */
const OWN_SHARE = 0.6;
/**
 * Lexical candidates ranked before session context and feedback (short pages need a deep pool; each brings the
 * turns of its window, so 100 reach as far as 200 did with a window of two: FriendsQA recall is the same).
 */
const CANDIDATES = 100;

/**
 * The engine's parameters for memory: context search's, with less length normalisation (b 0.3 against 0.75) and
 * term frequency saturating sooner (k1 1.0 against 1.2), since pages are short notes and turns whose length and
 * repetitions say little about their relevance (FriendsQA R@10 0.668 → 0.676 with OWN_SHARE, both halves; FaQuAD
 * unchanged).
 */
export const MEMORY_LEXICAL_PARAMS: LexicalParams = { ...DEFAULT_LEXICAL_PARAMS, b: 0.3, k1: 1.0 };

/**
 * What the memory index keeps per page: its scope, the scope's group (the number searches are confined by) and,
 * for a page of a conversation, its session.
 */
export interface MemoryPageMeta {
  scope: string;
  group: number;
  session?: string;
}

/** Whether a snapshot's metadata entry is a MemoryPageMeta (scope, a group number below 2^31, maybe a session). */
function isPageMeta(value: unknown): value is MemoryPageMeta {
  if (typeof value !== "object" || value === null) return false;
  const { scope, group, session } = value as Record<string, unknown>;
  return (
    typeof scope === "string" &&
    Number.isInteger(group) &&
    (group as number) >= 0 &&
    (group as number) < 2 ** 31 &&
    (session === undefined || typeof session === "string")
  );
}

export interface MemoryIndexOptions {
  params?: LexicalParams;
  /** Where the index persists itself, so that a start loads it instead of reading every page. */
  snapshotFile?: string;
  /** A snapshot that could not be used or written (searches are unaffected). */
  onSnapshotProblem?: (message: string) => void;
  /** Whether the index writes its snapshot by itself when enough changed (the gateway); else only `persist()`. */
  autoPersist?: boolean;
}

/** The memory index, which also numbers scopes so that a search is confined to the caller's while ranking. */
export interface MemoryIndex extends SyncedIndex<MemoryPageMeta> {
  scopeGroup(scope: string): number | undefined;
  readonly scopeGroups: number;
  /** Whether any page indexed so far belongs to a session (else ranking skips session context). */
  readonly hasSessions: boolean;
}

export interface MemorySearcherOptions {
  /** The clock that dates in questions ("last week") are relative to. */
  now?: () => Date;
  /** Pages' vectors, whose ranking is fused with the lexical one (reciprocal rank, `fusion`). */
  vectors?: MemoryVectors;
  fusion?: FusionParams;
  /** Where a failing vector side is reported (the query then ranks lexically). */
  logger?: Logger;
}

/** Feedback never deletes: it nudges ranking, and stale/wrong flags halve a page's weight. */
export function feedbackFactor(feedback: PageRecord["feedback"]): number {
  const votes = 1 + 0.1 * Math.min(feedback.helpful, 10) - 0.1 * Math.min(feedback.not_helpful, 5);
  return feedback.stale + feedback.wrong > 0 ? votes * 0.5 : votes;
}

/**
 * The lexical index over memory pages, kept in step with the store. Its per-page meta is the scope and session,
 * one object shared by every page of the pair (paths are read with the page: 500,000 of them cost ~60 MB).
 */
export function createMemoryIndex(store: MemoryStore, options: MemoryIndexOptions = {}): MemoryIndex {
  const groups = new Map<string, number>();
  const metas = new Map<string, MemoryPageMeta>();
  let sessions = 0;
  /** The next scope's number (above every number a restored snapshot holds: those scopes keep theirs). */
  let nextGroup = 0;
  const idOf = (scope: string, session: string | undefined) =>
    session === undefined ? scope : `${scope}\0${session}`;
  /** The one metadata object of a scope and session (its scope numbered on first sight). */
  const metaOf = (scope: string, session: string | undefined) => {
    const id = idOf(scope, session);
    let meta = metas.get(id);
    if (meta === undefined) {
      let group = groups.get(scope);
      if (group === undefined) {
        group = nextGroup++;
        groups.set(scope, group);
      }
      if (session !== undefined) sessions += 1;
      meta = session === undefined ? { scope, group } : { scope, group, session };
      metas.set(id, meta);
    }
    return meta;
  };
  const index = createSyncedIndex<MemoryPageMeta>(
    {
      generation: () => store.generation(),
      removedSince: (generation) => store.removedSince(generation),
      async addedAfter(afterKey, limit) {
        const rows = await store.pageTermsAfter(afterKey, limit);
        return rows.map((row) => {
          const { session, terms } = splitSessionMarker(row.terms);
          const meta = metaOf(row.scope, session);
          return { key: row.key, terms, meta, group: meta.group };
        });
      },
      languages: async () =>
        (await store.languages()).filter((value): value is Language => value === "en" || value === "pt"),
      instance: () => store.instance(),
      count: () => store.pageCount(),
      // The snapshot's scopes keep their numbers (its passages are confined by them); later rows reuse its metas.
      restored(values) {
        if (!values.every(isPageMeta)) return false;
        for (const meta of values) {
          if (metas.has(idOf(meta.scope, meta.session))) continue;
          metas.set(idOf(meta.scope, meta.session), meta);
          if (!groups.has(meta.scope)) groups.set(meta.scope, meta.group);
          nextGroup = Math.max(nextGroup, meta.group + 1);
          if (meta.session !== undefined) sessions += 1;
        }
        return true;
      },
    },
    {
      params: options.params ?? MEMORY_LEXICAL_PARAMS,
      ...(options.snapshotFile ? { snapshotFile: options.snapshotFile } : {}),
      ...(options.onSnapshotProblem ? { onSnapshotProblem: options.onSnapshotProblem } : {}),
      ...(options.autoPersist ? {} : { snapshotAfterChanges: Number.POSITIVE_INFINITY }),
    },
  );
  // The synced index itself, with what only memory needs beside it (no forwarding of every method).
  return Object.defineProperties(index as MemoryIndex, {
    scopeGroup: { value: (scope: string) => groups.get(scope) },
    scopeGroups: { get: () => nextGroup },
    hasSessions: { get: () => sessions > 0 },
  });
}

/** memory_query over `index` (one of its own unless given: a benchmark times the bare index beside it). */
export function createMemorySearcher(
  store: MemoryStore,
  index: MemoryIndex = createMemoryIndex(store),
  options: MemorySearcherOptions = {},
): MemorySearcher {
  const now = options.now ?? (() => new Date());
  const fusion = options.fusion ?? DEFAULT_FUSION;
  const { vectors } = options;
  /** The vector side's ranking in the caller's scopes; none without vectors or while they fail. */
  const vectorRanking = async (query: string, scopes: ReadonlySet<string>, depth: number) => {
    if (!vectors || fusion.vectorWeight <= 0) return [];
    try {
      return await vectors.search(query, scopes, depth);
    } catch (error) {
      options.logger?.warn("memory vector search failed; ranking lexically", {
        index: vectors.name,
        error: error instanceof Error ? error.message : String(error),
      });
      return [];
    }
  };
  return {
    get size() {
      return index.size;
    },
    refresh: () => index.refresh(),
    async search(query, scopes, limit) {
      await index.refresh();
      const allowed = new Set(scopes);
      const mask = new Uint8Array(Math.max(1, index.scopeGroups));
      for (const scope of allowed) {
        const group = index.scopeGroup(scope);
        if (group !== undefined) mask[group] = 1;
      }
      const terms = analyzeQuery(query, index.languages());
      const today = Math.floor(now().getTime() / 86_400_000) * 86_400_000;
      for (const [term, weight] of dateExpressionTerms(query, today)) terms.set(term, weight);
      // Session context lifts turns that rank low by themselves: it needs a deep pool of candidates.
      const lexical = index.search(terms, {
        limit: index.hasSessions ? Math.max(limit * 10, CANDIDATES) : Math.max(limit * 5, 50),
        groups: mask,
        proximityDepth: Math.max(limit * 5, 50),
      });
      const context = index.hasSessions
        ? sessionContext(index, terms, lexical)
        : { scores: new Map(lexical.map((hit) => [hit.key, hit.score])), from: new Map() };
      const lexicalRanking = [...context.scores].sort((a, b) => b[1] - a[1] || a[0] - b[0]);
      const semantic = await vectorRanking(query, allowed, fusionDepth(limit, fusion));
      // Ranking needs each candidate's path and feedback; bodies are read only for the pages returned.
      const pool = (
        semantic.length === 0
          ? lexicalRanking
          : fuseRankings(
              lexicalRanking.slice(0, fusionDepth(limit, fusion)).map(([seq]) => ({ seq })),
              semantic.map((hit) => ({ seq: hit.key })),
              fusion,
            ).map((hit): [number, number] => [hit.seq, hit.score])
      ).slice(0, limit + Math.max(5, Math.ceil(limit / 2)));
      const heads = await store.pageHeads([
        ...new Set(pool.flatMap(([key]) => [key, context.from.get(key)?.key ?? key])),
      ]);
      const ranked: { head: PageHead; score: number; context?: { path: string }; vectorOnly: boolean }[] = [];
      for (const [key, score] of pool) {
        const head = heads.get(key);
        if (!head || !allowed.has(head.scope)) continue;
        const from = context.from.get(key);
        const fromHead = from === undefined ? undefined : heads.get(from.key);
        ranked.push({
          head,
          score: score * feedbackFactor(head.feedback),
          ...(fromHead ? { context: { path: fromHead.path } } : {}),
          vectorOnly: !context.scores.has(key),
        });
      }
      ranked.sort((a, b) => b.score - a.score || a.head.key - b.head.key);

      // Graph expansion: neighbours of the best lexical pages, ranked after the page that led to them.
      const seeds = ranked.slice(0, Math.min(5, limit));
      const links = await store.neighbours(
        [...allowed],
        seeds.map((seed) => seed.head.path),
      );
      // Scores stay in BM25 units: a graph neighbour earns half the score of the page that led to it.
      const fused = new Map<
        string,
        {
          head: PageHead;
          page?: PageRecord;
          score: number;
          via: Set<MemoryVia>;
          neighbour_of?: { path: string; type: string };
        }
      >();
      const id = (page: PageHead) => `${page.scope}\0${page.path}`;
      const semanticKeys = new Set(semantic.map((hit) => hit.key));
      for (const { head, score, context: from, vectorOnly } of ranked) {
        // A page that only its session's turns around it matched is a neighbour of the best of them.
        const vector = semanticKeys.has(head.key);
        fused.set(
          id(head),
          from
            ? {
                head,
                score,
                via: new Set(vector ? ["vector", "graph"] : ["graph"]),
                neighbour_of: { path: from.path, type: "session" },
              }
            : {
                head,
                score,
                via: new Set(vectorOnly ? ["vector"] : vector ? ["lexical", "vector"] : ["lexical"]),
              },
        );
      }
      const seedScore = new Map(seeds.map((seed) => [seed.head.path, seed.score]));
      for (const link of links) {
        if (!allowed.has(link.page.scope) || link.page.path === link.from) continue;
        const bonus = GRAPH_WEIGHT * (seedScore.get(link.from) ?? 0) * feedbackFactor(link.page.feedback);
        const entry = fused.get(id(link.page));
        if (!entry) {
          fused.set(id(link.page), {
            head: link.page,
            score: bonus,
            via: new Set(["graph"]),
            neighbour_of: { path: link.from, type: link.type },
          });
        } else if (!entry.via.has("graph")) {
          entry.score += bonus;
          entry.via.add("graph");
        }
      }
      const best = [...fused.values()]
        .sort((a, b) => b.score - a.score || a.head.key - b.head.key)
        .slice(0, limit);
      const bodies = await store.pagesByKeys(
        best.filter((entry) => !entry.page).map((entry) => entry.head.key),
      );
      const snippetTerms = words(query)
        .map(foldDiacritics)
        .filter((word) => word.length > 2);
      return best.flatMap((entry) => {
        // A page replaced since its head was read has left the results (as one removed from the index).
        const page = entry.page ?? bodies.get(entry.head.key);
        if (!page) return [];
        return [
          {
            page,
            score: Math.round(entry.score * 1e6) / 1e6,
            snippet: makeSnippet(page.body, snippetTerms),
            via: [...entry.via],
            ...(entry.neighbour_of ? { neighbour_of: entry.neighbour_of } : {}),
            flagged: page.feedback.stale + page.feedback.wrong > 0,
          },
        ];
      });
    },
  };
}

/**
 * Scores with session context: a page of a session (a lexical hit, or a turn around one) scores a weighted mean
 * of its own score and its window's (OWN_SHARE), the window being the page and the turns around it taken as one passage, each turn's
 * terms and length counted at a weight that decays with its distance from the page; the
 * mean keeps session pages on the scale of pages without one. `from` names, for a page with no lexical score of
 * its own, the best-scoring lexical hit in its window.
 */
function sessionContext(
  index: MemoryIndex,
  query: ReadonlyMap<string, number>,
  lexical: readonly { key: number; score: number }[],
): { scores: Map<number, number>; from: Map<number, { key: number }> } {
  const own = new Map(lexical.map((hit) => [hit.key, hit.score]));
  const scores = new Map(own);
  const from = new Map<number, { key: number }>();
  const windows = new Map<number, { keys: number[]; shares: number[] }>();
  const windowOf = (key: number, meta: MemoryPageMeta) => {
    let window = windows.get(key);
    if (!window) {
      const near = index.around(
        key,
        SESSION_WINDOW,
        (other) => other.session === meta.session && other.scope === meta.scope,
      );
      const keys = [key];
      const shares = [1];
      for (const entry of near) {
        keys.push(entry.key);
        shares.push(SESSION_DECAY ** entry.distance);
      }
      window = { keys, shares };
      windows.set(key, window);
    }
    return window.keys;
  };
  for (const hit of lexical) {
    const meta = index.meta(hit.key);
    if (meta?.session === undefined) continue;
    for (const key of windowOf(hit.key, meta)) {
      if (key !== hit.key) windowOf(key, meta);
      if (own.has(key)) continue;
      const best = from.get(key);
      if (!best || hit.score > (own.get(best.key) ?? 0)) from.set(key, { key: hit.key });
    }
  }
  const keys = [...windows.keys()];
  const list = keys.map((key) => windows.get(key) as { keys: number[]; shares: number[] });
  const windowScores = index.windowScores(
    query,
    list.map((window) => window.keys),
    list.map((window) => window.shares),
  );
  for (const [i, key] of keys.entries())
    scores.set(key, OWN_SHARE * (own.get(key) ?? 0) + (1 - OWN_SHARE) * (windowScores[i] as number));
  return { scores, from };
}
