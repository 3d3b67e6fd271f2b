// The session's AUTO state, changed in memory and written through the session store in order: every change
// bumps the checkpoint, writes never interleave, and the changes of one interval (CHECKPOINT_INTERVAL_MS)
// cost one write, not one each; the final state is written at once.

import type { AutoState } from "../session/auto-state.js";
import type { SessionRecord, SessionStore } from "../session/store.js";

export interface Recorder {
  readonly state: AutoState;
  /** Applies `change` to the state and schedules a write of the new checkpoint. */
  change(change: (state: AutoState) => void): void;
  /** Resolves once every change so far is on disk. */
  flush(): Promise<void>;
  /** Writes the final state together with the session's end fields. */
  finish(fields: Partial<SessionRecord>): Promise<void>;
}

/** At most one checkpoint write per interval while a session runs (a crash loses at most this much). */
export const CHECKPOINT_INTERVAL_MS = 100;

export function createRecorder(
  store: SessionStore,
  sessionId: string,
  initial: AutoState,
  /** Sees the state after every change (e.g. to mirror task states to a lifecycle coordinator). */
  observe?: (state: AutoState) => void,
): Recorder {
  const state = structuredClone(initial);
  let writing: Promise<void> = Promise.resolve();
  let dirty = false;
  let failure: unknown;
  let lastWrite = 0;

  const write = (extra: Partial<SessionRecord> = {}) => {
    const final = Object.keys(extra).length > 0;
    dirty = true;
    writing = writing.then(async () => {
      if (!dirty && !final) return;
      const wait = lastWrite + CHECKPOINT_INTERVAL_MS - performance.now();
      if (!final && wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      if (!dirty && !final) return;
      dirty = false;
      lastWrite = performance.now();
      // Only the latest write's outcome counts: a later write carries every earlier change. The final one is
      // tried twice (a lock held a moment too long by another session must not leave the record "running").
      for (let tries = final ? 2 : 1; tries > 0; tries--) {
        try {
          await store.update(sessionId, { ...extra, auto: structuredClone(state) });
          failure = undefined;
          return;
        } catch (error) {
          failure = error;
          dirty = true;
        }
      }
    });
    return writing;
  };

  return {
    state,
    change(change) {
      change(state);
      observe?.(state);
      state.checkpoint = { seq: state.checkpoint.seq + 1, at: new Date().toISOString() };
      void write();
    },
    async flush() {
      await writing;
      if (failure) throw failure;
    },
    async finish(fields) {
      state.checkpoint = { seq: state.checkpoint.seq + 1, at: new Date().toISOString() };
      await write(fields);
      if (failure) throw failure;
    },
  };
}
