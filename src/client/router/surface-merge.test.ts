// The federated surface's merge rules on handcrafted outcomes: who wins a name, how entries name their
// source, how resources/list pages across groups and what a failure says.
import type { CompleteResult, ListResourcesResult } from "@modelcontextprotocol/sdk/types.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import type { MemberOutcome } from "./group-read.js";
import {
  byPriority,
  decodeCursor,
  encodeCursor,
  mergeCompletions,
  passesLevel,
  RESOURCE_NOT_FOUND,
  relayedLog,
  resourcePage,
  startOfResources,
  union,
  unreadResource,
} from "./surface-merge.js";
import { groupOf, sourceOf } from "./test-sources.js";
import { UpstreamAnswer } from "./upstream.js";

const alpha = sourceOf("alpha");
const beta = sourceOf("beta");
const standby = sourceOf("standby", { group: "pair" });

function ok<T>(value: T, source = alpha, failedOverFrom: string[] = []): MemberOutcome<T> {
  return { ok: true, value, source, failedOverFrom, latencyMs: 1 };
}
function down(source = beta): MemberOutcome<never> {
  return { ok: false, source, status: "error", error: `${source.profile.alias}: fetch failed`, latencyMs: 1 };
}
function refused(code: number, message: string, source = alpha): MemberOutcome<never> {
  return {
    ok: false,
    answer: new UpstreamAnswer(code, message),
    source,
    status: "answered",
    error: message,
    latencyMs: 1,
  };
}

describe("union (prompts, resource templates)", () => {
  it("gives a name to the first source in priority order; the other's entry is dropped, not renamed", () => {
    type Prompts = { prompts: { name: string; description?: string; _meta?: Record<string, unknown> }[] };
    const prompts = union(
      [
        ok<Prompts>({ prompts: [{ name: "find", description: "alpha's" }] }),
        ok<Prompts>({ prompts: [{ name: "find", description: "beta's" }, { name: "only_beta" }] }, beta),
      ],
      (value) => value.prompts,
      (prompt) => prompt.name,
    );
    expect(
      prompts.map((prompt) => [prompt.name, prompt.description, prompt._meta?.["ivoai/source"]]),
    ).toEqual([
      [
        "find",
        "alpha's",
        { source_id: "srv_alpha", alias: "alpha", purpose: "alpha", redundancy_group: null },
      ],
      [
        "only_beta",
        undefined,
        { source_id: "srv_beta", alias: "beta", purpose: "beta", redundancy_group: null },
      ],
    ]);
  });

  it("keeps an entry's own _meta, names the standby that stood in, and skips sources that failed", () => {
    const entries = union(
      [down(), ok({ items: [{ uriTemplate: "t", _meta: { own: 1 } }] }, standby, ["primary"])],
      (value: { items: { uriTemplate: string; _meta?: Record<string, unknown> }[] }) => value.items,
      (entry) => entry.uriTemplate,
    );
    expect(entries).toEqual([
      {
        uriTemplate: "t",
        _meta: {
          own: 1,
          "ivoai/source": {
            source_id: "srv_standby",
            alias: "standby",
            purpose: "pair",
            redundancy_group: "pair",
            failed_over_from: ["primary"],
          },
        },
      },
    ]);
  });
});

describe("byPriority", () => {
  it("orders groups by their primary's priority, then by key", () => {
    const groups = [
      groupOf("c", sourceOf("c", { priority: 5 })),
      groupOf("b", sourceOf("b")),
      groupOf("a", sourceOf("a")),
    ];
    expect(byPriority(groups).map((group) => group.key)).toEqual(["c", "a", "b"]);
  });
});

describe("resources/list paging", () => {
  const first = groupOf("first", alpha);
  const second = groupOf("second", beta);
  const page = (nextCursor?: string): ListResourcesResult => ({
    resources: [{ uri: "ivoai://x", name: "x" }],
    ...(nextCursor ? { nextCursor } : {}),
  });

  it("stays on a group while it has more pages, then moves to the next, then ends", () => {
    expect(resourcePage(first, ok(page("2")), second).next).toEqual({ k: "first", c: "2" });
    expect(resourcePage(first, ok(page()), second).next).toEqual({ k: "second" });
    expect(resourcePage(second, ok(page(), beta), undefined).next).toBeUndefined();
    expect(resourcePage(first, down(alpha), second)).toEqual({ resources: [], next: { k: "second" } });
  });

  it("passes on a group's own refusal of its cursor instead of skipping it", () => {
    expect(() => resourcePage(first, refused(-32602, "invalid cursor"), second)).toThrow("invalid cursor");
  });

  it("resumes where its cursor says, and refuses a cursor it did not issue", () => {
    const ordered = [first, second];
    expect(startOfResources(ordered, undefined)).toEqual({ index: 0, upstreamCursor: undefined });
    expect(startOfResources(ordered, encodeCursor({ k: "second", c: "9" }))).toEqual({
      index: 1,
      upstreamCursor: "9",
    });
    for (const bad of [
      encodeCursor({ k: "gone" }),
      "not base64 json",
      Buffer.from('{"k":"first","x":1}').toString("base64url"),
    ]) {
      expect(() => startOfResources(ordered, bad)).toThrow("invalid cursor for resources/list");
    }
    expect(decodeCursor(encodeCursor({ k: "first" }))).toEqual({ k: "first" });
  });
});

describe("unreadResource", () => {
  it("prefers the upstream's answer, naming the sources that could not be asked", () => {
    const error = unreadResource(
      "ivoai://x",
      [new UpstreamAnswer(RESOURCE_NOT_FOUND, "Resource not found: x")],
      [
        {
          source_id: "srv_beta",
          alias: "beta",
          purpose: "beta",
          redundancy_group: null,
          status: "timeout",
          error: "beta: slow",
        },
      ],
    );
    expect([error.code, error.message]).toEqual([
      RESOURCE_NOT_FOUND,
      "MCP error -32002: Resource not found: x (not asked, unavailable: beta: slow)",
    ]);
  });

  it("is an internal error when every source was unavailable, and not found (with a cut URI) when none had it", () => {
    const unavailable = unreadResource(
      "ivoai://x",
      [],
      [
        {
          source_id: "srv_beta",
          alias: "beta",
          purpose: "beta",
          redundancy_group: null,
          status: "error",
          error: "beta: down",
        },
      ],
    );
    expect(unavailable.code).toBe(-32603);
    const missing = unreadResource(`ivoai://${"a".repeat(600)}\n`, [], []);
    expect(missing).toBeInstanceOf(McpError);
    expect(missing.code).toBe(RESOURCE_NOT_FOUND);
    expect((missing.data as { uri: string }).uri).toHaveLength(513);
  });
});

describe("mergeCompletions", () => {
  const values = (list: string[], hasMore = false): CompleteResult => ({
    completion: { values: list, hasMore },
  });

  it("dedupes values in priority order, caps them at 100 and says there are more", () => {
    const many = Array.from({ length: 120 }, (_, index) => `v${index}`);
    const merged = mergeCompletions([ok(values(["b", "a"])), ok(values(["a", "c"]), beta), down()]);
    expect(merged.completion).toEqual({ values: ["b", "a", "c"], total: 3, hasMore: false });
    const capped = mergeCompletions([ok(values(many))]);
    expect(capped.completion).toMatchObject({ total: 120, hasMore: true });
    expect(capped.completion.values).toHaveLength(100);
  });

  it("answers a source's refusal when no source completed", () => {
    expect(() => mergeCompletions([down(), refused(-32602, "unknown argument")])).toThrow("unknown argument");
    expect(mergeCompletions([down()]).completion.values).toEqual([]);
  });
});

describe("relayed log messages", () => {
  it("pass at or above the session's level only, named after their source", () => {
    expect(passesLevel("warning", "warning")).toBe(true);
    expect(passesLevel("info", "warning")).toBe(false);
    expect(passesLevel("emergency", undefined)).toBe(false);
    expect(relayedLog(alpha, { level: "info", logger: "reader", data: "x" }).logger).toBe("alpha/reader");
    expect(relayedLog(alpha, { level: "info", data: "x" }).logger).toBe("alpha");
  });
});
