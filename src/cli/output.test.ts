import { describe, expect, it } from "vitest";
import { createOutput, formatTable } from "./output.js";

// biome-ignore lint/suspicious/noControlCharactersInRegex: looking for control characters is the point
const TERMINAL_ACTIVE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;
const SPOOF = "ok\x1b[1A\x1b[2Kapproved\u202etxt.exe\u2066x\u2069\x9b2J\x7f\r\x00";

describe("output", () => {
  const capture = (json: boolean) => {
    const written: string[] = [];
    const out = createOutput({ json, stdout: (t) => written.push(t), stderr: (t) => written.push(t) });
    return { out, text: () => written.join("") };
  };

  it("neutralises rendered text, lines and notes, and keeps JSON exact", () => {
    const text = capture(false);
    text.out.data({ title: SPOOF }, (v) => `title: ${v.title}\nbody`);
    text.out.line(SPOOF);
    text.out.note(SPOOF);
    expect(text.text()).not.toMatch(TERMINAL_ACTIVE);
    expect(text.text()).toContain("\nbody\n");
    const json = capture(true);
    json.out.data({ title: SPOOF }, () => "");
    expect(JSON.parse(json.text())).toEqual({ title: SPOOF });
  });

  it("keeps each table cell on its own line and aligns on the escaped width", () => {
    const table = formatTable(
      ["NAME", "X"],
      [
        ["evil\nNAME  forged", "1"],
        ["ok", "2"],
      ],
    );
    const cell = "evil\\x0aNAME  forged";
    expect(table.split("\n")).toEqual([
      `${"NAME".padEnd(cell.length)}  X`,
      `${cell}  1`,
      `${"ok".padEnd(cell.length)}  2`,
    ]);
  });
});
