import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { federate, type SourceOutcome } from "./federation.js";

const outcome = (alias: string, paths: string[], status: SourceOutcome["status"] = "ok"): SourceOutcome => ({
  provenance: { source_id: `srv_${alias}`, alias, purpose: alias, redundancy_group: null },
  status,
  latency_ms: 1,
  ...(status === "ok"
    ? {
        result: {
          content: [{ type: "text", text: paths.map((path) => `${path}: snippet of ${path}`).join("\n") }],
          structuredContent: { status: "SUCCESS", data: { results: paths.map((path) => ({ path })) } },
        },
      }
    : { error: `${alias} did not answer within 15000 ms` }),
});

type Federation = {
  partial: boolean;
  sources: { alias: string; status: string }[];
  items: { path: string; _source: { alias: string } }[];
  results: unknown[];
};
const federationOf = (result: CallToolResult) =>
  (result.structuredContent as { federation: Federation }).federation;
const textOf = (result: CallToolResult) => (result.content[0] as { text: string }).text;

describe("federation", () => {
  it("interleaves by rank in alias order, whatever order sources answered in", () => {
    const a = federate("context_search", [outcome("zeta", ["z1", "z2"]), outcome("alpha", ["a1", "same"])]);
    const b = federate("context_search", [outcome("alpha", ["a1", "same"]), outcome("zeta", ["z1", "z2"])]);
    expect(textOf(a)).toBe(textOf(b));
    expect(federationOf(a).items.map((item) => `${item._source.alias}:${item.path}`)).toEqual([
      "alpha:a1",
      "zeta:z1",
      "alpha:same",
      "zeta:z2",
    ]);
  });

  it("marks partial results and errors when nothing answered", () => {
    const partial = federationOf(federate("t", [outcome("a", ["x"]), outcome("b", [], "timeout")]));
    expect(partial.partial).toBe(true);
    expect(partial.sources.map((s) => s.status)).toEqual(["ok", "timeout"]);
    expect(federate("t", [outcome("a", [], "error")]).isError).toBe(true);
  });

  it("gives a model readable text: each snippet once, under its source, and who did not answer", () => {
    const result = federate("memory_query", [outcome("acme", [], "timeout"), outcome("mind", ["p1", "p2"])]);
    const text = textOf(result);
    expect(() => JSON.parse(text)).toThrow();
    expect(text).toBe(
      "## acme: no answer (timeout: acme did not answer within 15000 ms)\n\n## mind\np1: snippet of p1\np2: snippet of p2",
    );
    // The list is in the merged items only, not again per source.
    expect(federationOf(result).results).toEqual([]);
    expect(JSON.stringify(result).split("snippet of p1").length - 1).toBe(1);
  });
});
