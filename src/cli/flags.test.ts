// Every flag of every command, walked from the real command tree: integers refuse anything but decimal digits
// in range, enums an unknown value, durations a malformed one, required flags their absence; each refusal a
// one-line USAGE error naming the flag, before any command runs. Then a valid value reaches run typed.
import { describe, expect, it } from "vitest";
import { type CommandSpec, type GroupSpec, optionSpecsOf, resolveInvocation } from "./command.js";
import type { OptionSpec } from "./options.js";
import { COMMAND_TREE } from "./tree.js";

interface Found {
  words: string[];
  command: CommandSpec;
}

function commandsOf(node: CommandSpec | GroupSpec, words: string[] = []): Found[] {
  if (node.kind === "command") return [{ words, command: node }];
  return node.children.flatMap((child) => commandsOf(child, [...words, child.name]));
}

const ALL = commandsOf(COMMAND_TREE);

/** A value `spec` accepts. */
function validValue(spec: OptionSpec): string {
  switch (spec.type) {
    case "integer":
      return String(spec.min ?? Math.min(1, spec.max ?? 1));
    case "enum":
      return spec.choices[0] ?? "";
    case "duration":
      return "1m";
    case "instant":
      return "1h";
    case "size":
      return "1MiB";
    default:
      return "x";
  }
}

/** The shortest valid command line: its words, required arguments and required flags (except `without`). */
function baseArgv({ words, command }: Found, without?: string): string[] {
  const positionals = (command.positionals ?? [])
    .filter((entry) => entry.required)
    .map((entry) => entry.choices?.[0] ?? "x");
  const flags = Object.entries(command.options ?? {})
    .filter(([name, spec]) => spec.type !== "boolean" && spec.required && name !== without)
    .flatMap(([name, spec]) => [`--${name}=${validValue(spec)}`]);
  return [...words, ...positionals, ...flags];
}

function usageError(argv: string[]): string {
  try {
    resolveInvocation(COMMAND_TREE, argv);
  } catch (error) {
    expect((error as { code?: string }).code, argv.join(" ")).toBe("USAGE");
    return (error as Error).message;
  }
  throw new Error(`accepted: ivoai ${argv.join(" ")}`);
}

function parsed(argv: string[]): Record<string, unknown> {
  const invocation = resolveInvocation(COMMAND_TREE, argv);
  if (invocation.kind !== "run") throw new Error(`not a run: ${argv.join(" ")}`);
  return invocation.options;
}

/** Every declared option of every command with its type, e.g. "server audit --limit: integer". */
function typedFlags(): string[] {
  return ALL.flatMap(({ words, command }) =>
    Object.entries(command.options ?? {}).map(([name, spec]) => `${words.join(" ")} --${name}: ${spec.type}`),
  );
}

const NOT_DECIMAL = ["0x10", "1e1", "+5", "1.0", "", " 5", "5 ", "-1", "٣"];

describe("every command's flags, from the real tree", () => {
  it("finds the commands and the typed flags this test is about", () => {
    expect(ALL.length).toBeGreaterThan(40);
    expect(typedFlags()).toEqual(
      expect.arrayContaining([
        "server audit --limit: integer",
        "server audit --before: integer",
        "server audit --since: instant",
        "server approvals list --limit: integer",
        "server approvals list --older-than: duration",
        "server search --limit: integer",
        "connect server add --priority: integer",
        "connect server add --url: string",
        "router serve --deadline-ms: integer",
        "auto --workers: integer",
        "server start --log-keep: integer",
        "server start --log-max-size: size",
        "server enrollment create --ttl: duration",
        "server console login --ttl: duration",
        "server stop --timeout: duration",
        "server approvals list --status: enum",
        "session start --executor: enum",
      ]),
    );
  });

  it.each(ALL.map((found) => [found.words.join(" "), found] as const))(
    "%s: a valid call parses, and every bad flag value is a one-line usage error naming the flag",
    (_, found) => {
      const base = baseArgv(found);
      expect(resolveInvocation(COMMAND_TREE, base).kind).toBe("run");
      for (const [name, spec] of Object.entries(optionSpecsOf(found.command))) {
        const bad = (value: string) => {
          const message = usageError([...base, `--${name}=${value}`]);
          expect(message.split("\n"), message).toHaveLength(1);
          expect(message).toContain(`--${name}`);
          return message;
        };
        if (spec.type === "integer") {
          for (const value of NOT_DECIMAL) expect(bad(value)).toContain("expected an integer");
          if (spec.min !== undefined) expect(bad(String(spec.min - 1))).toContain(`${spec.min}`);
          if (spec.max !== undefined) expect(bad(String(spec.max + 1))).toContain(`${spec.max}`);
          const value = validValue(spec);
          expect(parsed([...base, `--${name}`, value])[name]).toBe(Number(value));
        }
        if (spec.type === "enum") {
          expect(bad("no-such-value")).toContain(`expected one of ${spec.choices.join(", ")}`);
          const first = spec.choices[0] ?? "";
          expect(parsed([...base, `--${name}`, first])[name]).toEqual(spec.multiple ? [first] : first);
        }
        if (spec.type === "duration") {
          for (const value of ["forever", "10", "0m", "1.5h", "0x10m", ""]) bad(value);
          if (spec.max !== undefined) expect(bad("999999d")).toContain(`at most ${spec.max}`);
          expect(parsed([...base, `--${name}`, "1m"])[name]).toBe(60_000);
        }
        if (spec.type === "instant") {
          bad("not-a-time");
          const at = Date.parse(String(parsed([...base, `--${name}`, "2026-01-02T03:04:05Z"])[name]));
          expect(at).toBe(Date.parse("2026-01-02T03:04:05Z"));
        }
        if (spec.type === "size") {
          for (const value of ["lots", "0x10", "1e3", "1.5MiB", "-1", ""]) bad(value);
          if (spec.min !== undefined && spec.min > 1) bad(String(spec.min - 1));
          expect(parsed([...base, `--${name}`, "2KiB"])[name]).toBe(2048);
        }
        if (spec.type !== "boolean" && spec.required) {
          const message = usageError(baseArgv(found, name));
          expect(message).toContain(`option "--${name}" is required`);
        }
      }
    },
  );

  it("shows each typed flag's type, range and default in help", () => {
    const help = (argv: string[]) => {
      const invocation = resolveInvocation(COMMAND_TREE, [...argv, "--help"]);
      return invocation.kind === "help" ? invocation.text : "";
    };
    expect(help(["server", "approvals", "list"])).toMatch(
      /--limit N\s+requests per page \(integer from 1 to \d+; default: \d+\)/,
    );
    expect(help(["server", "audit"])).toMatch(/--since WHEN\s+.*default: 24h/);
    expect(help(["server", "console", "login"])).toMatch(/--ttl DURATION\s+.*at most 24h; default: 10m/);
    expect(help(["connect", "server", "add"])).toMatch(/--url URL\s+.*\(required\)/);
  });

  it("gives integers, durations and instants to the command as numbers and ISO times, defaults included", () => {
    const audit = parsed(["server", "audit", "--limit", "16", "--before", "7"]);
    expect(audit).toMatchObject({ limit: 16, before: 7 });
    expect(Date.now() - Date.parse(String(audit.since))).toBeGreaterThanOrEqual(24 * 3_600_000 - 60_000);
    expect(parsed(["server", "approvals", "list", "--older-than", "2h"])).toMatchObject({
      limit: 50,
      status: "pending",
      "older-than": 7_200_000,
    });
    expect(parsed(["server", "search", "q"])).toMatchObject({ limit: 10 });
    expect(parsed(["auto", "--knowledge-source", "a,b", "--knowledge-source", "c"])).toMatchObject({
      "knowledge-source": ["a", "b", "c"],
      workers: undefined,
    });
  });
});
