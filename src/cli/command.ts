// The command tree: declarative specs, strict flag parsing (unknown flag = usage error) and generated --help.
import { parseArgs } from "node:util";
import { IvoaiError } from "../shared/errors.js";
import type { Output } from "./output.js";

export interface OptionSpec {
  type: "string" | "boolean";
  description: string;
  short?: string;
  multiple?: boolean;
  /** Placeholder shown in help, e.g. DIR. */
  value?: string;
}

export interface PositionalSpec {
  name: string;
  description: string;
  required?: boolean;
  /** Takes every remaining argument (only the last positional). */
  variadic?: boolean;
}

export type OptionValues = Record<string, string | boolean | string[] | undefined>;

export interface CommandContext {
  options: OptionValues;
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

/** Walks argv down the tree and parses the flags of the command it reaches. */
export function resolveInvocation(root: GroupSpec, argv: readonly string[]): ResolvedInvocation {
  let node: CommandSpec | GroupSpec = root;
  const path: string[] = [root.name];
  let index = 0;
  while (node.kind === "group") {
    const token = argv[index];
    if (token === undefined || token === "--help" || token === "-h" || token === "help") {
      return { kind: "help", text: groupHelp(node, path) };
    }
    const group: GroupSpec = node;
    const child: CommandSpec | GroupSpec | undefined = group.children.find((entry) => entry.name === token);
    if (!child) {
      const what = token.startsWith("-") ? `unknown option '${token}'` : `unknown command '${token}'`;
      throw usage(`${what} for '${path.join(" ")}'`, path);
    }
    node = child;
    path.push(child.name);
    index += 1;
  }
  const command: CommandSpec = node;
  const specs = { ...GLOBAL_OPTIONS, ...(command.json ? { json: JSON_OPTION } : {}), ...command.options };
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: argv.slice(index) as string[],
      options: Object.fromEntries(
        Object.entries(specs).map(([name, spec]) => [
          name,
          {
            type: spec.type,
            ...(spec.short ? { short: spec.short } : {}),
            ...(spec.multiple ? { multiple: true } : {}),
          },
        ]),
      ),
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw usage(describeParseError(error as Error), path);
  }
  const options = parsed.values as OptionValues;
  if (options.help) return { kind: "help", text: commandHelp(command, path, specs) };
  const declared = command.positionals ?? [];
  const required = declared.filter((entry) => entry.required).length;
  if (parsed.positionals.length < required) {
    throw usage(`missing ${declared[parsed.positionals.length]?.name ?? "argument"}`, path);
  }
  if (parsed.positionals.length > declared.length && !declared.at(-1)?.variadic) {
    throw usage(`unexpected argument '${parsed.positionals[declared.length]}'`, path);
  }
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

function describeParseError(error: Error): string {
  const unknown = /Unknown option '([^']+)'/.exec(error.message);
  if (unknown) return `unknown option '${unknown[1]}'`;
  return (error.message.split("\n")[0] ?? "invalid arguments").replace(/\.$/, "");
}

function usage(message: string, path: readonly string[]): IvoaiError {
  return new IvoaiError("USAGE", `${message} (see '${path.join(" ")} --help')`);
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
    `Run '${path.join(" ")} <command> --help' for a command's options.`,
  ].join("\n");
}

function commandHelp(
  command: CommandSpec,
  path: readonly string[],
  specs: Record<string, OptionSpec>,
): string {
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
    const flag = `${spec.short ? `-${spec.short}, ` : ""}--${name}${spec.type === "string" ? ` ${spec.value ?? "VALUE"}` : ""}`;
    return [flag, `${spec.description}${spec.multiple ? " (repeatable)" : ""}`] as const;
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
  if (Array.isArray(value))
    return value
      .flatMap((item) => item.split(","))
      .map((item) => item.trim())
      .filter(Boolean);
  return typeof value === "string" ? [value] : [];
}
