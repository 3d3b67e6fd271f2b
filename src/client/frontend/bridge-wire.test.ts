// The wire helpers' pure parts: undoing `opencode run`'s quoting so the router sees the question as typed.
import { describe, expect, it } from "vitest";
import { routeRequest } from "../auto/scoring.js";
import { asTyped } from "./bridge-wire.js";

describe("asTyped", () => {
  it("undoes opencode run's quoting of a question given as one argument", () => {
    expect(asTyped('"What is the wombat pipeline?"')).toBe("What is the wombat pipeline?");
    expect(asTyped('"say \\"hi\\" to them"')).toBe('say "hi" to them');
  });

  it("leaves any other text alone: typed prompts, lone quoted words, unbalanced or doubled spacing", () => {
    for (const text of [
      "What is the wombat pipeline?",
      '"quoted"',
      'he said "hi there',
      '"a b"  "c d"',
      '"a b"x',
      "",
    ]) {
      expect(asTyped(text)).toBe(text);
    }
    // A quoted phrase inside a sentence stays as typed (it may be a person's quotes in the TUI).
    expect(asTyped('the "canary stage" is next')).toBe('the "canary stage" is next');
    expect(asTyped('why "is the sky" blue')).toBe('why "is the sky" blue');
  });

  it("is linear on hostile input", () => {
    const text = `"${"\\".repeat(200_000)}`;
    expect(asTyped(text)).toBe(text);
  });

  it('routes `opencode run "a simple question"` to RAG, as the question typed would be', () => {
    const sent = '"What is the wombat pipeline?"';
    expect(routeRequest(sent, { hasKnowledge: true }).route).toBe("plan");
    expect(routeRequest(asTyped(sent), { hasKnowledge: true })).toEqual({
      route: "rag",
      reason: "simple knowledge question",
    });
  });
});
