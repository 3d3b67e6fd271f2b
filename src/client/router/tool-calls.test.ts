// The tool rules on handcrafted inputs: where a write may go, how several groups' tool lists merge, and what
// a group that gave no answer says.
import { describe, expect, it } from "vitest";
import { groupOf, sourceOf } from "./test-sources.js";
import { groupFailure, mergeToolLists, sourceOutcome, writeRefusal } from "./tool-calls.js";

const alpha = groupOf("alpha", sourceOf("alpha"));
const pair = groupOf("pair", sourceOf("one", { group: "pair" }), sourceOf("two", { group: "pair" }));

describe("writeRefusal", () => {
  it("lets a full capability write to one group, refuses a read-only one and two destinations", () => {
    expect(writeRefusal("memory_propose", [pair], "full")).toBeUndefined();
    expect(writeRefusal("memory_propose", [pair], "read")).toMatch(
      /^READ_ONLY_WORKER: memory_propose changes state/,
    );
    expect(writeRefusal("memory_propose", [alpha, pair], "full")).toBe(
      "WRITE_DESTINATION=AMBIGUOUS: memory_propose could go to alpha, one/two; start the session with --knowledge-source naming one destination",
    );
  });
});

describe("mergeToolLists", () => {
  it("gives a name to the first group listing it, drops output schemas and sorts by name", () => {
    const schema = { type: "object" as const };
    const merged = mergeToolLists([
      [{ name: "search", description: "first", inputSchema: schema, outputSchema: schema }],
      [
        { name: "search", description: "second", inputSchema: schema },
        { name: "a_tool", inputSchema: schema },
      ],
    ]);
    expect(merged).toEqual([
      { name: "a_tool", inputSchema: schema },
      { name: "search", description: "first", inputSchema: schema },
    ]);
  });
});

describe("a group that gave no answer", () => {
  it("says the member's own error for a single server, the members tried for a redundancy group", () => {
    const failed = sourceOutcome({
      ok: false,
      source: sourceOf("two", { group: "pair" }),
      status: "timeout",
      error: "two did not answer within 300 ms",
      latencyMs: 300,
    });
    expect(failed).toEqual({
      provenance: { source_id: "srv_two", alias: "two", purpose: "pair", redundancy_group: "pair" },
      status: "timeout",
      latency_ms: 300,
      error: "two did not answer within 300 ms",
    });
    expect(groupFailure(alpha, failed)).toBe("two did not answer within 300 ms");
    expect(groupFailure(pair, failed)).toBe(
      "no member of redundancy group pair (one, two) answered: two did not answer within 300 ms",
    );
  });
});
