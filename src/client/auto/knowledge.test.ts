import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import type { ServerProfile } from "../../config/client-config.js";
import { federate, type SourceOutcome } from "../router/federation.js";
import type { Source } from "../router/selection.js";
import { describeSelection, foldBrief, readAnswer, sourceReason, truncateBytes } from "./knowledge.js";

/** What one ivoai server answers to memory_query: its text lists each snippet once, its data the pages. */
function serverAnswer(alias: string, snippets: readonly string[]): CallToolResult {
  const results = snippets.map((snippet, index) => ({ path: `${alias}/p${index}.md`, snippet }));
  return {
    content: [
      { type: "text", text: results.map((r, i) => `${i + 1}. ${r.path}\n   ${r.snippet}`).join("\n") },
    ],
    structuredContent: { status: "SUCCESS", data: { query: "q", count: results.length, results } },
  };
}

const outcome = (alias: string, result?: CallToolResult): SourceOutcome => ({
  provenance: { source_id: `srv_${alias}`, alias, purpose: alias, redundancy_group: null },
  ...(result
    ? { status: "ok" as const, latency_ms: 3, result }
    : { status: "error" as const, latency_ms: 3, error: `${alias}: fetch failed (connect ECONNREFUSED)` }),
});

const snippets = Array.from({ length: 5 }, (_, index) => `unique-snippet-${index} about the wombat pipeline`);
const occurrences = (text: string, needle: string) => text.split(needle).length - 1;

describe("the brief from the router's answers", () => {
  it("keeps a partial federated answer as text, each snippet once, and names the source that failed", () => {
    const result = federate("memory_query", [
      outcome("acme"),
      outcome("mindsite", serverAnswer("mindsite", snippets)),
    ]);
    const answer = readAnswer(result, "memory_query", [{ alias: "acme" }, { alias: "mindsite" }]);
    expect(answer.status).toBe("partial");
    expect(() => JSON.parse(answer.text)).toThrow();
    expect(answer.text).not.toContain('"federation"');
    for (const snippet of snippets) expect(occurrences(answer.text, snippet)).toBe(1);
    expect(answer.failed).toEqual([
      { alias: "acme", reason: "memory_query: fetch failed (connect ECONNREFUSED)" },
    ]);
  });

  it("says ok when every source answered, empty when none found anything, failed when none answered", () => {
    const both = federate("memory_query", [
      outcome("acme", serverAnswer("acme", snippets.slice(0, 1))),
      outcome("mindsite", serverAnswer("mindsite", snippets.slice(1, 2))),
    ]);
    expect(readAnswer(both, "memory_query", [])).toMatchObject({ status: "ok", failed: [] });
    const nothing = federate("memory_query", [
      outcome("acme", serverAnswer("acme", [])),
      outcome("mindsite", serverAnswer("mindsite", [])),
    ]);
    expect(readAnswer(nothing, "memory_query", [])).toMatchObject({ status: "empty", text: "" });
    const down = federate("memory_query", [outcome("acme"), outcome("mindsite")]);
    const failed = readAnswer(down, "memory_query", []);
    expect(failed.status).toBe("failed");
    expect(failed.failed.map((entry) => entry.alias)).toEqual(["acme", "mindsite"]);
  });

  it("attributes a single source's failure to it, or an unattributed error to every selected source", () => {
    const named: CallToolResult = {
      content: [{ type: "text", text: "acme: fetch failed" }],
      isError: true,
      _meta: {
        "ivoai/federation": { partial: true, sources: [{ alias: "acme", status: "error", error: "x" }] },
      },
    };
    expect(readAnswer(named, "context_search", [{ alias: "acme" }]).failed).toEqual([
      { alias: "acme", reason: "context_search: x" },
    ]);
    const plain: CallToolResult = { content: [{ type: "text", text: "bad query" }], isError: true };
    expect(readAnswer(plain, "context_search", [{ alias: "a" }, { alias: "b" }]).failed).toHaveLength(2);
  });

  it("folds Memory and Context within the bound, neither crowding the other out", () => {
    const memory = `## Memory\n${"m".repeat(20_000)}`;
    const context = `## Context\n${"c€".repeat(5_000)}`;
    for (const max of [12 * 1024, 1_000, 100]) {
      const text = foldBrief([memory, context], max);
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(max);
      expect(text).toContain("## Memory");
      expect(text).toContain("## Context");
    }
    expect(foldBrief(["short", ""], 100)).toBe("short");
    const cut = truncateBytes("é".repeat(100), 51);
    expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(51);
    expect(cut).toMatch(/^é+\n\[… truncated by ivoai\]$/);
  });

  it("keeps reasons to one bounded line without credentials", () => {
    const reason = sourceReason(
      `acme: fetch https://user:hunter2@acme.example/v1 failed\nAuthorization: Bearer abcdefghijklmnopqrstuv ${"x".repeat(500)}`,
    );
    expect(reason).not.toContain("hunter2");
    expect(reason).not.toContain("abcdefghijklmnop");
    expect(reason).not.toContain("\n");
    expect(reason.length).toBeLessThanOrEqual(200);
  });
});

describe("the session's sources", () => {
  const profile = (alias: string, enabled = true): ServerProfile =>
    ({ id: `srv_${alias}`, alias, purpose: alias, enabled }) as ServerProfile;
  const source = (p: ServerProfile): Source => ({ profile: p, token: "t" });
  const profiles = [profile("acme"), profile("mindsite"), profile("old", false), profile("nokey")];

  it("lists configured, selected and excluded servers with why", () => {
    const all = profiles.slice(0, 2).map(source);
    expect(describeSelection(profiles, all, [])).toEqual({
      configured: ["acme", "mindsite", "nokey"],
      selected: ["acme", "mindsite"],
      excluded: [
        { alias: "old", reason: "disabled" },
        { alias: "nokey", reason: "no stored credential; connect it again" },
      ],
    });
    const named = describeSelection(profiles, [source(profiles[1] as ServerProfile)], ["mindsite"]);
    expect(named.excluded).toContainEqual({ alias: "acme", reason: "not named by --knowledge-source" });
  });
});
