import { describe, expect, it } from "vitest";
import { federate, type SourceOutcome } from "./federation.js";

const outcome = (alias: string, paths: string[], status: SourceOutcome["status"] = "ok"): SourceOutcome => ({
  provenance: { source_id: `srv_${alias}`, alias, purpose: alias, redundancy_group: null },
  status,
  latency_ms: 1,
  ...(status === "ok"
    ? {
        result: {
          content: [{ type: "text", text: "…" }],
          structuredContent: { status: "SUCCESS", data: { results: paths.map((path) => ({ path })) } },
        },
      }
    : { error: "boom" }),
});

describe("federation", () => {
  it("interleaves by rank in alias order, whatever order sources answered in", () => {
    const a = federate("context_search", [outcome("zeta", ["z1", "z2"]), outcome("alpha", ["a1", "same"])]);
    const b = federate("context_search", [outcome("alpha", ["a1", "same"]), outcome("zeta", ["z1", "z2"])]);
    expect((a.content[0] as { text: string }).text).toBe((b.content[0] as { text: string }).text);
    const items = JSON.parse((a.content[0] as { text: string }).text).federation.items as {
      path: string;
      _source: { alias: string };
    }[];
    expect(items.map((item) => `${item._source.alias}:${item.path}`)).toEqual([
      "alpha:a1",
      "zeta:z1",
      "alpha:same",
      "zeta:z2",
    ]);
  });

  it("marks partial results and errors when nothing answered", () => {
    const partial = JSON.parse(
      (federate("t", [outcome("a", ["x"]), outcome("b", [], "timeout")]).content[0] as { text: string }).text,
    );
    expect(partial.federation.partial).toBe(true);
    expect(partial.federation.sources.map((s: { status: string }) => s.status)).toEqual(["ok", "timeout"]);
    expect(federate("t", [outcome("a", [], "error")]).isError).toBe(true);
  });
});
