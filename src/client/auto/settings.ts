// AUTO's settings from the client's config.toml `[auto]` table, with the defaults the issue names.
import { promises as fs } from "node:fs";
import { parse as parseToml } from "smol-toml";
import { z } from "zod";
import { errnoCode, IvoaiError } from "../../shared/errors.js";
import { DEFAULT_WORKERS, EXECUTORS, MAX_WORKERS } from "./contracts.js";

export const autoSettingsSchema = z
  .object({
    planner: z.enum(EXECUTORS).default("codex"),
    workers: z.number().int().min(1).max(MAX_WORKERS).default(DEFAULT_WORKERS),
    /** A window at or above 100 − headroom percent admits no new primary or worker on that executor. */
    quota_headroom_percent: z.number().min(0).max(90).default(10),
    /** Seconds one executor turn may take before its process group is ended. */
    turn_timeout_sec: z
      .number()
      .int()
      .min(10)
      .max(24 * 3600)
      .default(1800),
    /** Tasks whose estimated cost is below this run in the primary (delegating them is uneconomic). */
    min_worker_tokens: z.number().int().min(0).max(1_000_000).default(4000),
    /** "auto": Ruflo when installed (its admission then mandatory), none when not; "ruflo": required. */
    coordinator: z.enum(["auto", "none", "ruflo"]).default("auto"),
    /** While nothing else happens, a progress line (heartbeat event) this often, in seconds. */
    progress_interval_sec: z.number().int().min(1).max(3600).default(60),
  })
  .strict();
export type AutoSettings = z.infer<typeof autoSettingsSchema>;

export async function readAutoSettings(configFile: string): Promise<AutoSettings> {
  let raw: Record<string, unknown> = {};
  try {
    raw = parseToml(await fs.readFile(configFile, "utf8")) as Record<string, unknown>;
  } catch (error) {
    if (errnoCode(error) !== "ENOENT") {
      throw new IvoaiError(
        "CONFIG_INVALID",
        `${configFile}: ${(error as Error).message.split("\n")[0] ?? "unreadable"}`,
      );
    }
  }
  const parsed = autoSettingsSchema.safeParse(raw.auto ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new IvoaiError(
      "CONFIG_INVALID",
      `${configFile}: [auto] ${issue?.path.join(".") || ""}: ${issue?.message ?? "invalid"}`.replace(
        " : ",
        ": ",
      ),
    );
  }
  return parsed.data;
}
