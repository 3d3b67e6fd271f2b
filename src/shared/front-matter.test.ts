import { describe, expect, it } from "vitest";
import { cpuMs } from "../../test/cpu-time.js";
import { firstHeading } from "./first-heading.js";
import { MAX_FRONT_MATTER_BYTES, parseFrontMatterYaml, splitFrontMatter } from "./front-matter.js";

const MiB = 1024 * 1024;

describe("front matter", () => {
  it("splits fenced front matter from the body, and leaves texts without it alone", () => {
    expect(splitFrontMatter("---\ntitle: A\n---\nbody\n")).toEqual({ source: "title: A\n", body: "body\n" });
    expect(splitFrontMatter("---\r\ntitle: A\r\n---\r\nbody")).toEqual({
      source: "title: A\r\n",
      body: "body",
    });
    expect(splitFrontMatter("---\n---\nbody")).toEqual({ source: "", body: "body" });
    expect(splitFrontMatter("---\ntitle: A\n---")).toEqual({ source: "title: A\n", body: "" });
    expect(splitFrontMatter("---\ntitle: A\n----\nno closing fence")).toBeUndefined();
    expect(splitFrontMatter("# Just markdown\n---\n")).toBeUndefined();
  });

  it("parses YAML: block and flow lists, nested mappings, quoted and multi-line values", () => {
    const yaml = [
      "title: 'Deploy: billing'",
      "tags:",
      "  - ops",
      "  - billing",
      "aliases: [a, b]",
      "relations:",
      "  depends_on:",
      "    - infra/db",
      "version: 1.10",
      "summary: >",
      "  folded",
      "  text",
      "",
    ].join("\n");
    expect(parseFrontMatterYaml(yaml)).toEqual({
      title: "Deploy: billing",
      tags: ["ops", "billing"],
      aliases: ["a", "b"],
      relations: { depends_on: ["infra/db"] },
      // Failsafe schema: scalars stay the text that was written.
      version: "1.10",
      summary: "folded text\n",
    });
    expect(parseFrontMatterYaml("")).toEqual({});
    expect(parseFrontMatterYaml("# only a comment\n")).toEqual({});
  });

  it("refuses invalid YAML, non-mappings, duplicate keys, and input past its limits, saying why", () => {
    const refusals: [string, RegExp][] = [
      ["title: [unclosed\n", /invalid front matter: .*(flow|\])/i],
      ["- a\n- b\n", /must be a mapping/],
      ["title: a\ntitle: b\n", /'title' appears twice/],
      [`x: ${"[".repeat(40)}${"]".repeat(40)}\n`, /nests deeper than 16 levels/],
      [`x: ${"- ".repeat(40)}a\n`, /nests deeper than 16 levels/],
      [
        Array.from({ length: 40 }, (_, depth) => `${" ".repeat(depth)}k${depth}:`).join("\n"),
        /nests deeper than 16 levels/,
      ],
      [`title: ${"a".repeat(MAX_FRONT_MATTER_BYTES)}\n`, /larger than 8192 bytes/],
      [
        "a: &a [x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\nc: [*b, *b, *b, *b, *b, *b, *b, *b]\n",
        /alias/i,
      ],
      [`a: ${"&x ".repeat(40)}v\n`, /more than 32 anchors/],
    ];
    for (const [yaml, message] of refusals) {
      expect(() => parseFrontMatterYaml(yaml), yaml.slice(0, 60)).toThrow(message);
    }
    // Nesting that stays within the bound is fine.
    expect(parseFrontMatterYaml("a:\n  b:\n    c: [[d]]\n")).toEqual({ a: { b: { c: [["d"]] } } });
  });

  it("handles 1 MiB of hostile text in under 100 ms per pattern", () => {
    splitFrontMatter("---\na: b\n---\n");
    parseFrontMatterYaml("a: [b]\n");
    firstHeading("# a\n");
    const hostile: Record<string, () => unknown> = {
      "unclosed fence": () => splitFrontMatter(`---\n${"a\n-- \n".repeat(MiB / 6)}`),
      "spaced title": () =>
        splitFrontMatter(`---\ntitle: a${" ".repeat(MiB)}b\n---\n`) &&
        parseFrontMatterYaml(`title: a${" ".repeat(MiB)}b\n`),
      "deep flow": () => parseFrontMatterYaml(`a: ${"[".repeat(MiB)}`),
      "deep flow within the size limit": () => parseFrontMatterYaml(`a: ${"[".repeat(8_000)}`),
      "deep block within the size limit": () => parseFrontMatterYaml(`${"- ".repeat(4_000)}a`),
      "anchors within the size limit": () => parseFrontMatterYaml(`a: ${"&a ".repeat(2_500)}x`),
      "spaced heading": () => firstHeading(`# a${" ".repeat(MiB)}b`),
      "hashes and blanks": () => firstHeading(`# a${" #".repeat(MiB / 2)}`),
    };
    for (const [name, run] of Object.entries(hostile)) expect(cpuMs(run), name).toBeLessThan(100);
  });
});

describe("first heading", () => {
  it("reads the first level 1–3 heading without its closing hashes", () => {
    expect(firstHeading("intro\n## Deploy billing ##\n# Later")).toBe("Deploy billing");
    expect(firstHeading("# C#\n")).toBe("C#");
    expect(firstHeading("#### too deep\n#not a heading\n#\n# Found")).toBe("Found");
    expect(firstHeading(`${"x".repeat(5000)}\n# beyond the first 4 KiB`)).toBeUndefined();
    expect(firstHeading("no heading")).toBeUndefined();
  });
});
