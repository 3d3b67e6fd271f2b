import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AutoStatus, StatusSnapshot } from "./status.js";
import { tuiPluginSource, tuiPluginTextSource } from "./tui-plugin.js";

// The text functions exactly as the generated plugin has them, loaded as a module.
interface PluginText {
  autoLine(auto: unknown): string | null;
  compactLines(status: unknown): string[];
  panelText(status: unknown): string;
  duration(ms: unknown): string;
}

let dir = "";
let text: PluginText;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "ivoai-tui-text-"));
  const file = path.join(dir, "text.mjs");
  await writeFile(
    file,
    `${tuiPluginTextSource()}\nexport { autoLine, compactLines, panelText, duration };\n`,
  );
  text = (await import(pathToFileURL(file).href)) as PluginText;
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

const running: AutoStatus = {
  session_id: "ses_run",
  phase: "running",
  active: true,
  done: 3,
  total: 12,
  completed: 2,
  running: [
    { id: "t4", executor: "codex", model: "gpt-mini" },
    { id: "t5", executor: "claude", model: null },
  ],
  running_count: 2,
  elapsed_ms: 80_400,
  failovers: 1,
  tokens: { input: 12_345, output: 678, cost_usd: 0.0123 },
  sources: null,
  exit_code: null,
  error: null,
};

const snapshot = (auto: AutoStatus | null): StatusSnapshot => ({
  sources: [
    { alias: "docs", purpose: "context", state: "ok", detail: "reachable" },
    { alias: "wiki", purpose: "memory", state: "unhealthy", detail: "connection refused" },
  ],
  executor: "codex",
  quota: [],
  session_id: auto?.session_id ?? null,
  auto,
  selection: { configured: ["docs", "wiki", "old"], excluded: [{ alias: "old", reason: "disabled" }] },
});

describe("the TUI plugin's text", () => {
  it("is the text the plugin itself carries", () => {
    expect(tuiPluginSource({ statusUrl: "http://127.0.0.1:1/status", statusTokenEnv: "T" })).toContain(
      tuiPluginTextSource(),
    );
  });

  it("formats durations", () => {
    expect(["0", 45_900, 80_400, 3_600_000 + 5 * 60_000, -5].map((ms) => text.duration(ms))).toEqual([
      "0s",
      "45s",
      "1m20s",
      "1h05m",
      "0s",
    ]);
  });

  it("puts a running turn in one sidebar line: n/m, the running ids, elapsed", () => {
    expect(text.autoLine(running)).toBe("AUTO 3/12 · running t4, t5 · 1m20s");
    const many = { ...running, running: ["a", "b", "c", "d"].map((id) => ({ id })), running_count: 9 };
    expect(text.autoLine(many)).toBe("AUTO 3/12 · running a, b, c +6 · 1m20s");
    expect(text.autoLine({ ...running, total: 0, running: [], running_count: 0, phase: "planning" })).toBe(
      "AUTO planning · 1m20s",
    );
    expect(text.compactLines(snapshot(running))).toEqual([
      "ivoai · sources 1/2 connected",
      "AUTO 3/12 · running t4, t5 · 1m20s",
      "✖ unhealthy wiki",
      "executor codex",
    ]);
    expect(text.compactLines(snapshot(null))).not.toContainEqual(expect.stringMatching(/^AUTO/));
  });

  it("keeps the last outcome once the turn ended", () => {
    const ended = {
      ...running,
      active: false,
      phase: "failed",
      done: 12,
      running: [],
      exit_code: 1,
      error: "boom",
    };
    // Twelve ended, but only the two that did their work count: the cancelled ones are not "done".
    expect(text.autoLine(ended)).toBe("AUTO failed 2/12 · 1m20s");
    expect(text.autoLine({ ...ended, phase: "done", completed: 12 })).toBe("AUTO done 12/12 · 1m20s");
    expect(text.panelText(snapshot(ended))).toContain("  Ended: exit 1 — boom");
  });

  it("shows progress, running tasks with profiles, tokens and every kind of source in the panel", () => {
    const withSources: AutoStatus = {
      ...running,
      sources: {
        configured: ["docs", "wiki", "extra"],
        selected: ["docs", "wiki"],
        excluded: [{ alias: "extra", reason: "not named by --knowledge-source" }],
        failed: [{ alias: "wiki", reason: "connection refused" }],
      },
    };
    const panel = text.panelText(snapshot(withSources)).split("\n");
    expect(panel).toEqual([
      "AUTO: running · phase running",
      "  Progress: 3/12 tasks ended, 2 done · elapsed 1m20s · failovers 1",
      "  Running: t4 (codex gpt-mini), t5 (claude)",
      "  Tokens: 12.3k in · 678 out · $0.0123",
      "Sources:",
      "  Selected:",
      "    ● ok docs (context) — reachable",
      "    ✖ unhealthy wiki (memory) — connection refused",
      "  Configured: docs, wiki, extra",
      "  Excluded:",
      "    extra — not named by --knowledge-source",
      "  Failed in the last turn:",
      "    wiki — connection refused",
      "Executor: codex",
      "Quota:",
      "  (unknown)",
      "Session: ses_run",
    ]);
    expect(text.panelText(snapshot(null))).toContain("AUTO: no turn yet");
    // Before a turn recorded its sources, the launcher's view: configured and excluded, no failures yet.
    const before = text.panelText(snapshot(null));
    expect(before).toContain("  Configured: docs, wiki, old\n  Excluded:\n    old — disabled\nExecutor:");
  });

  it("escapes and bounds agent-made text, and survives malformed fields", () => {
    const hostile = {
      ...running,
      phase: "\u001b[2J\u202eevil",
      running: [{ id: `t\u001b]0;x\u0007${"9".repeat(100)}`, executor: "codex\r\n", model: "m\u2066" }],
      error: `bad\u001b[31m${"e".repeat(500)}`,
      active: false,
      exit_code: 1,
      sources: {
        configured: ["a\u0085b"],
        selected: [],
        excluded: [{ alias: "x", reason: `r\u200f${"r".repeat(400)}` }],
        failed: "not a list",
      },
    };
    const panel = text.panelText(snapshot(hostile as unknown as AutoStatus));
    // biome-ignore lint/suspicious/noControlCharactersInRegex: no control character may be drawn
    expect(panel).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200f\u202e\u2066]/);
    for (const line of panel.split("\n")) expect(line.length).toBeLessThanOrEqual(200);
    const line = text.autoLine({ ...hostile, active: true }) ?? "";
    // biome-ignore lint/suspicious/noControlCharactersInRegex: no control character may be drawn
    expect(line).not.toMatch(/[\u0000-\u001f\u202e]/);
    expect(line.length).toBeLessThan(80);
    expect(text.autoLine({ active: true, total: "x", done: null, running: {}, elapsed_ms: Number.NaN })).toBe(
      "AUTO  · 0s",
    );
    expect(text.panelText({ auto: { tokens: null }, sources: null })).toContain("Tokens: 0 in · 0 out");
  });
});
