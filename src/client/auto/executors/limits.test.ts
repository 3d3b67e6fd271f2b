// Hard-limit prose from the CLIs, the bounded line splitter and the defensive JSONL reader.
import { describe, expect, it } from "vitest";
import { classifyLimit, isoFrom, safeLine } from "./limits.js";
import { createLineSplitter } from "./process.js";
import { createJsonLineReader } from "./turn.js";

const now = new Date("2026-11-30T04:00:00.000Z");

describe("classifyLimit", () => {
  it("reads codex's 429 usage_limit_reached body with its reset time", () => {
    const body = JSON.stringify({
      error: {
        type: "usage_limit_reached",
        message: "The usage limit has been reached",
        resets_at: 1796020800,
      },
    });
    expect(classifyLimit(`unexpected status 429 Too Many Requests: ${body}`, now)).toEqual({
      kind: "usage_limit",
      message: "unexpected status 429 Too Many Requests: The usage limit has been reached",
      resetsAt: "2026-11-30T06:40:00.000Z",
    });
    expect(
      classifyLimit('{"error":{"type":"usage_limit_reached","resets_in_seconds":90}}', now)?.resetsAt,
    ).toBe("2026-11-30T04:01:30.000Z");
  });

  it("reads the friendly usage-limit lines of both CLIs", () => {
    const codex = classifyLimit(
      "You've hit your usage limit. Visit https://chatgpt.com/codex/settings/usage to purchase more credits or try again at Apr 28th, 2026 10:03 PM.",
      now,
    );
    expect(codex?.kind).toBe("usage_limit");
    expect(codex?.resetsAt).toBe(new Date("Apr 28, 2026 10:03 PM").toISOString());
    expect(classifyLimit("You've hit your weekly limit · resets Dec 2, 5pm (UTC)", now)?.kind).toBe(
      "usage_limit",
    );
    expect(classifyLimit("You've hit your limit · resets 3pm (America/New_York)", now)?.kind).toBe(
      "usage_limit",
    );
  });

  it("tells context window, rate limit, overload and lost login apart, and leaves other failures alone", () => {
    expect(classifyLimit("Codex ran out of room in the model's context window.", now)?.kind).toBe(
      "context_window",
    );
    expect(classifyLimit('{"code":"context_length_exceeded"}', now)?.kind).toBe("context_window");
    expect(classifyLimit("Prompt is too long", now)?.kind).toBe("context_window");
    const rate = classifyLimit("Rate limit reached for requests. Please try again in 20s.", now);
    expect(rate).toMatchObject({ kind: "rate_limit", resetsAt: "2026-11-30T04:00:20.000Z" });
    expect(classifyLimit("API Error: 529 Overloaded", now)?.kind).toBe("overloaded");
    expect(classifyLimit("unexpected status 401 Unauthorized", now)?.kind).toBe("unauthorized");
    expect(classifyLimit("sandbox denied: cannot write file", now)).toBeNull();
  });

  it("keeps the message to one bounded line without secrets", () => {
    const limit = classifyLimit(`usage limit\nBearer ${"a".repeat(40)} ${"x".repeat(1000)}`, now);
    expect(limit?.message).not.toContain("\n");
    expect(limit?.message).not.toContain("a".repeat(40));
    expect(limit?.message.length).toBeLessThanOrEqual(300);
  });

  it("reads a vendor's JSON error body for its message before bounding the line", () => {
    const padding = "x".repeat(400);
    const claude = `API Error: 400 ${JSON.stringify({
      type: "error",
      error: { type: "invalid_request_error", message: "prompt is too long: 210000 tokens > 200000 maximum" },
      request_id: `req_${padding}`,
    })}`;
    expect(safeLine(claude)).toBe("API Error: 400 prompt is too long: 210000 tokens > 200000 maximum");
    expect(
      safeLine(`turn failed: {"message":"model \\"gpt-9\\" not found","detail":"${padding}"} (exit 1)`),
    ).toBe('turn failed: model "gpt-9" not found (exit 1)');
    expect(safeLine('{"error":"invalid_grant","error_description":"refresh token revoked"}')).toBe(
      "refresh token revoked",
    );
    // A body the CLI itself already cut short: its message is still read, up to where it stops.
    expect(safeLine('unexpected status 500: {"error":{"message":"upstream connect error or disconn')).toBe(
      "unexpected status 500: upstream connect error or disconn",
    );
    // No JSON, or JSON without words: the text as it was.
    expect(safeLine("exit {code} 3")).toBe("exit {code} 3");
    expect(safeLine('failed: {"a":1}')).toBe('failed: {"a":1}');
    expect(safeLine(`${"y".repeat(400)}`)).toHaveLength(300);
  });

  it("turns epochs in seconds or milliseconds and ISO strings into ISO", () => {
    expect(isoFrom(1796020800)).toBe("2026-11-30T06:40:00.000Z");
    expect(isoFrom(1796020800000)).toBe("2026-11-30T06:40:00.000Z");
    expect(isoFrom("2026-11-30T06:40:00Z")).toBe("2026-11-30T06:40:00.000Z");
    expect(isoFrom("soon")).toBeNull();
    expect(isoFrom(null)).toBeNull();
  });
});

describe("stdout lines", () => {
  it("skips an over-long line and keeps reading after it", () => {
    const lines: string[] = [];
    const splitter = createLineSplitter((line) => lines.push(line), 16, 1024);
    splitter.push(Buffer.from('{"a":1}\n{"long":"'));
    splitter.push(Buffer.from(`${"x".repeat(40)}"}\n{"b":`));
    splitter.push(Buffer.from("2}"));
    splitter.flush();
    expect(lines).toEqual(['{"a":1}', '{"b":2}']);
    expect(splitter.skipped()).toBe(1);
  });

  it("stops reading past the total bound", () => {
    const lines: string[] = [];
    const splitter = createLineSplitter((line) => lines.push(line), 64, 10);
    splitter.push(Buffer.from("12345\n67890\nabc\n"));
    splitter.flush();
    expect(lines).toEqual(["12345", "6789"]);
  });

  it("recovers an event written into the middle of another line, and the line around it", () => {
    const events: Record<string, unknown>[] = [];
    const read = createJsonLineReader(
      (event) => events.push(event),
      new Set(["assistant", "rate_limit_event"]),
    );
    const outer = JSON.stringify({
      type: "assistant",
      message: { content: [{ type: "text", text: "hi {x}" }] },
    });
    const inner = JSON.stringify({ type: "rate_limit_event", rate_limit_info: { status: "allowed" } });
    const cut = outer.indexOf("[") + 1;
    read(`${outer.slice(0, cut)}${inner}${outer.slice(cut)}`);
    read(`${outer.slice(0, 20)}${inner}`);
    read(outer.slice(20));
    read("not json at all");
    read('{"type":"assistant", broken');
    read(inner);
    expect(events).toEqual([
      JSON.parse(inner),
      JSON.parse(outer),
      JSON.parse(inner),
      JSON.parse(outer),
      JSON.parse(inner),
    ]);
  });
});
