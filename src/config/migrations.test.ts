import { promises as fs } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { parse as parseToml } from "smol-toml";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseClientConfig } from "./client-config.js";
import { DATA_VERSION, MIGRATIONS, migrationPath, probeDataVersion } from "./migrations.js";
import { parseSecrets } from "./secrets.js";

let dir: string;
let files: { configFile: string; secretsFile: string };
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "ivoai-migrations-"));
  files = { configFile: path.join(dir, "config.toml"), secretsFile: path.join(dir, "secrets.json") };
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const legacyConfig =
  'extra = "kept"\n\n[server]\nurl = "https://k.example"\ncustom = 7\n\n[other.table]\nx = [1, 2]\n';

describe("data migrations", () => {
  it("are an ordered chain from 1 to the current version", () => {
    expect(MIGRATIONS.map((step) => step.from)).toEqual(MIGRATIONS.map((_, index) => index + 1));
    expect(migrationPath(1, DATA_VERSION)).toHaveLength(DATA_VERSION - 1);
    expect(() => migrationPath(DATA_VERSION + 1, DATA_VERSION)).toThrow(/newer/);
  });

  it("move legacy config and secrets up and back down, keeping unknown TOML fields both ways", async () => {
    await fs.writeFile(files.configFile, legacyConfig);
    await fs.writeFile(files.secretsFile, JSON.stringify({ schema: 1, server: { credential: "c1" } }));
    expect(await probeDataVersion(files)).toBe(1);
    for (const step of migrationPath(1, DATA_VERSION)) await step.up(files);
    expect(await probeDataVersion(files)).toBe(DATA_VERSION);
    const up = parseClientConfig(await fs.readFile(files.configFile, "utf8"), "config.toml");
    expect(up.migrated).toBe(false);
    expect(up.profiles[0]).toMatchObject({ id: "srv_legacy_default", url: "https://k.example" });
    expect(up.raw).toMatchObject({ extra: "kept", other: { table: { x: [1, 2] } } });
    expect(parseSecrets(JSON.parse(await fs.readFile(files.secretsFile, "utf8")))).toMatchObject({
      migrated: false,
      secrets: { servers: { srv_legacy_default: { credential: "c1" } } },
    });
    expect((await fs.stat(files.secretsFile)).mode & 0o777).toBe(0o600);

    for (const step of migrationPath(1, DATA_VERSION).reverse()) await step.down(files);
    expect(await probeDataVersion(files)).toBe(1);
    const down = { raw: parseToml(await fs.readFile(files.configFile, "utf8")) };
    expect(down.raw).toMatchObject({ extra: "kept", server: { custom: 7 }, other: { table: { x: [1, 2] } } });
    expect(down.raw.servers).toBeUndefined();
    expect(JSON.parse(await fs.readFile(files.secretsFile, "utf8"))).toEqual({
      schema: 1,
      server: { credential: "c1" },
    });
  });

  it("treat absent files as current and refuse secrets newer than this build", async () => {
    expect(await probeDataVersion(files)).toBe(DATA_VERSION);
    await fs.writeFile(files.secretsFile, JSON.stringify({ schema: 9, servers: {} }));
    await expect(probeDataVersion(files)).rejects.toThrow(/newer than this ivoai understands/);
  });
});
