import { describe, expect, it } from "vitest";
import { type CommandSpec, type GroupSpec, helpText } from "./command.js";
import { completionCommand } from "./commands/completion.js";
import {
  type CommandSource,
  extractManifest,
  hydrateManifest,
  loadCommand,
  type ManifestGroup,
} from "./manifest.js";
import { COMMAND_TREE } from "./tree.js";

/** Every path below the root (groups and commands), as words. */
function paths(node: CommandSpec | GroupSpec, at: string[] = []): string[][] {
  if (node.kind === "command") return [at];
  return [at, ...node.children.flatMap((child) => paths(child, [...at, child.name]))];
}

function commandAt(tree: GroupSpec, words: readonly string[]): CommandSpec | GroupSpec | undefined {
  let node: CommandSpec | GroupSpec | undefined = tree;
  for (const word of words)
    node = node?.kind === "group" ? node.children.find((c) => c.name === word) : undefined;
  return node;
}

describe("the command manifest", () => {
  it("describes the full tree: the same help everywhere, each command found where its module exports it", async () => {
    const manifest = await extractManifest(COMMAND_TREE, ["completion"]);
    expect(JSON.parse(JSON.stringify(manifest))).toEqual(manifest);
    const lazy = hydrateManifest(manifest, { completion: completionCommand });
    const all = paths(COMMAND_TREE);
    expect(all.length).toBeGreaterThan(40);
    for (const words of all) {
      expect(helpText(lazy, words), words.join(" ")).toBe(helpText(COMMAND_TREE, words));
    }
    for (const words of all) {
      const entry = commandAt(manifest as unknown as GroupSpec, words) as {
        kind: string;
        source?: CommandSource;
      };
      if (entry.kind !== "command") continue;
      if (!entry.source) {
        expect(words).toEqual(["completion"]);
        continue;
      }
      expect(await loadCommand(entry.source), words.join(" ")).toBe(commandAt(COMMAND_TREE, words));
    }
  });

  it("keeps the hook apart from the agent commands (its module is what an agent event loads)", async () => {
    const manifest = await extractManifest(COMMAND_TREE, ["completion"]);
    expect(commandAt(manifest as unknown as GroupSpec, ["hook"])).toMatchObject({
      source: { module: "hook", path: ["hookCommand"] },
    });
  });

  it("refuses a command that no command module exports, naming it", async () => {
    const stray: CommandSpec = {
      kind: "command",
      name: "stray",
      summary: "not exported",
      run: async () => 0,
    };
    const tree: GroupSpec = { ...COMMAND_TREE, children: [...COMMAND_TREE.children, stray] };
    await expect(extractManifest(tree, ["completion"])).rejects.toThrow(
      /command "stray" is neither exported/,
    );
  });

  it("runs a command from the manifest by loading its module, and a builtin from its maker", async () => {
    const manifest: ManifestGroup = {
      kind: "group",
      name: "ivoai",
      summary: "test",
      children: [
        {
          kind: "command",
          name: "version",
          summary: "v",
          json: true,
          source: { module: "version", path: ["versionCommand"] },
        },
        {
          kind: "command",
          name: "gone",
          summary: "g",
          source: { module: "version", path: ["noSuchExport"] },
        },
        { kind: "command", name: "completion", summary: "c" },
      ],
    };
    const lines: string[] = [];
    const data: unknown[] = [];
    const ctx = {
      options: {},
      positionals: ["bash"],
      json: true,
      debug: false,
      env: {},
      stopSignal: new Promise<NodeJS.Signals>(() => {}),
      out: {
        data: (value: unknown) => data.push(value),
        line: (text: string) => lines.push(text),
        note: () => {},
        json: () => {},
      },
    } as unknown as Parameters<CommandSpec["run"]>[0];
    const lazy = hydrateManifest(manifest, { completion: completionCommand });
    const [version, gone, completion] = lazy.children as CommandSpec[];
    expect(await version?.run(ctx)).toBe(0);
    expect(data).toEqual([expect.objectContaining({ node: process.versions.node })]);
    await expect(gone?.run(ctx)).rejects.toThrow(/module "version" has no command at noSuchExport/);
    expect(await completion?.run(ctx)).toBe(0);
    expect(lines.join("\n")).toContain("complete -o default -F _ivoai ivoai");
    expect(() => hydrateManifest(manifest, {})).toThrow(/no builtin command "completion"/);
  });
});
