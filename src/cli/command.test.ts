import { describe, expect, it } from "vitest";
import { type GroupSpec, listOption, resolveInvocation } from "./command.js";

const tree: GroupSpec = {
  kind: "group",
  name: "ivoai",
  summary: "test tree",
  children: [
    {
      kind: "command",
      name: "revoke",
      summary: "revoke a thing",
      json: true,
      positionals: [{ name: "ID", description: "the id", required: true }],
      options: { scope: { type: "string", multiple: true, description: "scope" } },
      run: async () => 0,
    },
  ],
};

describe("command resolution", () => {
  it("parses flags, --json and positionals of the command reached", () => {
    const invocation = resolveInvocation(tree, ["revoke", "abc", "--json", "--scope", "a,b", "--scope", "c"]);
    if (invocation.kind !== "run") throw new Error("expected a run");
    expect(invocation.positionals).toEqual(["abc"]);
    expect(invocation.json).toBe(true);
    expect(listOption(invocation.options, "scope")).toEqual(["a", "b", "c"]);
  });

  it("answers --help at any level with the generated help", () => {
    const group = resolveInvocation(tree, []);
    expect(group.kind === "help" && group.text).toContain("revoke  revoke a thing");
    const command = resolveInvocation(tree, ["revoke", "--help"]);
    expect(command.kind === "help" && command.text).toContain("Usage: ivoai revoke ID [options]");
  });

  it("turns every misuse into a one-line USAGE error", () => {
    const misuse = [
      ["nope"],
      ["revoke"],
      ["revoke", "a", "b"],
      ["revoke", "a", "--bogus"],
      ["revoke", "a", "--scope"],
    ];
    for (const argv of misuse) {
      try {
        resolveInvocation(tree, argv);
        throw new Error(`accepted ${argv.join(" ")}`);
      } catch (error) {
        expect((error as { code?: string }).code).toBe("USAGE");
        expect((error as Error).message.split("\n")).toHaveLength(1);
      }
    }
  });
});
