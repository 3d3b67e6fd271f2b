// The description of a request is what an approver decides on: every field it changes must be in it, the
// loudest first, and a same-body change must never read as "no changes".
import { describe, expect, it } from "vitest";
import type { ApprovalRecord } from "../../protocol/approvals.js";
import type { PageVersionContent } from "../memory/store.js";
import { describeChanges, when } from "./describe.js";

const NOW = new Date("2026-12-03T14:00:00.000Z");
const BODY = "# Queue\n\nWe use the axolotl queue.\n";

function request(overrides: Partial<ApprovalRecord> = {}): ApprovalRecord {
  return {
    id: "apr_1",
    created_at: NOW.toISOString(),
    expires_at: "2026-12-10T14:00:00.000Z",
    status: "pending",
    tool: "memory_write_page",
    action: "write_page",
    scope: "project:git:acme/api",
    path: "decisions/queue",
    requester: "cli_a",
    session_id: null,
    summary: "",
    diff: "",
    payload: {
      scope: "project:git:acme/api",
      path: "decisions/queue",
      body: BODY,
      author: "cli_a",
    },
    base_version: 3,
    decided_by: null,
    decided_at: null,
    reason: null,
    ...overrides,
  };
}

const BASE: PageVersionContent = {
  version: 3,
  title: "Queue",
  tags: ["infra", "queues"],
  relations: { depends_on: ["decisions/broker"] },
  expires_at: null,
  body: BODY,
  deleted: false,
};

describe("describeChanges", () => {
  it("puts a new expiry on a same-body replace first, as a deletion date, and calls it metadata only", () => {
    const approval = request({
      payload: { ...request().payload, expires_at: "2026-12-03T14:02:00.000Z", tags: ["infra", "queues"] },
    });
    const changes = describeChanges({
      approval,
      base: { ...BASE, relations: {} },
      currentVersion: 3,
      now: NOW,
    });
    expect(changes.effect).toBe("replace");
    expect(changes.metadata_only).toBe(true);
    expect(changes.items[0]).toMatchObject({
      field: "expires_at",
      change: "set",
      severity: "danger",
      before: null,
      after: "2026-12-03T14:02:00.000Z",
      text: "Sets an expiry: this page will be deleted on 2026-12-03 14:02 UTC (in 2 minutes).",
    });
    expect(changes.headline).toBe(
      "Replaces project:git:acme/api:decisions/queue (version 3) — metadata only: expiry (the body is " +
        "unchanged). This page will be deleted on 2026-12-03 14:02 UTC (in 2 minutes).",
    );
    expect(changes.items.map((item) => item.field)).toEqual(["expires_at", "location", "body"]);
    expect(changes.body).toMatchObject({ added: 0, removed: 0, coarse: false });
    expect(changes.body.lines).toHaveLength(BODY.split("\n").length);
  });

  it("lists title, tags and relations added and removed, with a body diff numbered on both sides", () => {
    const approval = request({
      payload: {
        ...request().payload,
        title: "Queue choice",
        tags: ["infra", "billing"],
        relations: { depends_on: ["decisions/kafka"], supersedes: ["decisions/old"] },
        body: BODY.replace("axolotl", "kafka"),
      },
    });
    const changes = describeChanges({ approval, base: BASE, currentVersion: 3, now: NOW });
    expect(changes.metadata_only).toBe(false);
    const byField = Object.fromEntries(changes.items.map((item) => [item.field, item]));
    expect(byField.title).toMatchObject({
      before: "Queue",
      after: "Queue choice",
      text: 'Changes the title from "Queue" to "Queue choice".',
    });
    expect(byField.tags).toMatchObject({
      added: ["billing"],
      removed: ["queues"],
      text: 'Adds tags "billing"; removes tags "queues".',
    });
    expect(byField.relations).toMatchObject({
      added: [
        { type: "depends_on", target: "decisions/kafka" },
        { type: "supersedes", target: "decisions/old" },
      ],
      removed: [{ type: "depends_on", target: "decisions/broker" }],
    });
    expect(byField.expires_at).toBeUndefined();
    expect(changes.body.added).toBe(1);
    expect(changes.body.removed).toBe(1);
    expect(changes.body.lines.filter((line) => line.op !== "=")).toEqual([
      { op: "-", old: 3, new: null, text: "We use the axolotl queue." },
      { op: "+", old: null, new: 3, text: "We use the kafka queue." },
    ]);
    expect(changes.headline).toContain("body +1 −1 lines");
  });

  it("reads an expiry, tags and a title set in the body's front matter as the write would", () => {
    const body = `---\ntitle: Queue\ntags: [infra, queues]\nexpires_at: 2026-12-04T00:00:00Z\n---\n${BODY}`;
    const changes = describeChanges({
      approval: request({ payload: { ...request().payload, body, relations: BASE.relations } }),
      base: BASE,
      currentVersion: 3,
      now: NOW,
    });
    expect(changes.items[0]).toMatchObject({
      field: "expires_at",
      change: "set",
      after: "2026-12-04T00:00:00.000Z",
      severity: "danger",
    });
    expect(changes.items.some((item) => item.field === "tags" || item.field === "title")).toBe(false);
    // The front matter is part of the stored body: its lines show as added.
    expect(changes.metadata_only).toBe(false);
    expect(changes.body.added).toBe(5);
  });

  it("says when a replace clears an expiry, and when it changes nothing at all", () => {
    const expiring = { ...BASE, expires_at: "2026-12-05T00:00:00.000Z" };
    const cleared = describeChanges({
      approval: request({ payload: { ...request().payload, tags: BASE.tags, relations: BASE.relations } }),
      base: expiring,
      currentVersion: 3,
      now: NOW,
    });
    expect(cleared.items[0]).toMatchObject({ field: "expires_at", change: "cleared", severity: "change" });
    const same = describeChanges({
      approval: request({ payload: { ...request().payload, tags: BASE.tags, relations: BASE.relations } }),
      base: BASE,
      currentVersion: 3,
      now: NOW,
    });
    expect(same.metadata_only).toBe(true);
    expect(same.headline).toContain("nothing changes");
  });

  it("describes a deletion as the loudest item, and a page that moved on as a conflict", () => {
    const changes = describeChanges({
      approval: request({ tool: "memory_delete_page", action: "delete_page", payload: {} }),
      base: BASE,
      currentVersion: 4,
      now: NOW,
    });
    expect(changes.effect).toBe("delete");
    expect(changes.items.map((item) => [item.field, item.severity])).toEqual([
      ["delete", "danger"],
      ["conflict", "warning"],
    ]);
    expect(changes.items[0]?.text).toBe(
      'Deletes the page project:git:acme/api:decisions/queue (version 3, "Queue", 4 lines); earlier versions are kept.',
    );
    expect(changes.items[1]?.text).toContain("version 3 → 4");
    expect(changes.body.removed).toBe(4);
  });

  it("describes feedback that flags a page, with the note quoted on one line", () => {
    const changes = describeChanges({
      approval: request({
        tool: "memory_feedback",
        action: "feedback",
        payload: { kind: "stale", note: "moved to\nkafka" },
      }),
      base: BASE,
      currentVersion: 5,
      now: NOW,
    });
    expect(changes.metadata_only).toBe(true);
    const feedback = changes.items.find((item) => item.field === "feedback");
    expect(feedback).toMatchObject({ kind: "stale", flags: true, severity: "warning" });
    expect(feedback?.text).toBe(
      'Marks the page as stale: it is flagged as stale and ranks lower. Note: "moved to\\nkafka".',
    );
    expect(changes.body.lines).toEqual([]);
    // Feedback applies to whatever version the page is at now: no conflict while it exists.
    expect(changes.items.some((item) => item.field === "conflict")).toBe(false);
  });

  it("warns that feedback would land on a page deleted and written again since the request", () => {
    const changes = describeChanges({
      approval: request({ tool: "memory_feedback", action: "feedback", payload: { kind: "wrong" } }),
      base: BASE,
      currentVersion: 1,
      now: NOW,
    });
    expect(changes.items.find((item) => item.field === "conflict")?.text).toBe(
      "The page was deleted and written again since the request (version 3 → 1): the feedback would go to the new page.",
    );
  });

  it("quotes agent text with its controls, bidi overrides and direction marks escaped", () => {
    const title = "Invoice\u202egnp.exe\u200f\nforged line";
    const changes = describeChanges({
      approval: request({ payload: { ...request().payload, title } }),
      base: BASE,
      currentVersion: 3,
      now: NOW,
    });
    const text = changes.items.find((item) => item.field === "title")?.text ?? "";
    expect(text).toBe('Changes the title from "Queue" to "Invoice\\u202egnp.exe\\u200f\\nforged line".');
    expect(text).not.toMatch(/[\n\u200f\u202e]/);
  });

  it("describes a new page: its place, title, tags and every body line", () => {
    const changes = describeChanges({
      approval: request({ base_version: 0, payload: { ...request().payload, tags: ["a"] } }),
      base: null,
      currentVersion: 0,
      now: NOW,
    });
    expect(changes.effect).toBe("create");
    expect(changes.items.map((item) => item.field)).toEqual(["create", "title", "tags", "body"]);
    expect(changes.headline).toBe(
      'Creates project:git:acme/api:decisions/queue titled "Queue" — body 4 lines.',
    );
  });

  it("names dates with how far away they are", () => {
    expect(when("2026-12-03T14:00:30.000Z", NOW)).toBe("2026-12-03 14:00 UTC (in 30 seconds)");
    expect(when("2026-12-06T14:00:00.000Z", NOW)).toBe("2026-12-06 14:00 UTC (in 3 days)");
    expect(when("2026-12-01T00:00:00.000Z", NOW)).toContain("already past");
  });
});
