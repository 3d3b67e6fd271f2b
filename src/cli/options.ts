// Command options as declared types (string, boolean, integer with a range, enum, duration, instant, size),
// parsed and validated once before a command runs: a command receives typed values, inferred from its declaration.
import { parseDuration } from "../shared/duration.js";
import { IvoaiError } from "../shared/errors.js";
import { sizeBytes } from "../shared/size.js";
import type { DynamicValueKind } from "./command.js";

interface OptionBase {
  description: string;
  short?: string;
  /** Placeholder shown in help, e.g. DIR. */
  value?: string;
  /** Missing is a usage error. */
  required?: boolean;
  /** Completion offers these run-time values for the option (e.g. the connected servers' aliases). */
  complete?: DynamicValueKind;
}

/** A flag without a value: `true` when given, else `false`. */
export interface BooleanOptionSpec {
  type: "boolean";
  description: string;
  short?: string;
}

/** Free text; `multiple` makes it repeatable and comma-separated (the value is then the list of items). */
export interface StringOptionSpec extends OptionBase {
  type: "string";
  multiple?: boolean;
  default?: string;
}

/** Decimal digits only (no sign, exponent, fraction or hex), within [min, max]. */
export interface IntegerOptionSpec extends OptionBase {
  type: "integer";
  min?: number;
  max?: number;
  default?: number;
}

/** One of `choices` (each item of the list, when `multiple`); listed in help, errors and completion. */
export interface EnumOptionSpec extends OptionBase {
  type: "enum";
  choices: readonly string[];
  multiple?: boolean;
  default?: string;
}

/** A duration such as 90s, 10m, 2h or 7d (see shared/duration.ts), given to the command in milliseconds. */
export interface DurationOptionSpec extends OptionBase {
  type: "duration";
  default?: string;
  /** The longest accepted, as a duration (e.g. "24h"). */
  max?: string;
}

/** A moment: a duration back from now (e.g. 1h, 7d) or an ISO time, given to the command as an ISO string. */
export interface InstantOptionSpec extends OptionBase {
  type: "instant";
  default?: string;
}

/** A size in bytes typed as `65536`, `512KiB`, `10MiB` or `1G` (k, m, g: powers of 1024), at least `min` bytes. */
export interface SizeOptionSpec extends OptionBase {
  type: "size";
  min?: number;
}

export type OptionSpec =
  | BooleanOptionSpec
  | StringOptionSpec
  | IntegerOptionSpec
  | EnumOptionSpec
  | DurationOptionSpec
  | InstantOptionSpec
  | SizeOptionSpec;

/** What parseArgs hands over for one option. */
export type RawOptionValue = string | boolean | string[] | undefined;

/** A parsed option value, as a command receives it. */
export type OptionValue = string | boolean | number | string[] | undefined;

/** Parsed options of a command whose declaration is not known statically. */
export type OptionValues = Record<string, OptionValue>;

type ValueOf<S extends OptionSpec> = S extends { type: "boolean" }
  ? boolean
  : S extends { type: "integer" | "duration" | "size" }
    ? number
    : S extends { type: "enum"; choices: readonly (infer C)[] }
      ? S extends { multiple: true }
        ? C[]
        : C
      : S extends { multiple: true }
        ? string[]
        : string;

/** A boolean, a list (possibly empty), a required option or one with a default always has a value. */
type AlwaysSet<S extends OptionSpec> = S extends { type: "boolean" } | { multiple: true } | { required: true }
  ? true
  : S extends { default: string | number }
    ? true
    : false;

/** The typed options of a command declaring `O`. */
export type OptionsOf<O extends Record<string, OptionSpec>> = {
  readonly [K in keyof O]: AlwaysSet<O[K]> extends true ? ValueOf<O[K]> : ValueOf<O[K]> | undefined;
};

type KeysOfAny<T> = T extends unknown ? keyof T : never;

/**
 * `O` with every key a spec of its type does not declare typed `never`: inference alone would accept (and
 * ignore) a misspelt or misplaced key such as `choices` on a string option.
 */
export type ExactOptions<O> = {
  [K in keyof O]: O[K] extends { type: infer T }
    ? Record<Exclude<keyof O[K], KeysOfAny<Extract<OptionSpec, { type: T }>>>, never>
    : never;
};

/** Declares a set of options (e.g. one several commands share), keeping their exact types for inference. */
export function defineOptions<const O extends Record<string, OptionSpec>>(options: O & ExactOptions<O>): O {
  return options;
}

/** The values an option accepts, when it lists them. */
export function choicesOf(spec: OptionSpec): readonly string[] | undefined {
  return spec.type === "enum" ? spec.choices : undefined;
}

/** Whether the option takes a value (every type but boolean). */
export function takesValue(spec: OptionSpec): boolean {
  return spec.type !== "boolean";
}

/** The placeholder of an option's value in help. */
export function placeholderOf(spec: OptionSpec): string {
  if (spec.type === "boolean") return "";
  if (spec.value) return spec.value;
  if (spec.type === "integer") return "N";
  if (spec.type === "duration") return "DURATION";
  if (spec.type === "size") return "SIZE";
  return "VALUE";
}

/** "from 1 to 500", "of at least 0": an integer option's range as help and errors show it. */
export function rangeText(spec: IntegerOptionSpec): string {
  if (spec.min !== undefined && spec.max !== undefined) return `from ${spec.min} to ${spec.max}`;
  if (spec.min !== undefined) return `of at least ${spec.min}`;
  if (spec.max !== undefined) return `of at most ${spec.max}`;
  return "";
}

/** The facts help adds to an option's description: type, range, choices, default, required, repeatable. */
export function optionFacts(spec: OptionSpec): string[] {
  if (spec.type === "boolean") return [];
  const facts: string[] = [];
  if (spec.type === "integer")
    facts.push(`integer${spec.min !== undefined || spec.max !== undefined ? ` ${rangeText(spec)}` : ""}`);
  if (spec.type === "duration")
    facts.push(`a duration such as 90s, 10m, 2h or 7d${spec.max ? `, at most ${spec.max}` : ""}`);
  if (spec.type === "instant") facts.push("a duration back such as 1h or 7d, or an ISO time");
  if (spec.type === "size") facts.push("a size such as 512KiB or 10MiB");
  if (spec.type === "enum" && !spec.description.includes(spec.choices.join(", ")))
    facts.push(`one of: ${spec.choices.join(", ")}`);
  if ("default" in spec && spec.default !== undefined) facts.push(`default: ${spec.default}`);
  if (spec.required) facts.push("required");
  if ((spec.type === "string" || spec.type === "enum") && spec.multiple) facts.push("repeatable");
  return facts;
}

function usageError(message: string, path: readonly string[]): IvoaiError {
  return new IvoaiError("USAGE", `${message} (see "${path.join(" ")} --help")`);
}

/** Comma-separated and repeated values as one list of trimmed, non-empty items. */
export function splitList(value: RawOptionValue): string[] {
  const items = Array.isArray(value) ? value : typeof value === "string" ? [value] : [];
  return items
    .flatMap((item) => item.split(","))
    .map((item) => item.trim())
    .filter(Boolean);
}

const DECIMAL = /^\d{1,15}$/;

function parseInteger(name: string, text: string, spec: IntegerOptionSpec, path: readonly string[]): number {
  const value = DECIMAL.test(text) ? Number(text) : Number.NaN;
  const inRange =
    Number.isSafeInteger(value) &&
    (spec.min === undefined || value >= spec.min) &&
    (spec.max === undefined || value <= spec.max);
  if (inRange) return value;
  const range = rangeText(spec);
  throw usageError(`invalid --${name} "${text}": expected an integer${range ? ` ${range}` : ""}`, path);
}

function parseDurationFlag(name: string, text: string, path: readonly string[], max?: string): number {
  let ms: number;
  try {
    ms = parseDuration(text);
  } catch {
    throw usageError(`invalid --${name} "${text}": expected a duration such as 90s, 10m, 2h or 7d`, path);
  }
  if (max !== undefined && ms > parseDuration(max))
    throw usageError(`invalid --${name} "${text}": expected a duration of at most ${max}`, path);
  return ms;
}

function parseSizeFlag(name: string, text: string, spec: SizeOptionSpec): number {
  const bytes = sizeBytes(text);
  const min = spec.min ?? 1;
  if (bytes !== undefined && bytes >= min) return bytes;
  const least = min % 1024 === 0 ? `${min / 1024}KiB` : `${min} bytes`;
  // Quoted as before this type existed: scripts and tests read "invalid --log-max-size 'lots'".
  throw new IvoaiError(
    "USAGE",
    `invalid --${name} '${text}': use a size of at least ${least} such as 512KiB or 10MiB`,
  );
}

const DURATION_BACK = /^\d+[smhd]$/;

function parseInstant(name: string, text: string, path: readonly string[], now: number): string {
  if (DURATION_BACK.test(text)) return new Date(now - parseDurationFlag(name, text, path)).toISOString();
  const at = Date.parse(text);
  if (!Number.isNaN(at)) return new Date(at).toISOString();
  throw usageError(
    `invalid --${name} "${text}": expected a duration back such as 1h or 7d, or an ISO time`,
    path,
  );
}

function checkChoice(name: string, value: string, choices: readonly string[]): string {
  if (choices.includes(value)) return value;
  throw new IvoaiError("USAGE", `invalid --${name} "${value}": expected one of ${choices.join(", ")}`);
}

/** One option's typed value from what parseArgs found (`raw`), its default, or undefined. */
function parseOne(
  name: string,
  spec: OptionSpec,
  raw: RawOptionValue,
  path: readonly string[],
  now: number,
): OptionValue {
  if (spec.type === "boolean") return raw === true;
  if ((spec.type === "string" || spec.type === "enum") && spec.multiple) {
    const items = splitList(raw);
    if (items.length === 0 && spec.required) throw usageError(`option "--${name}" is required`, path);
    return spec.type === "enum" ? items.map((item) => checkChoice(name, item, spec.choices)) : items;
  }
  const given = Array.isArray(raw) ? raw.at(-1) : typeof raw === "string" ? raw : undefined;
  const fallback = "default" in spec ? spec.default : undefined;
  const text = given ?? (fallback === undefined ? undefined : String(fallback));
  if (text === undefined) {
    if (spec.required) throw usageError(`option "--${name}" is required`, path);
    return undefined;
  }
  switch (spec.type) {
    case "string":
      return text;
    case "enum":
      return checkChoice(name, text, spec.choices);
    case "integer":
      return parseInteger(name, text, spec, path);
    case "duration":
      return parseDurationFlag(name, text, path, spec.max);
    case "instant":
      return parseInstant(name, text, path, now);
    case "size":
      return parseSizeFlag(name, text, spec);
  }
}

/** Every declared option's typed value; any bad value is a one-line USAGE error naming the flag. */
export function parseOptionValues(
  raw: Record<string, RawOptionValue>,
  specs: Record<string, OptionSpec>,
  path: readonly string[],
  now: number = Date.now(),
): OptionValues {
  return Object.fromEntries(
    Object.entries(specs).map(([name, spec]) => [name, parseOne(name, spec, raw[name], path, now)]),
  );
}
