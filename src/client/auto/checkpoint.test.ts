import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { initialAutoState } from "../session/auto-state.js";
import { openSessionStore } from "../session/store.js";
import { createRecorder } from "./checkpoint.js";

const initial = initialAutoState("codex", 2);

describe("the AUTO recorder", () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  const orchestratedSession = async () => {
    dir = await mkdtemp(path.join(tmpdir(), "ivoai-recorder-"));
    const store = openSessionStore(dir);
    const session = await store.create({
      agent: "codex",
      mode: "orchestrated",
      status: "running",
      pid: null,
      pid_start_ticks: null,
      project: "p",
      knowledge_sources: [],
      compression: { requested: "direct", effective: "direct", reason: "test" },
      auto: initial,
    });
    return { store, session };
  };

  it("writes every change's checkpoint in order, a burst as few writes, and the final state at once", async () => {
    const { store, session } = await orchestratedSession();
    let updates = 0;
    const counted = {
      ...store,
      update: (...args: Parameters<typeof store.update>) => {
        updates++;
        return store.update(...args);
      },
    };
    const recorder = createRecorder(counted, session.id, initial);
    for (let index = 0; index < 50; index++) {
      recorder.change((state) => {
        state.admissions.push({ at: "now", executor: "codex", admitted: true, reason: String(index) });
        state.admissions.splice(0, Math.max(0, state.admissions.length - 40));
      });
    }
    await recorder.flush();
    const saved = await store.get(session.id);
    expect(saved.auto?.checkpoint.seq).toBe(50);
    expect(saved.auto?.admissions.at(-1)?.reason).toBe("49");
    expect(updates).toBeLessThanOrEqual(3);
    recorder.change((state) => {
      state.phase = "done";
    });
    await recorder.finish({ status: "exited", exit_code: 0 });
    const final = JSON.parse(
      await readFile(path.join(dir as string, "sessions", `${session.id}.json`), "utf8"),
    );
    expect(final).toMatchObject({
      status: "exited",
      exit_code: 0,
      auto: { phase: "done", checkpoint: { seq: 52 } },
    });
  });

  it("forgets a failed write once a later one succeeds, and retries the final write once", async () => {
    const { store, session } = await orchestratedSession();
    let failNext = 1;
    const flaky = {
      ...store,
      update: (...args: Parameters<typeof store.update>) => {
        if (failNext > 0) {
          failNext--;
          return Promise.reject(new Error("lock timeout"));
        }
        return store.update(...args);
      },
    };
    const recorder = createRecorder(flaky, session.id, initial);
    recorder.change((state) => {
      state.phase = "planning";
    });
    await expect(recorder.flush()).rejects.toThrow(/lock timeout/);
    recorder.change((state) => {
      state.phase = "running";
    });
    await recorder.flush();
    failNext = 1;
    await recorder.finish({ status: "exited", exit_code: 0 });
    expect(await store.get(session.id)).toMatchObject({ status: "exited", auto: { phase: "running" } });
  });
});
