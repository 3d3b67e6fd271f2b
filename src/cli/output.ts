// Where commands print: data to stdout (text or --json), notes and progress to stderr.
import { redactText } from "../shared/redact.js";

export interface Output {
  /** Prints `value` as JSON with --json, else as the text `render` makes of it. */
  data<T>(value: T, render: (value: T) => string): void;
  /** A line of human text on stdout. */
  line(text: string): void;
  /** A note for the person at the terminal (stderr), redacted. */
  note(text: string): void;
}

export interface OutputOptions {
  json: boolean;
  stdout?: (text: string) => void;
  stderr?: (text: string) => void;
}

export function createOutput(options: OutputOptions): Output {
  const stdout = options.stdout ?? ((text: string) => process.stdout.write(text));
  const stderr = options.stderr ?? ((text: string) => process.stderr.write(text));
  return {
    data(value, render) {
      stdout(options.json ? `${JSON.stringify(value, null, 2)}\n` : `${render(value)}\n`);
    },
    line: (text) => stdout(`${text}\n`),
    note: (text) => stderr(`${redactText(text)}\n`),
  };
}

/** A plain aligned text table; an empty list says so instead of printing a bare header. */
export function formatTable(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
  empty = "(none)",
): string {
  if (rows.length === 0) return empty;
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? "").length)),
  );
  const format = (cells: readonly string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join("  ")
      .trimEnd();
  return [format(headers), ...rows.map(format)].join("\n");
}
