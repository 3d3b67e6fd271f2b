import { describe, expect, it } from "vitest";
import { type GroupSpec, helpText, listOption, resolveInvocation } from "./command.js";

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
      options: {
        scope: { type: "string", multiple: true, description: "scope" },
        status: { type: "enum", description: "which", choices: ["pending", "applied"] },
      },
      run: async () => 0,
    },
    {
      kind: "group",
      name: "server",
      summary: "server things",
      children: [
        {
          kind: "command",
          name: "list",
          summary: "list them",
          positionals: [{ name: "SHELL", description: "a shell", choices: ["bash", "zsh"] }],
          run: async () => 0,
        },
      ],
    },
  ],
};

function usageMessage(argv: string[]): string {
  try {
    resolveInvocation(tree, argv);
  } catch (error) {
    expect((error as { code?: string }).code).toBe("USAGE");
    return (error as Error).message;
  }
  throw new Error(`accepted ${argv.join(" ")}`);
}

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

  it("names the command or flag a typo most likely meant", () => {
    expect(usageMessage(["revok"])).toBe('unknown command "revok"; did you mean "revoke"?');
    expect(usageMessage(["sever", "list"])).toBe('unknown command "sever"; did you mean "server"?');
    expect(usageMessage(["server", "lst"])).toBe(
      'unknown command "lst" for "ivoai server"; did you mean "list"?',
    );
    expect(usageMessage(["revoke", "a", "--scop", "x"])).toBe(
      'unknown option "--scop"; did you mean "--scope"?',
    );
    expect(usageMessage(["revoke", "a", "--stauts=x"])).toBe(
      'unknown option "--stauts"; did you mean "--status"?',
    );
    expect(usageMessage(["zzzzzz"])).toBe('unknown command "zzzzzz" (see "ivoai --help")');
  });

  it("lists the valid values of an option or argument with choices", () => {
    expect(usageMessage(["revoke", "a", "--status", "foo"])).toBe(
      'invalid --status "foo": expected one of pending, applied',
    );
    expect(usageMessage(["server", "list", "tcsh"])).toBe('invalid SHELL "tcsh": expected one of bash, zsh');
    const ok = resolveInvocation(tree, ["revoke", "a", "--status", "applied"]);
    expect(ok.kind === "run" && ok.options.status).toBe("applied");
    const help = resolveInvocation(tree, ["revoke", "--help"]);
    expect(help.kind === "help" && help.text).toContain("(one of: pending, applied)");
  });

  it("answers 'help COMMAND…' at any level with that command's help, and refuses an unknown one", () => {
    const direct = resolveInvocation(tree, ["server", "list", "--help"]);
    const viaHelp = resolveInvocation(tree, ["help", "server", "list"]);
    const nested = resolveInvocation(tree, ["server", "help", "list"]);
    expect(viaHelp).toEqual(direct);
    expect(nested).toEqual(direct);
    expect(direct.kind === "help" && direct.text).toContain("Usage: ivoai server list [SHELL] [options]");
    expect(helpText(tree, ["server"])).toContain("list  list them");
    expect(usageMessage(["help", "sevrer"])).toBe('unknown command "sevrer"; did you mean "server"?');
    expect(usageMessage(["help", "revoke", "extra"])).toContain('"ivoai revoke" has no subcommand "extra"');
  });
});
