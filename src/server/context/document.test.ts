import { describe, expect, it } from "vitest";
import { cpuMs } from "../../../test/cpu-time.js";
import { extractTitle } from "./document.js";

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
