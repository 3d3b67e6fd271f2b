import { describe, expect, it } from "vitest";
import { cpuMs } from "../../../test/cpu-time.js";
import { lineDiff } from "./diff.js";
import { parseFrontMatter, wikiLinks } from "./front-matter.js";
import { normalizePagePath } from "./page-path.js";
import { preparePageWrite } from "./page-write.js";
import { feedbackFactor } from "./query.js";

describe("memory pages", () => {
  it("refuses NUL characters anywhere in a page (PostgreSQL text cannot hold them), not a backslash-u text", () => {
    const base = { scope: "git:acme/api", path: "notes/a", body: "# A\n\nbody", author: "cli_x" };
    for (const bad of [
      { body: "# A\n\nbe\u0000fore" },
      { title: "t\u0000" },
      { tags: ["ok", "b\u0000d"] },
      { relations: { see: ["notes/\u0000b"] } },
    ])
      expect(() => preparePageWrite({ ...base, ...bad })).toThrow(/NUL/);
    expect(preparePageWrite({ ...base, body: "# A\n\nthe text \\u0000 is fine" }).body).toContain("\\u0000");
  });

  it("reads speaker, entities, session and date from front matter, ignoring them (not the page) when misshapen", () => {
    const { meta } = parseFrontMatter(
      "---\nspeaker: Ross Geller\nentities: Carol, Susan\nthread: s01 c06\nvalid_from: 2026-05-03\n---\nBreathe.\n",
    );
    expect(meta).toMatchObject({
      speaker: "Ross Geller",
      entities: ["Carol", "Susan"],
      session: "s01 c06",
      date: "2026-05-03",
    });
    const odd = parseFrontMatter("---\ntitle: T\nspeaker: [a, b]\nsession:\n  x: 1\n---\nbody\n").meta;
    expect(odd.title).toBe("T");
    expect(odd.speaker).toBeUndefined();
    expect(odd.session).toBeUndefined();
    const terms = preparePageWrite({
      scope: "_global",
      path: "scenes/c06/u1",
      body: "---\nspeaker: Ross Geller\nsession: s01 c06\ndate: 2026-05-03\n---\nBreathe.\n",
      author: "cli_x",
    }).terms.split(" ");
    expect(terms.slice(0, 4)).toEqual(["session:s01_c06", "date:2026", "date:2026-05", "date:2026-05-03"]);
    expect(terms).toEqual(expect.arrayContaining(["ross", "geller", "breath"]));
  });

  it("normalises paths and refuses traversal", () => {
    expect(normalizePagePath("/runbooks//deploy/")).toBe("runbooks/deploy");
    expect(normalizePagePath("guias\\férias")).toBe("guias/férias");
    for (const bad of ["../etc/passwd", "a/./b", "a/../b", "", "   ", "a/.hidden", "x".repeat(600)]) {
      expect(() => normalizePagePath(bad), bad).toThrow();
    }
  });

  it("reads front matter and links into metadata and typed graph edges", () => {
    const text =
      "---\ntitle: Deploy\ntags: [ops, billing]\nexpires_at: 2030-01-01\nrelations:\n  depends_on: [infra/db, infra/queue]\n---\n# Ignored heading\nSee [[runbooks/rollback|rollback]] and [[faq]].";
    const { meta, body } = parseFrontMatter(text);
    expect(meta).toEqual({
      title: "Deploy",
      tags: ["ops", "billing"],
      expires_at: "2030-01-01",
      relations: { depends_on: ["infra/db", "infra/queue"] },
    });
    expect(wikiLinks(body)).toEqual(["runbooks/rollback", "faq"]);
    const write = preparePageWrite({
      scope: "_global",
      path: "runbooks/deploy",
      body: text,
      author: "cli_1",
    });
    expect(write.title).toBe("Deploy");
    expect(write.expires_at).toBe("2030-01-01T00:00:00.000Z");
    expect(write.edges).toEqual(
      expect.arrayContaining([
        ["links_to", "runbooks/rollback"],
        ["links_to", "faq"],
        ["depends_on", "infra/db"],
        ["tagged", "tag/ops"],
      ]),
    );
    expect(() => preparePageWrite({ scope: "../x", path: "a", body: "b", author: "c" })).toThrow(
      /invalid scope/,
    );
  });

  it("reads front matter as YAML: block lists, flow lists, comma lists and block relations", () => {
    const write = preparePageWrite({
      scope: "_global",
      path: "runbooks/deploy",
      body: [
        "---",
        "title: 'Deploy: billing'",
        "tags:",
        "  - ops",
        "  - billing",
        "relations:",
        "  depends_on:",
        "    - infra/db",
        "  see_also: [faq, runbooks/rollback]",
        "expires_at: 2030-01-01T12:00:00Z",
        "---",
        "Body.",
      ].join("\n"),
      author: "cli_1",
    });
    expect(write).toMatchObject({
      title: "Deploy: billing",
      tags: ["ops", "billing"],
      relations: { depends_on: ["infra/db"], see_also: ["faq", "runbooks/rollback"] },
      expires_at: "2030-01-01T12:00:00.000Z",
    });
    expect(write.edges).toEqual(
      expect.arrayContaining([
        ["depends_on", "infra/db"],
        ["see_also", "runbooks/rollback"],
        ["tagged", "tag/ops"],
        ["tagged", "tag/billing"],
      ]),
    );
    expect(parseFrontMatter("---\ntags: ops, billing\n---\n").meta.tags).toEqual(["ops", "billing"]);
    expect(parseFrontMatter("---\r\ntags: [a]\r\n---\r\nbody").meta.tags).toEqual(["a"]);
    // Empty values mean absent; unknown keys are ignored.
    expect(parseFrontMatter("---\ntitle:\ntags:\nowner: me\n---\nx").meta).toEqual({
      tags: [],
      relations: {},
    });
  });

  it("refuses front matter that is invalid, too deep, too big or the wrong shape, saying so", () => {
    const write = (front: string) =>
      preparePageWrite({ scope: "_global", path: "p", body: `---\n${front}\n---\nbody`, author: "c" });
    const refusals: [string, RegExp][] = [
      ["title: [unclosed", /invalid front matter: Flow sequence.*\(front matter line 2, column 1\)/],
      ["tags: {a: b}", /invalid front matter: tags has the wrong shape/],
      ["relations: [a, b]", /invalid front matter: relations has the wrong shape/],
      ["relations:\n  depends_on: [../etc]", /invalid page path segment/],
      [`tags: ${"[".repeat(20)}${"]".repeat(20)}`, /nests deeper than 16 levels/],
      [`title: ${"x".repeat(9000)}`, /larger than 8192 bytes/],
      ["- just\n- a list", /must be a mapping/],
    ];
    for (const [front, message] of refusals) {
      expect(() => write(front), front.slice(0, 40)).toThrow(message);
      try {
        write(front);
      } catch (error) {
        expect(error).toMatchObject({ name: "IvoaiError", code: "USAGE" });
      }
    }
  });

  it("finds [[links]] exactly as the former pattern did", () => {
    const former = (body: string) => {
      const out = new Set<string>();
      for (const match of body.matchAll(/\[\[([^\]|]{1,512})(?:\|[^\]]*)?\]\]/g))
        out.add((match[1] ?? "").trim());
      return [...out].filter((target) => target.length > 0);
    };
    // Deterministic pseudo-random bodies over the characters that matter.
    let seed = 42;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed;
    };
    const alphabet = ["[", "[", "]", "]", "|", "a", "b", " ", "\n", "[[", "]]"];
    for (let round = 0; round < 3000; round++) {
      const body = Array.from({ length: next() % 40 }, () => alphabet[next() % alphabet.length]).join("");
      expect(wikiLinks(body), JSON.stringify(body)).toEqual(former(body));
    }
    const long = `[[${"x".repeat(512)}]] [[${"y".repeat(513)}]] [[[${"z".repeat(512)}]]`;
    expect(wikiLinks(long)).toEqual(former(long));
  });

  it("handles 1 MiB of hostile page text in under 100 ms per pattern", () => {
    const MiB = 1024 * 1024;
    const hostile: Record<string, () => unknown> = {
      "unclosed links with labels": () => wikiLinks("[[a|".repeat(MiB / 4)),
      "unclosed links": () => wikiLinks("[[a".repeat(MiB / 3)),
      "brackets then a pipe": () => wikiLinks(`${"[".repeat(MiB)}|]]`),
      "long targets": () => wikiLinks(`[[${"x".repeat(MiB)}]]`),
      "front matter without a closing fence": () =>
        parseFrontMatter(`---\n${"tags: [a]\n".repeat(MiB / 10)}`),
      "huge front matter": () => parseFrontMatter(`---\ntitle: a${" ".repeat(MiB)}b\n---\nbody`),
    };
    wikiLinks("[[warm|up]]");
    for (const [name, run] of Object.entries(hostile)) expect(cpuMs(run), name).toBeLessThan(100);
  });

  it("shows changes as a line diff", () => {
    expect(lineDiff("a\nb\nc", "a\nB\nc\nd")).toBe("  a\n- b\n+ B\n  c\n+ d");
    expect(lineDiff("", "new")).toBe("+ new");
  });

  it("lets feedback nudge ranking and halve flagged pages, never below zero", () => {
    const none = { helpful: 0, not_helpful: 0, stale: 0, wrong: 0 };
    expect(feedbackFactor({ ...none, helpful: 3 })).toBeGreaterThan(feedbackFactor(none));
    expect(feedbackFactor({ ...none, not_helpful: 2 })).toBeLessThan(1);
    expect(feedbackFactor({ ...none, stale: 1 })).toBe(0.5);
    expect(feedbackFactor({ ...none, not_helpful: 100 })).toBeGreaterThan(0);
  });
});
