// Where commands print: data to stdout (text or --json), notes and progress to stderr.
// Everything printed passes through terminalText/terminalJson: no command can forget to neutralise untrusted text.
import { redactText } from "../shared/redact.js";
import { oneLine, terminalJson, terminalText } from "../shared/terminal-text.js";

export interface Output {
  /** Prints `value` as JSON with --json (the exact value), else as the text `render` makes of it, control characters escaped. */
  data<T>(value: T, render: (value: T) => string): void;
  /** A line of human text on stdout. */
  line(text: string): void;
  /** One JSON Lines record on stdout: compact JSON on one line (streams such as `auto --json`). */
  record(value: unknown): void;
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
      stdout(
        options.json
          ? `${terminalJson(JSON.stringify(value, null, 2))}\n`
          : `${terminalText(render(value), { multiline: true })}\n`,
      );
    },
    line: (text) => stdout(`${terminalText(text, { multiline: true })}\n`),
    record: (value) => stdout(`${terminalJson(JSON.stringify(value))}\n`),
    note: (text) => stderr(`${terminalText(redactText(text), { multiline: true })}\n`),
  };
}

/** A plain aligned text table; an empty list says so instead of printing a bare header. A cell stays on its line. */
export function formatTable(
  headers: readonly string[],
  cells: readonly (readonly string[])[],
  empty = "(none)",
): string {
  if (cells.length === 0) return empty;
  const rows = cells.map((row) => row.map(oneLine));
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? "").length)),
  );
  const format = (row: readonly string[]) =>
    row
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join("  ")
      .trimEnd();
  return [format(headers), ...rows.map(format)].join("\n");
}
