import { describe, expect, it } from "vitest";
import { parseLoginStatus } from "./catalog.js";

// What Claude Code 2.1.332 prints for `claude auth status` (pretty JSON on stdout; exit 0 in, 1 out).
const CLAUDE_IN = `${JSON.stringify(
  {
    loggedIn: true,
    authMethod: "claude.ai",
    apiProvider: "firstParty",
    email: "dev@example.com",
    subscriptionType: "max",
  },
  null,
  2,
)}\n`;
const CLAUDE_OUT = `${JSON.stringify({ loggedIn: false, authMethod: "none", apiProvider: "firstParty" }, null, 2)}\n`;

describe("parseLoginStatus", () => {
  it("reads Claude Code's JSON answer, never showing it raw or its e-mail address", () => {
    expect(parseLoginStatus("claude", 0, CLAUDE_IN, "")).toEqual({
      state: "logged_in",
      detail: "via claude.ai, max plan",
    });
    expect(parseLoginStatus("claude", 1, CLAUDE_OUT, "")).toEqual({ state: "logged_out", detail: "" });
    // The JSON decides, not the exit status.
    expect(parseLoginStatus("claude", 0, CLAUDE_OUT, "").state).toBe("logged_out");
  });

  it("reads codex's sentence, keeping the method and dropping a masked key", () => {
    expect(parseLoginStatus("codex", 0, "", "Logged in using ChatGPT\n")).toEqual({
      state: "logged_in",
      detail: "ChatGPT",
    });
    expect(parseLoginStatus("codex", 0, "", "Logged in using an API key - sk-proj-***ABCDE\n")).toEqual({
      state: "logged_in",
      detail: "API key",
    });
    expect(parseLoginStatus("codex", 1, "", "Not logged in\n")).toEqual({ state: "logged_out", detail: "" });
  });

  it("falls back to the exit status for an answer it cannot read, without raw JSON in the detail", () => {
    expect(parseLoginStatus("claude", 1, '{"loggedIn": "maybe"}\n', "")).toEqual({
      state: "logged_out",
      detail: "",
    });
    expect(parseLoginStatus("claude", 2, "{\n", "")).toEqual({ state: "unknown", detail: "" });
    expect(parseLoginStatus("claude", 0, "Logged in as dev@example.com\n", "")).toEqual({
      state: "logged_in",
      detail: "Logged in as <email>",
    });
  });
  it("bounds and neutralises what a status command printed before it is shown", () => {
    const hostile = `Logged in using Chat\u001b[2J\u202eGPT${"a".repeat(100_000)}`;
    const codex = parseLoginStatus("codex", 0, "", hostile);
    expect(codex.state).toBe("logged_in");
    expect(codex.detail).toMatch(/^Chat\\x1b\[2J\\u202eGPTa+$/);
    expect(codex.detail.length).toBeLessThanOrEqual(120);
    const odd = parseLoginStatus("codex", 0, "", `\u0007${"x".repeat(50_000)}@${"y".repeat(50_000)}`);
    expect(odd.detail).not.toContain("\u0007");
    expect(odd.detail.length).toBeLessThanOrEqual(120);
  });
});
