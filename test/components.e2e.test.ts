// `ivoai components` on the built binary: every manifest entry, an agent found where a launch would find it,
// the bundled SQLite loaded, unpinned entries with their reason.
import { chmod, mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMPONENT_MANIFEST } from "../src/client/install/components.js";
import { runIvoai, tempDir } from "./helpers.js";

let dir: { dir: string; cleanup(): Promise<void> };
beforeAll(async () => {
  dir = await tempDir("ivoai-components-");
});
afterAll(() => dir?.cleanup());

describe("ivoai components", () => {
  it("lists every manifest entry with what this machine has of it", async () => {
    const bin = path.join(dir.dir, "bin");
    await mkdir(bin, { recursive: true });
    await writeFile(path.join(bin, "codex"), "#!/bin/sh\necho codex-cli 0.171.0\n");
    await chmod(path.join(bin, "codex"), 0o755);
    const env = {
      HOME: dir.dir,
      XDG_CONFIG_HOME: path.join(dir.dir, "config"),
      XDG_DATA_HOME: path.join(dir.dir, "data"),
      PATH: `${bin}:/usr/bin:/bin`,
    };
    const result = await runIvoai(["components", "--json"], { env, timeoutMs: 60_000 });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const rows = JSON.parse(result.stdout) as {
      name: string;
      version: string | null;
      installed: string;
      found: string | null;
      note?: string;
    }[];
    expect(rows.map((row) => row.name)).toEqual(COMPONENT_MANIFEST.components.map((entry) => entry.name));
    const byName = Object.fromEntries(rows.map((row) => [row.name, row]));
    expect(byName.codex).toMatchObject({
      installed: "yes",
      found: path.join(bin, "codex"),
      version: "0.171.0",
    });
    expect(byName.claude).toMatchObject({ installed: "no", found: null });
    expect(byName["native-sqlite"]?.installed).toBe("yes");
    expect(byName["native-sqlite"]?.found).toMatch(/^SQLite \d+\.\d+/);
    expect(byName.ruflo).toMatchObject({ version: "3.38.12", installed: "no" });
    for (const name of ["headroom", "caveman", "tei"]) {
      expect(byName[name]?.version).toBeNull();
      expect(byName[name]?.note).toMatch(/not pinned/);
    }
    const text = await runIvoai(["components"], { env, timeoutMs: 60_000 });
    expect(text.stdout).toMatch(/^COMPONENT +KIND +VERSION +METHOD/);
    expect(text.stdout).toContain("tei: not pinned");
  });
});
