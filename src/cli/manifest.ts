// The command tree as data (names, summaries, flags and which module holds each command) and back to a tree:
// the CLI resolves argv, prints help and completes from the data, and loads a command's module only to run it.
import { IvoaiError } from "../shared/errors.js";
import type { CommandSpec, GroupSpec } from "./command.js";
import { COMMAND_MODULES, type CommandModuleName } from "./command-modules.js";

/** Where a command's spec is: an export of one of COMMAND_MODULES, then the names leading to it below that export. */
export interface CommandSource {
  module: CommandModuleName;
  path: string[];
}

/** A command without its code; no source for a builtin (made by the CLI itself, see hydrateManifest). */
export type ManifestCommand = Omit<CommandSpec, "run"> & { source?: CommandSource };

export interface ManifestGroup {
  kind: "group";
  name: string;
  summary: string;
  children: (ManifestCommand | ManifestGroup)[];
}

/** Makes a builtin command, given the tree it belongs to (a getter: the tree contains the command). */
export type BuiltinCommand = (tree: () => GroupSpec) => CommandSpec;

type Node = CommandSpec | GroupSpec;

function isNode(value: unknown): value is Node {
  if (typeof value !== "object" || value === null) return false;
  const node = value as { kind?: unknown; run?: unknown; children?: unknown };
  return (
    (node.kind === "command" && typeof node.run === "function") ||
    (node.kind === "group" && Array.isArray(node.children))
  );
}

/** The nodes one step below `value` (an exported array of specs, or a group). */
function below(value: unknown): Node[] {
  if (Array.isArray(value)) return value.filter(isNode);
  return isNode(value) && value.kind === "group" ? value.children : [];
}

/** Every command exported (directly, in an array or in a group) by the command modules, and where it is. */
async function exportedCommands(): Promise<Map<CommandSpec, CommandSource>> {
  const found = new Map<CommandSpec, CommandSource>();
  for (const [module, load] of Object.entries(COMMAND_MODULES) as [
    CommandModuleName,
    () => Promise<object>,
  ][]) {
    const visit = (value: unknown, path: string[]) => {
      if (isNode(value) && value.kind === "command") {
        if (!found.has(value)) found.set(value, { module, path });
        return;
      }
      for (const child of below(value)) visit(child, [...path, child.name]);
    };
    for (const [name, value] of Object.entries(await load())) visit(value, [name]);
  }
  return found;
}

/**
 * The manifest of `tree`: every command must be exported by a module of COMMAND_MODULES or be one of `builtins`
 * (named by its words below the root, e.g. "completion"). Plain JSON, as the build embeds it.
 */
export async function extractManifest(tree: GroupSpec, builtins: readonly string[]): Promise<ManifestGroup> {
  const sources = await exportedCommands();
  const visit = (node: Node, at: string[]): ManifestCommand | ManifestGroup => {
    if (node.kind === "group") {
      const children = node.children.map((child) => visit(child, [...at, child.name]));
      return { kind: "group", name: node.name, summary: node.summary, children };
    }
    const { run: _code, ...data } = node;
    const source = sources.get(node);
    if (source) return { ...data, source };
    if (builtins.includes(at.join(" "))) return data;
    throw new IvoaiError(
      "INTERNAL",
      `command "${at.join(" ")}" is neither exported by a module of COMMAND_MODULES nor a builtin`,
    );
  };
  return JSON.parse(JSON.stringify(visit(tree, []))) as ManifestGroup;
}

/** The command spec `source` names, from its module (loaded now if it was not yet). */
export async function loadCommand(source: CommandSource): Promise<CommandSpec> {
  const [exported = "", ...names] = source.path;
  const exports: Record<string, unknown> = await COMMAND_MODULES[source.module]();
  let node = exports[exported];
  for (const name of names) node = below(node).find((child) => child.name === name);
  if (isNode(node) && node.kind === "command") return node;
  throw new IvoaiError("INTERNAL", `module "${source.module}" has no command at ${source.path.join(".")}`);
}

/** The tree a manifest describes: each command's run loads its module first; builtins are made here. */
export function hydrateManifest(
  manifest: ManifestGroup,
  builtins: Record<string, BuiltinCommand>,
): GroupSpec {
  const visit = (node: ManifestCommand | ManifestGroup, at: string[]): Node => {
    if (node.kind === "group") {
      const children = node.children.map((child) => visit(child, [...at, child.name]));
      return { kind: "group", name: node.name, summary: node.summary, children };
    }
    const { source, ...data } = node;
    if (source) return { ...data, run: async (ctx) => (await loadCommand(source)).run(ctx) };
    const make = builtins[at.join(" ")];
    if (!make) throw new IvoaiError("INTERNAL", `no builtin command "${at.join(" ")}"`);
    return make(() => tree);
  };
  const tree = visit(manifest, []) as GroupSpec;
  return tree;
}
