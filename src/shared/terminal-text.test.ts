import { describe, expect, it } from "vitest";
import { createLogger } from "./logger.js";
import { oneLine, terminalJson, terminalText } from "./terminal-text.js";

// biome-ignore lint/suspicious/noControlCharactersInRegex: looking for control characters is the point
const TERMINAL_ACTIVE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;
const SPOOF = "ok\x1b[1A\x1b[2Kapproved\u202etxt.exe\u2066x\u2069\x9b2J\x7f\r\x00";

describe("terminalText", () => {
  it("writes every control character and bidi override as a visible escape", () => {
    expect(terminalText(SPOOF)).toBe(
      "ok\\x1b[1A\\x1b[2Kapproved\\u202etxt.exe\\u2066x\\u2069\\x9b2J\\x7f\\x0d\\x00",
    );
    for (const code of [0x202a, 0x202b, 0x202c, 0x202d, 0x2067, 0x2068]) {
      expect(terminalText(String.fromCharCode(code))).toBe(`\\u${code.toString(16)}`);
    }
  });

  it("keeps newlines and tabs only in multi-line text, and leaves printable text alone", () => {
    expect(terminalText("a\n\tb\x1b", { multiline: true })).toBe("a\n\tb\\x1b");
    expect(oneLine("a\n\tb")).toBe("a\\x0a\\x09b");
    const plain = "Grüße — 東京 👋 \\x1b «ok» \u200f";
    expect(terminalText(plain, { multiline: true })).toBe(plain);
  });

  it("terminalJson escapes what JSON.stringify leaves raw and keeps the value exact", () => {
    const json = terminalJson(JSON.stringify({ title: SPOOF }));
    expect(json).not.toMatch(TERMINAL_ACTIVE);
    expect(JSON.parse(json)).toEqual({ title: SPOOF });
  });
});

describe("logger", () => {
  it("writes log lines a terminal cannot act on, with the exact values", () => {
    const lines: string[] = [];
    createLogger({ write: (line) => lines.push(line) }).info("request", { path: SPOOF });
    expect(lines[0]).not.toMatch(TERMINAL_ACTIVE);
    expect(JSON.parse(lines[0] ?? "").path).toBe(SPOOF);
  });
});
