// memory_query: lexical hits in the caller's scopes, adjusted by feedback, fused with their graph neighbours.

import { analyzeQuery, foldDiacritics, type Language, words } from "../retrieval/analyzer.js";
import { makeSnippet } from "../retrieval/snippet.js";
import { createSyncedIndex, type SyncedIndex } from "../retrieval/synced-index.js";
import type { MemoryStore, PageHead, PageRecord } from "./store.js";

export interface MemoryHit {
  page: PageRecord;
  score: number;
  snippet: string;
  via: ("lexical" | "graph")[];
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

/** Feedback never deletes: it nudges ranking, and stale/wrong flags halve a page's weight. */
export function feedbackFactor(feedback: PageRecord["feedback"]): number {
  const votes = 1 + 0.1 * Math.min(feedback.helpful, 10) - 0.1 * Math.min(feedback.not_helpful, 5);
  return feedback.stale + feedback.wrong > 0 ? votes * 0.5 : votes;
}

/**
 * The lexical index over memory pages, kept in step with the store. Its per-page meta is the scope alone, one
 * string shared by every page of the scope (paths are read with the page: 500,000 of them cost ~60 MB).
 */
export function createMemoryIndex(store: MemoryStore): SyncedIndex<string> {
  return createSyncedIndex<string>({
    generation: () => store.generation(),
    removedSince: (generation) => store.removedSince(generation),
    async addedAfter(afterKey, limit) {
      const scopes = new Map<string, string>();
      const rows = await store.pageTermsAfter(afterKey, limit);
      return rows.map((row) => {
        let scope = scopes.get(row.scope);
        if (scope === undefined) {
          scope = row.scope;
          scopes.set(scope, scope);
        }
        return { key: row.key, terms: row.terms, meta: scope };
      });
    },
    languages: async () =>
      (await store.languages()).filter((value): value is Language => value === "en" || value === "pt"),
  });
}

/** memory_query over `index` (one of its own unless given: a benchmark times the bare index beside it). */
export function createMemorySearcher(
  store: MemoryStore,
  index: SyncedIndex<string> = createMemoryIndex(store),
): MemorySearcher {
  return {
    get size() {
      return index.size;
    },
    refresh: () => index.refresh(),
    async search(query, scopes, limit) {
      await index.refresh();
      const allowed = new Set(scopes);
      const lexical = index
        .search(analyzeQuery(query, index.languages()), { limit: Math.max(limit * 5, 50) })
        .filter((hit) => allowed.has(index.meta(hit.key) ?? ""));
      // Ranking needs each candidate's path and feedback; bodies are read only for the pages returned.
      const heads = await store.pageHeads(lexical.map((hit) => hit.key));
      const ranked = lexical
        .map((hit) => ({ hit, head: heads.get(hit.key) }))
        .filter((entry): entry is { hit: typeof entry.hit; head: PageHead } => entry.head !== undefined)
        .map(({ hit, head }) => ({ head, score: hit.score * feedbackFactor(head.feedback) }))
        .sort((a, b) => b.score - a.score || a.head.key - b.head.key);

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
          via: Set<"lexical" | "graph">;
          neighbour_of?: { path: string; type: string };
        }
      >();
      const id = (page: PageHead) => `${page.scope}\0${page.path}`;
      for (const { head, score } of ranked) fused.set(id(head), { head, score, via: new Set(["lexical"]) });
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
      const terms = words(query)
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
            snippet: makeSnippet(page.body, terms),
            via: [...entry.via],
            ...(entry.neighbour_of ? { neighbour_of: entry.neighbour_of } : {}),
            flagged: page.feedback.stale + page.feedback.wrong > 0,
          },
        ];
      });
    },
  };
}
