// The command tree: declarative specs, strict flag parsing (unknown flag or value = usage error naming what
// was meant or allowed; each option's value typed and checked by options.ts before a command runs) and
// generated help (`--help` or `help COMMAND…` at any level).
import { parseArgs } from "node:util";
import { IvoaiError } from "../shared/errors.js";
import {
  type ExactOptions,
  type OptionSpec,
  type OptionsOf,
  type OptionValues,
  optionFacts,
  parseOptionValues,
  placeholderOf,
  type RawOptionValue,
  splitList,
  takesValue,
} from "./options.js";
import type { Output } from "./output.js";
import { closestMatch } from "./suggest.js";

/** Values only known at run time, which completion asks `ivoai completion SHELL --values KIND` for. */
export const DYNAMIC_VALUE_KINDS = ["server-alias", "knowledge-source", "approval-id", "mcp-server"] as const;
export type DynamicValueKind = (typeof DYNAMIC_VALUE_KINDS)[number];

export interface PositionalSpec {
  name: string;
  description: string;
  required?: boolean;
  /** Takes every remaining argument (only the last positional). */
  variadic?: boolean;
  /** The only values accepted; listed in help, errors and completion. */
  choices?: readonly string[];
  /** Completion offers these run-time values (e.g. pending approval ids); only the first positional. */
  complete?: DynamicValueKind;
}

export type * from "./options.js";
export { defineOptions } from "./options.js";

/** What a command's run receives: its options typed as declared (`Options`), and the process around it. */
export interface CommandContext<Options = OptionValues> {
  options: Options;
  positionals: string[];
  json: boolean;
  debug: boolean;
  out: Output;
  env: NodeJS.ProcessEnv;
  /** Resolves when the user asks the command to stop (SIGINT/SIGTERM). */
  stopSignal: Promise<NodeJS.Signals>;
}

export interface CommandSpec {
  kind: "command";
  name: string;
  summary: string;
  description?: string;
  positionals?: PositionalSpec[];
  options?: Record<string, OptionSpec>;
  /** The command prints data and accepts --json. */
  json?: boolean;
  run(ctx: CommandContext): Promise<number | undefined>;
}

/** A command as written: its run sees the options typed from its own declaration. */
export interface TypedCommandSpec<O extends Record<string, OptionSpec>>
  extends Omit<CommandSpec, "kind" | "options" | "run"> {
  options?: O & ExactOptions<O>;
  run(ctx: CommandContext<OptionsOf<O>>): Promise<number | undefined>;
}

/**
 * Declares a command: the framework parses and checks its options before `run`, which receives them typed,
 * e.g. `{ limit: { type: "integer", min: 1 } }` gives `ctx.options.limit: number | undefined`.
 */
export function defineCommand<const O extends Record<string, OptionSpec> = Record<never, OptionSpec>>(
  spec: TypedCommandSpec<O>,
): CommandSpec {
  // The framework hands run exactly the values parseOptionValues made from these specs: the cast is that fact.
  return { kind: "command", ...spec } as unknown as CommandSpec;
}

export interface GroupSpec {
  kind: "group";
  name: string;
  summary: string;
  children: (CommandSpec | GroupSpec)[];
}

export type ResolvedInvocation =
  | { kind: "help"; text: string }
  | {
      kind: "run";
      command: CommandSpec;
      path: string[];
      options: OptionValues;
      positionals: string[];
      json: boolean;
      debug: boolean;
    };

const GLOBAL_OPTIONS: Record<string, OptionSpec> = {
  help: { type: "boolean", short: "h", description: "show this help" },
  debug: { type: "boolean", description: "show stack traces on errors" },
};
const JSON_OPTION: OptionSpec = { type: "boolean", description: "print machine-readable JSON" };

/** The word that, at any level of the tree, asks for the help of what follows it. */
export const HELP_WORD = "help";

/** Every option a command accepts: the global ones, --json when it prints data, and its own. */
export function optionSpecsOf(command: CommandSpec): Record<string, OptionSpec> {
  return { ...GLOBAL_OPTIONS, ...(command.json ? { json: JSON_OPTION } : {}), ...command.options };
}

/** Walks argv down the tree and parses the flags of the command it reaches. */
export function resolveInvocation(root: GroupSpec, argv: readonly string[]): ResolvedInvocation {
  let node: CommandSpec | GroupSpec = root;
  const path: string[] = [root.name];
  let index = 0;
  while (node.kind === "group") {
    const token = argv[index];
    if (token === undefined || token === "--help" || token === "-h") {
      return { kind: "help", text: groupHelp(node, path) };
    }
    if (token === HELP_WORD) return { kind: "help", text: helpText(node, argv.slice(index + 1), path) };
    node = childOf(node, token, path);
    path.push(node.name);
    index += 1;
  }
  const command: CommandSpec = node;
  const specs = optionSpecsOf(command);
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: argv.slice(index) as string[],
      options: Object.fromEntries(
        Object.entries(specs).map(([name, spec]) => [
          name,
          {
            type: takesValue(spec) ? ("string" as const) : ("boolean" as const),
            ...(spec.short ? { short: spec.short } : {}),
            ...("multiple" in spec && spec.multiple ? { multiple: true } : {}),
          },
        ]),
      ),
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw parseFailure(error as Error, specs, path);
  }
  const raw = parsed.values as Record<string, RawOptionValue>;
  if (raw.help) return { kind: "help", text: commandHelp(command, path) };
  const options = parseOptionValues(raw, specs, path);
  const declared = command.positionals ?? [];
  const required = declared.filter((entry) => entry.required).length;
  if (parsed.positionals.length < required) {
    throw usage(`missing ${declared[parsed.positionals.length]?.name ?? "argument"}`, path);
  }
  if (parsed.positionals.length > declared.length && !declared.at(-1)?.variadic) {
    throw usage(`unexpected argument "${parsed.positionals[declared.length]}"`, path);
  }
  declared.forEach((entry, at) => {
    const value = parsed.positionals[at];
    if (entry.choices && value !== undefined && !entry.choices.includes(value))
      throw new IvoaiError(
        "USAGE",
        `invalid ${entry.name} "${value}": expected one of ${entry.choices.join(", ")}`,
      );
  });
  return {
    kind: "run",
    command,
    path,
    options,
    positionals: parsed.positionals,
    json: options.json === true,
    debug: options.debug === true,
  };
}

/** The help of the command or group `tokens` name under `group` (whose own path is `path`). */
export function helpText(
  group: GroupSpec,
  tokens: readonly string[],
  path: readonly string[] = [group.name],
): string {
  let node: CommandSpec | GroupSpec = group;
  const at = [...path];
  for (const token of tokens) {
    if (node.kind === "command") throw usage(`"${at.join(" ")}" has no subcommand "${token}"`, at);
    node = childOf(node, token, at);
    at.push(node.name);
  }
  return node.kind === "group" ? groupHelp(node, at) : commandHelp(node, at);
}

function childOf(group: GroupSpec, token: string, path: readonly string[]): CommandSpec | GroupSpec {
  const child = group.children.find((entry) => entry.name === token);
  if (child) return child;
  const where = path.length > 1 ? ` for "${path.join(" ")}"` : "";
  if (token.startsWith("-")) {
    const flags = ["--help", ...(path.length === 1 ? ["--version"] : [])];
    throw unknownWithSuggestion(`unknown option "${token}"${where}`, closestMatch(token, flags), path);
  }
  const names = [...group.children.map((entry) => entry.name), HELP_WORD];
  throw unknownWithSuggestion(`unknown command "${token}"${where}`, closestMatch(token, names), path);
}

function unknownWithSuggestion(message: string, suggestion: string | undefined, path: readonly string[]) {
  return suggestion
    ? new IvoaiError("USAGE", `${message}; did you mean "${suggestion}"?`)
    : usage(message, path);
}

function parseFailure(error: Error, specs: Record<string, OptionSpec>, path: readonly string[]): IvoaiError {
  const unknown = /Unknown option '([^']+)'/.exec(error.message);
  if (unknown) {
    const flag = unknown[1] ?? "";
    const flags = Object.entries(specs).flatMap(([name, spec]) => [
      `--${name}`,
      ...(spec.short ? [`-${spec.short}`] : []),
    ]);
    const typed = flag.split("=")[0] ?? flag;
    return unknownWithSuggestion(`unknown option "${flag}"`, closestMatch(typed, flags), path);
  }
  const missing = /Option '(?:-\w, )?(--[\w-]+) <value>' argument missing/.exec(error.message);
  if (missing) return usage(`option "${missing[1]}" needs a value`, path);
  const extra = /Option '(?:-\w, )?(--[\w-]+)' does not take an argument/.exec(error.message);
  if (extra) return usage(`option "${extra[1]}" takes no value`, path);
  return usage((error.message.split("\n")[0] ?? "invalid arguments").replace(/\.$/, ""), path);
}

function usage(message: string, path: readonly string[]): IvoaiError {
  return new IvoaiError("USAGE", `${message} (see "${path.join(" ")} --help")`);
}

function groupHelp(group: GroupSpec, path: readonly string[]): string {
  const rows = group.children.map((child) => [child.name, child.summary] as const);
  return [
    `${group.summary}`,
    "",
    `Usage: ${path.join(" ")} <command> [options]`,
    "",
    "Commands:",
    ...table(rows),
    "",
    `Run "${path.join(" ")} help <command>" (or "<command> --help") for a command's options.`,
  ].join("\n");
}

function commandHelp(command: CommandSpec, path: readonly string[]): string {
  const specs = optionSpecsOf(command);
  const positionals = (command.positionals ?? []).map((entry) =>
    entry.required ? entry.name : `[${entry.name}]`,
  );
  const lines = [command.summary, "", `Usage: ${[...path, ...positionals].join(" ")} [options]`];
  if (command.description) lines.push("", command.description);
  if (command.positionals?.length) {
    lines.push(
      "",
      "Arguments:",
      ...table(command.positionals.map((entry) => [entry.name, entry.description] as const)),
    );
  }
  const optionRows = Object.entries(specs).map(([name, spec]) => {
    const flag = `${spec.short ? `-${spec.short}, ` : ""}--${name}${takesValue(spec) ? ` ${placeholderOf(spec)}` : ""}`;
    const facts = optionFacts(spec);
    return [flag, `${spec.description}${facts.length ? ` (${facts.join("; ")})` : ""}`] as const;
  });
  lines.push("", "Options:", ...table(optionRows));
  return lines.join("\n");
}

function table(rows: readonly (readonly [string, string])[]): string[] {
  const width = Math.max(...rows.map(([left]) => left.length));
  return rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`);
}

/** Typed accessors for parsed option values. */
export function stringOption(options: OptionValues, name: string): string | undefined {
  const value = options[name];
  return typeof value === "string" ? value : undefined;
}

export function listOption(options: OptionValues, name: string): string[] {
  const value = options[name];
  return typeof value === "number" ? [String(value)] : splitList(value);
}
