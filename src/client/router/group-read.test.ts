// How one logical source is read: priority order, open circuits skipped (but never the last member), failover
// on a broken member, a timeout ending the read, a healthy member's own error being the group's answer.
import { describe, expect, it } from "vitest";
import { readInGroup } from "./group-read.js";
import type { Source } from "./selection.js";
import { groupOf, sourceOf } from "./test-sources.js";
import { UpstreamAnswer, UpstreamError } from "./upstream.js";

const primary = sourceOf("primary", { group: "pair", priority: 10 });
const standby = sourceOf("standby", { group: "pair", priority: 20 });
const pair = groupOf("pair", primary, standby);

/** A reader whose open circuits are `open`, and a `use` that answers per alias and records who was asked. */
function scenario(open: Source[], answers: Record<string, () => string>) {
  const asked: string[] = [];
  const reader = { pool: { isOpen: (source: Source) => open.includes(source) }, deadlineMs: 60_000 };
  const use = async (source: Source) => {
    asked.push(source.profile.alias);
    return (answers[source.profile.alias] as () => string)();
  };
  return { asked, reader, use };
}

const fails = (kind: UpstreamError["kind"]) => () => {
  throw new UpstreamError(kind, `${kind}!`);
};

describe("readInGroup", () => {
  it("answers from the primary when it is healthy", async () => {
    const { asked, reader, use } = scenario([], { primary: () => "p", standby: () => "s" });
    expect(await readInGroup(reader, pair, use)).toMatchObject({ ok: true, value: "p", failedOverFrom: [] });
    expect(asked).toEqual(["primary"]);
  });

  it("fails over on a broken primary, and skips one whose circuit is open, naming it", async () => {
    const broken = scenario([], { primary: fails("error"), standby: () => "s" });
    expect(await readInGroup(broken.reader, pair, broken.use)).toMatchObject({
      ok: true,
      value: "s",
      source: standby,
      failedOverFrom: ["primary"],
    });
    const skipped = scenario([primary], { primary: () => "p", standby: () => "s" });
    expect(await readInGroup(skipped.reader, pair, skipped.use)).toMatchObject({
      value: "s",
      failedOverFrom: ["primary"],
    });
    expect(skipped.asked).toEqual(["standby"]);
  });

  it("still tries the last member when every circuit is open", async () => {
    const { asked, reader, use } = scenario([primary, standby], { primary: () => "p", standby: () => "s" });
    expect(await readInGroup(reader, pair, use)).toMatchObject({ ok: true, value: "s" });
    expect(asked).toEqual(["standby"]);
  });

  it("ends on a timeout: the budget is spent, the standby is not asked", async () => {
    const { asked, reader, use } = scenario([], { primary: fails("timeout"), standby: () => "s" });
    expect(await readInGroup(reader, pair, use)).toMatchObject({
      ok: false,
      status: "timeout",
      error: "timeout!",
    });
    expect(asked).toEqual(["primary"]);
  });

  it("takes a healthy member's answered error as the group's answer, without failing over", async () => {
    const { asked, reader, use } = scenario([], {
      primary: () => {
        throw new UpstreamAnswer(-32002, "not found");
      },
      standby: () => "s",
    });
    const outcome = await readInGroup(reader, pair, use);
    expect(outcome).toMatchObject({ ok: false, status: "answered", source: primary });
    expect(!outcome.ok && outcome.answer?.code).toBe(-32002);
    expect(asked).toEqual(["primary"]);
  });

  it("reports the last failure when every member failed", async () => {
    const { reader, use } = scenario([], { primary: fails("error"), standby: fails("malformed") });
    expect(await readInGroup(reader, pair, use)).toMatchObject({
      ok: false,
      status: "malformed",
      source: standby,
    });
  });
});
