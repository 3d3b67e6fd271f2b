import { describe, expect, it } from "vitest";
import { cpuMs } from "../../../test/cpu-time.js";
import { extractTitle, normalizeText } from "./document.js";

describe("document titles", () => {
  it("take the YAML front-matter title, else the first heading of the body, else the file name", () => {
    expect(extractTitle('---\ntitle: "Deploy: billing"\n---\n# Heading\n', "a.md")).toBe("Deploy: billing");
    expect(extractTitle("---\ntitle: >\n  Folded\n  title\n---\n", "a.md")).toBe("Folded title");
    expect(extractTitle("---\nowner: ops\n# a YAML comment\n---\n## Heading\n", "a.md")).toBe("Heading");
    expect(extractTitle("intro\n### Third level ###\n", "a.md")).toBe("Third level");
    expect(extractTitle("plain text", "dir/notes.v2.md")).toBe("notes.v2");
  });

  it("ignore front matter that is not valid YAML or exceeds its limits, and still title the document", () => {
    expect(extractTitle("---\ntitle: [unclosed\n---\n# Heading\n", "a.md")).toBe("Heading");
    expect(extractTitle(`---\ntitle: ${"[".repeat(40)}\n---\n# Deep\n`, "a.md")).toBe("Deep");
    expect(extractTitle(`---\ntitle: a${" ".repeat(10_000)}b\n---\n`, "big.md")).toBe("big");
  });

  it("handles 1 MiB of hostile text in under 100 ms", () => {
    const MiB = 1024 * 1024;
    extractTitle("---\ntitle: warm\n---\n", "a.md");
    const hostile: Record<string, string> = {
      "spaced title": `---\ntitle: a${" ".repeat(MiB)}b\n---\n`,
      "spaced title, no fence": `---\ntitle: a${" ".repeat(MiB)}b`,
      "title lines": `---\n${"title: a \n".repeat(MiB / 10)}---\n`,
      "spaced heading": `# a${" ".repeat(MiB)}b`,
      "heading hashes": `# a${" #".repeat(MiB / 2)}b`,
    };
    for (const [name, text] of Object.entries(hostile))
      expect(
        cpuMs(() => extractTitle(text, "x.md")),
        name,
      ).toBeLessThan(100);
  });
});

describe("document text normalisation", () => {
  it("is NFC with LF line ends, whether or not the text has characters from U+0300 on", () => {
    // Every character below U+0300, alone and before each other, is left as it is by NFC.
    const below = Array.from({ length: 0x300 }, (_, code) => String.fromCharCode(code)).join("");
    expect(normalizeText(below)).toBe(below.replace(/\r\n?/g, "\n"));
    const pieces = [
      "e",
      "\u0301",
      "A\u030a",
      "\u212b",
      "\u1100\u1161",
      "\uac00\u11a8",
      "ç",
      "\r\n",
      "\r",
      "“x”",
      "ﬁ",
    ];
    let state = 7;
    for (let round = 0; round < 500; round++) {
      let text = "";
      for (let i = 0; i < 12; i++) {
        state = (Math.imul(state, 1103515245) + 12345) >>> 0;
        text += pieces[state % pieces.length];
      }
      expect(normalizeText(text)).toBe(text.replace(/\r\n?/g, "\n").normalize("NFC"));
    }
    expect(normalizeText("Ame\u0301lie\r\n")).toBe("Amélie\n");
  });
});
