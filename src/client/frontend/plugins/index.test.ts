import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { pluginConfig, pluginFiles, SERVER_PLUGIN_FILE, TUI_PLUGIN_FILE, writePluginFiles } from "./index.js";

const endpoint = { statusUrl: "http://127.0.0.1:4567/status", statusTokenEnv: "IVOAI_STATUS_TOKEN" };

describe("pluginFiles", () => {
  it("bakes the endpoint and the token's variable name in, never a token", () => {
    const files = pluginFiles(endpoint);
    expect(files.map((file) => file.name)).toEqual([SERVER_PLUGIN_FILE, TUI_PLUGIN_FILE]);
    const tui = files[1]?.content ?? "";
    expect(tui).toContain('"http://127.0.0.1:4567/status"');
    expect(tui).toContain("process.env[TOKEN_ENV]");
    expect(tui).toContain('"IVOAI_STATUS_TOKEN"');
    expect(files[0]?.content).toContain('const PROVIDER = "ivoai"');
  });

  it("refuses an endpoint that is not loopback http, a bad variable name or provider id", () => {
    expect(() => pluginFiles({ ...endpoint, statusUrl: "http://example.com/status" })).toThrow(
      /127\.0\.0\.1/,
    );
    expect(() => pluginFiles({ ...endpoint, statusUrl: "https://127.0.0.1:1/status" })).toThrow(
      /127\.0\.0\.1/,
    );
    expect(() => pluginFiles({ ...endpoint, statusUrl: "http://u:p@127.0.0.1:1/status" })).toThrow(
      /127\.0\.0\.1/,
    );
    expect(() => pluginFiles({ ...endpoint, statusTokenEnv: 'X"; evil' })).toThrow(/variable name/);
    expect(() => pluginFiles(endpoint, 'ivoai"')).toThrow(/provider id/);
  });
});

describe("writePluginFiles and pluginConfig", () => {
  it("writes private files that the config fragments point at by file URL", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "ivoai-plugins-"));
    try {
      const files = pluginFiles(endpoint);
      await writePluginFiles(dir, files);
      const config = pluginConfig(dir);
      const server = fileURLToPath(config.opencode.plugin[0] ?? "");
      const tui = fileURLToPath(config.tui.plugin[0] ?? "");
      expect(await readFile(server, "utf8")).toBe(files[0]?.content);
      expect(await readFile(tui, "utf8")).toBe(files[1]?.content);
      expect((await stat(tui)).mode & 0o777).toBe(0o600);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
