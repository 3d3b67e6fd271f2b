// The compiled install catalogue against the npm registry: every pin's integrity, bins and need for install
// scripts are what `npm view` says for that exact version (reaches registry.npmjs.org, as CI can).
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { COMPILED_CATALOGUE } from "../src/client/install/catalogue.js";
import { COMPONENT_MANIFEST } from "../src/client/install/components.js";

const run = promisify(execFile);

interface Published {
  "dist.integrity": string;
  bin: Record<string, string>;
  scripts?: Record<string, string>;
}

describe("the compiled install catalogue", () => {
  it.each(COMPILED_CATALOGUE.agents)("pins $package@$version as published", async (entry) => {
    const { stdout } = await run(
      "npm",
      ["view", `${entry.package}@${entry.version}`, "dist.integrity", "bin", "scripts", "--json"],
      { timeout: 60_000, env: { ...process.env, npm_config_update_notifier: "false" } },
    );
    const published = JSON.parse(stdout) as Published;
    expect(entry.integrity).toBe(published["dist.integrity"]);
    expect(entry.bins).toEqual(Object.keys(published.bin));
    const scripts = published.scripts ?? {};
    const hasInstallScript = ["preinstall", "install", "postinstall"].some((name) => name in scripts);
    // Allowed exactly when the package has an install script (it places the native binary).
    expect(entry.allow_scripts).toBe(hasInstallScript);
    expect(entry.tarball).toBeUndefined();
  });
});

describe("the component manifest's other pins", () => {
  const pinned = COMPONENT_MANIFEST.components.filter((entry) => entry.kind !== "agent" && entry.integrity);
  it.each(pinned)("pins $name ($package@$version) as published", async (entry) => {
    const { stdout } = await run(
      "npm",
      ["view", `${entry.package}@${entry.version}`, "dist.integrity", "--json"],
      {
        timeout: 60_000,
        env: { ...process.env, npm_config_update_notifier: "false" },
      },
    );
    expect(entry.integrity).toBe(JSON.parse(stdout));
  });

  it("pins the better-sqlite3 this package's lockfile installs", () => {
    const lock = JSON.parse(readFileSync("package-lock.json", "utf8"));
    const installed = lock.packages["node_modules/better-sqlite3"];
    const native = COMPONENT_MANIFEST.components.find((entry) => entry.name === "native-sqlite");
    expect({ version: native?.version, integrity: native?.integrity }).toEqual({
      version: installed.version,
      integrity: installed.integrity,
    });
  });
});
