import { describe, expect, it } from "vitest";
import { lineDiff } from "./diff.js";
import { parseFrontMatter, wikiLinks } from "./front-matter.js";
import { normalizePagePath } from "./page-path.js";
import { preparePageWrite } from "./page-write.js";
import { feedbackFactor } from "./query.js";

describe("memory pages", () => {
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
