// The typed options a command's run sees, checked by the compiler (expectTypeOf, @ts-expect-error) and at run
// time through an in-process run.
import { describe, expect, expectTypeOf, it } from "vitest";
import { defineCommand, defineOptions } from "./command.js";
import { group, runInProcess } from "./invoke.test-kit.js";

describe("typed command options", () => {
  it("infers each option's type from its declaration, and the run sees those values", async () => {
    const seen: unknown[] = [];
    const command = defineCommand({
      name: "probe",
      summary: "records its options",
      options: {
        limit: { type: "integer", min: 1, max: 9, description: "limit" },
        page: { type: "integer", default: 3, description: "page" },
        kind: { type: "enum", choices: ["a", "b"], description: "kind" },
        kinds: { type: "enum", choices: ["a", "b"], multiple: true, description: "kinds" },
        ttl: { type: "duration", default: "1m", description: "ttl" },
        since: { type: "instant", description: "since" },
        size: { type: "size", description: "size" },
        url: { type: "string", required: true, description: "url" },
        tags: { type: "string", multiple: true, description: "tags" },
        force: { type: "boolean", description: "force" },
      },
      async run(ctx) {
        expectTypeOf(ctx.options.limit).toEqualTypeOf<number | undefined>();
        expectTypeOf(ctx.options.page).toEqualTypeOf<number>();
        expectTypeOf(ctx.options.kind).toEqualTypeOf<"a" | "b" | undefined>();
        expectTypeOf(ctx.options.kinds).toEqualTypeOf<("a" | "b")[]>();
        expectTypeOf(ctx.options.ttl).toEqualTypeOf<number>();
        expectTypeOf(ctx.options.since).toEqualTypeOf<string | undefined>();
        expectTypeOf(ctx.options.size).toEqualTypeOf<number | undefined>();
        expectTypeOf(ctx.options.url).toEqualTypeOf<string>();
        expectTypeOf(ctx.options.tags).toEqualTypeOf<string[]>();
        expectTypeOf(ctx.options.force).toEqualTypeOf<boolean>();
        seen.push(ctx.options);
        return 0;
      },
    });
    const argv = ["t", "probe", "--url", "u", "--limit", "9", "--kinds", "a,b", "--kinds", "a"];
    await runInProcess([group("t", [command])], [...argv, "--size", "2KiB", "--tags", "x, y"]);
    expect(seen).toEqual([
      {
        limit: 9,
        page: 3,
        kind: undefined,
        kinds: ["a", "b", "a"],
        ttl: 60_000,
        since: undefined,
        size: 2048,
        url: "u",
        tags: ["x", "y"],
        force: false,
        help: false,
        debug: false,
      },
    ]);
  });

  it("refuses, at compile time, a key the option's type does not declare", () => {
    defineOptions({
      // @ts-expect-error choices belong to enum options, not string ones
      status: { type: "string", description: "s", choices: ["a"] },
    });
    defineOptions({
      // @ts-expect-error an integer's range is min and max
      limit: { type: "integer", description: "n", minimum: 1 },
    });
    expect(true).toBe(true);
  });
});
