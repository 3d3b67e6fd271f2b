import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isIvoaiError } from "../shared/errors.js";
import { loadServerConfig, parseServerConfig, saveServerConfig } from "./server-config.js";

const base = '[server]\npublic_url = "http://127.0.0.1:8787"\n';
const dir = mkdtempSync(path.join(tmpdir(), "ivoai-config-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The error parsing `text` raises (the test fails if it parses). */
function refusal(text: string): { code: string; message: string } {
  try {
    parseServerConfig(text, "/etc/ivoai/server.toml");
  } catch (error) {
    if (isIvoaiError(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error(`parsed: ${text}`);
}

describe("server settings", () => {
  it("parse every duration and size once, at load, into milliseconds and bytes", () => {
    const config = parseServerConfig(base, "server.toml");
    expect(config.oauth.refresh_family_ttl).toBe(90 * 86_400_000);
    expect(config.memory.approval_ttl).toBe(7 * 86_400_000);
    expect(config.memory.sweep_interval).toBe(60_000);
    expect(config.enrollment.default_ttl).toBe(600_000);
    expect(config.console).toEqual({ idle_timeout: 30 * 60_000, absolute_timeout: 12 * 3_600_000 });
    expect(config.limits.max_body_bytes).toBe(4 * 1024 * 1024);
    expect(config.context.max_bytes).toBe(4 * 1024 ** 3);
    const set = parseServerConfig(
      `${base}[limits]\nmax_body_bytes = "512KiB"\n[memory]\napproval_ttl = "2d"\n[oauth]\nrefresh_family_ttl = "30d"\n`,
      "server.toml",
    );
    expect([set.limits.max_body_bytes, set.memory.approval_ttl, set.oauth.refresh_family_ttl]).toEqual([
      524_288,
      2 * 86_400_000,
      30 * 86_400_000,
    ]);
    // A number of bytes, as earlier releases wrote, still reads.
    expect(
      parseServerConfig(`${base}[limits]\nmax_body_bytes = 1048576\n`, "s.toml").limits.max_body_bytes,
    ).toBe(1_048_576);
  });

  it("refuses a bad value of any duration or size key as CONFIG_INVALID naming the file and the key", () => {
    for (const [table, key, value] of [
      ["memory", "approval_ttl", '"7 days"'],
      ["memory", "sweep_interval", '"often"'],
      ["enrollment", "default_ttl", '"10"'],
      ["oauth", "refresh_family_ttl", '"forever"'],
      ["console", "idle_timeout", '"0m"'],
      ["console", "absolute_timeout", "12"],
      ["limits", "max_body_bytes", '"4 megabytes"'],
      ["context", "max_bytes", "0"],
    ]) {
      const { code, message } = refusal(`${base}[${table}]\n${key} = ${value}\n`);
      expect(code, `${table}.${key}`).toBe("CONFIG_INVALID");
      expect(message, `${table}.${key}`).toMatch(
        new RegExp(`^/etc/ivoai/server\\.toml: ${table}\\.${key}: `),
      );
    }
    expect(refusal(`${base}[memory]\napproval_ttl = "7 days"\n`).message).toBe(
      "/etc/ivoai/server.toml: memory.approval_ttl: '7 days' is not a duration: use a number and a unit s, m, h or d, like 7d",
    );
  });

  it("writes settings back as people type them, and reads them back the same", async () => {
    const file = path.join(dir, "server.toml");
    const config = parseServerConfig(`${base}[memory]\napproval_ttl = "36h"\n`, file);
    await saveServerConfig(file, config);
    const text = readFileSync(file, "utf8");
    expect(text).toContain('approval_ttl = "36h"');
    expect(text).toContain('max_body_bytes = "4MiB"');
    expect(text).toContain('refresh_family_ttl = "90d"');
    expect(await loadServerConfig(file)).toEqual(config);
  });
});
