// The frontend engine over the real AUTO engine and the fake official CLIs: streaming, follow-up turns that
// continue the same CLI conversation, fail-closed explicit models, and cancellation.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeClis, installFakeClis } from "../../../test/fake-clis.js";
import { procStat } from "../auto/executors/process.js";
import { openRegistry } from "../connections/registry.js";
import type { FrontendTurn } from "./contracts.js";
import { createAutoFrontendEngine } from "./engine.js";

/** Whether a process still runs (a zombie nobody reaped counts as ended). */
function running(pid: number): boolean {
  const state = procStat(pid)?.state;
  return state !== undefined && state !== "Z" && state !== "X";
}

describe("the AUTO frontend engine", () => {
  let root: string;
  let fakes: FakeClis;
  let env: NodeJS.ProcessEnv;
  const engine = () =>
    createAutoFrontendEngine({
      registry: openRegistry(env),
      env,
      cwd: root,
      selfCommand: [process.execPath, path.resolve("dist/ivoai.mjs")],
      knowledgeSources: [],
      notice: () => undefined,
      killAfterMs: 300,
    });
  const turn = (prompt: string, extra: Partial<FrontendTurn> = {}) => {
    const deltas: string[] = [];
    const request: FrontendTurn = {
      frontendSession: "ses_frontend_1",
      prompt,
      selection: { kind: "auto" },
      effort: null,
      signal: new AbortController().signal,
      onText: (delta) => deltas.push(delta),
      ...extra,
    };
    return { deltas, request };
  };
  const turns = async () => (await fakes.log()).filter((line) => line.role !== "app-server");

  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), "ivoai-frontend-engine-"));
    fakes = await installFakeClis(path.join(root, "fakes"));
    env = {
      ...process.env,
      ...fakes.env,
      XDG_CONFIG_HOME: path.join(root, "config"),
      XDG_STATE_HOME: path.join(root, "state"),
      XDG_DATA_HOME: path.join(root, "data"),
      HOME: root,
    };
  });
  afterAll(async () => {
    await fakes.killAll();
    await rm(root, { recursive: true, force: true });
  });

  it("streams a turn, and a follow-up turn continues the same executor conversation", async () => {
    await fakes.script({
      codex: {
        turns: {
          plan: [
            {
              reply: {
                tasks: [
                  {
                    id: "n",
                    kind: "research",
                    instructions: "x",
                    depends_on: [],
                    signals: {
                      complexity: 0.1,
                      context_need: 0.1,
                      risk: 0.1,
                      ambiguity: 0.1,
                      est_tokens: 10,
                    },
                  },
                ],
              },
            },
          ],
          consolidate: [{ reply: "first answer" }, { reply: "second answer" }],
        },
      },
      claude: {},
    });
    const first = turn("Implement the canary stage");
    const result = await engine().turn(first.request);
    expect(result).toMatchObject({ finish: "stop", error: null });
    expect(first.deltas.join("")).toContain("first answer");
    const second = turn("Now add tests for it");
    expect((await engine().turn(second.request)).finish).toBe("stop");
    expect(second.deltas.join("")).toContain("second answer");
    const logged = await turns();
    const plans = logged.filter((line) => line.role === "plan");
    expect(plans).toHaveLength(2);
    // The second turn's planning resumed the conversation the first turn ended with.
    const firstThread = logged.filter((line) => line.executor === "codex").at(1)?.thread_id;
    expect(plans[1]?.resume).toBe(firstThread);
  });

  it("keeps an explicit model: exactly it, and a clear error instead of another vendor on its limit", async () => {
    await fakes.reset();
    await fakes.script({
      claude: { turns: { plan: [{ limit: "usage" }] } },
      codex: { turns: { handoff: [{ reply: "should never run" }] } },
    });
    const explicit = turn("Implement the canary stage", {
      frontendSession: "ses_frontend_2",
      selection: { kind: "explicit", id: "mdl_test", executor: "claude", model: "sonnet", effort: "high" },
    });
    const result = await engine().turn(explicit.request);
    expect(result.finish).toBe("error");
    expect(result.error).toMatch(/explicit/);
    const logged = await turns();
    expect(logged.map((line) => line.executor)).toEqual(["claude"]);
    expect(logged[0]?.argv.join(" ")).toContain("--model sonnet");
  });

  it("ends the executor's process group when the frontend cancels", async () => {
    await fakes.reset();
    await fakes.script({ codex: { turns: { plan: [{ hang: true, grandchild: true }] } }, claude: {} });
    const controller = new AbortController();
    const cancelled = turn("Implement the canary stage", {
      frontendSession: "ses_frontend_3",
      signal: controller.signal,
    });
    const pending = engine().turn(cancelled.request);
    for (const deadline = Date.now() + 40_000; Date.now() < deadline; ) {
      if ((await turns()).some((line) => line.grandchild_pid)) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    controller.abort();
    const result = await pending;
    expect(result.finish).toBe("error");
    const hung = (await turns()).find((line) => line.grandchild_pid);
    // Else the checks below would pass on no process at all.
    expect(
      hung?.grandchild_pid,
      `no hung turn in 40 s; turns: ${JSON.stringify(await turns())}`,
    ).toBeGreaterThan(0);
    for (const pid of [hung?.pid, hung?.grandchild_pid] as number[]) expect(running(pid)).toBe(false);
  });
});
