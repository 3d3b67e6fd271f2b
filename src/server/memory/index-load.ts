// The memory index's first load at a gateway start, in the background: health and context are served meanwhile
// (a large memory without a usable snapshot reads every page), memory_query waits for the load it shares, and
// /ready names memory as loading (or why it could not load) until it is done.
import type { Logger } from "../../shared/logger.js";
import type { MemorySearcher } from "./query.js";

export interface MemoryIndexLoad {
  /** Settles once the first load has ended, either way (never rejects). */
  readonly settled: Promise<void>;
  /**
   * The readiness check: throws while the index loads, or after a failed load (which it retries, so that memory
   * becomes ready again once the store is back).
   */
  check(): Promise<void>;
  /** The gateway is stopping: a load cut short by the store closing is not an error worth logging. */
  stop(): void;
}

export function loadMemoryIndex(
  searcher: Pick<MemorySearcher, "refresh" | "size">,
  logger: Logger,
): MemoryIndexLoad {
  let state: { kind: "loading" } | { kind: "ready" } | { kind: "failed"; error: string } = {
    kind: "loading",
  };
  let stopped = false;
  const started = performance.now();
  const settled = searcher.refresh().then(
    () => {
      state = { kind: "ready" };
      logger.info("memory index ready", {
        pages: searcher.size,
        seconds: Math.round(performance.now() - started) / 1000,
      });
    },
    (error: unknown) => {
      state = { kind: "failed", error: error instanceof Error ? error.message : String(error) };
      if (!stopped) logger.error("memory index could not load", { error: state.error });
    },
  );
  return {
    settled,
    async check() {
      if (state.kind === "loading") throw new Error("the memory index is loading");
      if (state.kind === "failed") {
        try {
          await searcher.refresh();
        } catch (error) {
          throw new Error(
            `the memory index could not load: ${error instanceof Error ? error.message : String(error)}`,
          );
        }
        state = { kind: "ready" };
      }
    },
    stop() {
      stopped = true;
    },
  };
}
