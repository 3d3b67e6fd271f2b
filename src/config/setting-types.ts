// The value types of settings files: each parses once, when the file is loaded, into what the code uses
// (milliseconds, bytes), and writes back in the form people type. A bad value fails the load as
// CONFIG_INVALID naming the file and the key (server-config.ts), never later when a service starts.
import { z } from "zod";
import { formatDuration, parseDuration } from "../shared/duration.js";
import { formatSize, parseSize } from "../shared/size.js";

/** A duration typed as `90s`, `10m`, `2h` or `7d`; the code sees milliseconds. `example` shows in the error. */
export function durationSetting(example: string) {
  return z.codec(z.string(), z.number().int().positive(), {
    decode: (text, payload) => {
      try {
        return parseDuration(text);
      } catch {
        payload.issues.push({
          code: "custom",
          input: text,
          message: `'${text}' is not a duration: use a number and a unit s, m, h or d, like ${example}`,
        });
        return z.NEVER;
      }
    },
    encode: (ms) => formatDuration(ms),
  });
}

/** A size typed as a number of bytes or with a unit (`512KiB`, `4MiB`, `1G`: powers of 1024); the code sees bytes. */
export function sizeSetting() {
  return z.codec(z.union([z.number(), z.string()]), z.number().int().positive(), {
    decode: (value, payload) => {
      try {
        return parseSize(value);
      } catch (error) {
        payload.issues.push({ code: "custom", input: value, message: (error as Error).message });
        return z.NEVER;
      }
    },
    encode: (bytes) => formatSize(bytes),
  });
}
