// A one-line progress display on a terminal's stderr; silent when stderr is not a TTY.
import { oneLine } from "../shared/terminal-text.js";

export interface Progress {
  update(text: string): void;
  done(): void;
}

export function createProgress(
  stream: NodeJS.WriteStream = process.stderr,
  enabled = stream.isTTY === true,
): Progress {
  let last = 0;
  let shown = false;
  return {
    update(raw) {
      if (!enabled) return;
      const now = Date.now();
      if (now - last < 100) return;
      last = now;
      // A pseudo-terminal may report 0 columns: assume 80 then.
      const width = Math.max(20, (stream.columns || 80) - 1);
      const text = oneLine(raw);
      stream.write(`\r\x1b[2K${text.length > width ? `${text.slice(0, width - 1)}…` : text}`);
      shown = true;
    },
    done() {
      if (enabled && shown) stream.write("\r\x1b[2K");
    },
  };
}
