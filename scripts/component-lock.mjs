#!/usr/bin/env node
// Writes the full lock a lock-installed component (manifest/components.json, method "npm-ci-lock") is installed
// from: `npm install --package-lock-only` of exactly PACKAGE@VERSION in a scratch folder, then every optional
// dependency the registry does not publish is dropped from its dependents (npm records them as wanted but has
// no entry to give: `npm ci` refuses such a lock). Every PACKAGE@VERSION is a direct, exact dependency, so a
// reviewed inner package (ruflo's @claude-flow/cli) is pinned too, not resolved to its newest match.
// Prints the lock's SHA-256 for the manifest.
//   node scripts/component-lock.mjs NAME PACKAGE@VERSION...   (ruflo ruflo@3.38.12 @claude-flow/cli@3.38.12)
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const [name, ...specs] = process.argv.slice(2);
const pins = specs.map((spec) => /^(@?[^@]+)@(\d+\.\d+\.\d+)$/.exec(spec));
if (!name || pins.length === 0 || pins.some((pin) => !pin)) {
  process.stderr.write("usage: node scripts/component-lock.mjs NAME PACKAGE@EXACT_VERSION...\n");
  process.exit(2);
}
const scratch = mkdtempSync(path.join(tmpdir(), "ivoai-lock-"));
try {
  const manifest = {
    name: `ivoai-component-${name}`,
    private: true,
    dependencies: Object.fromEntries(pins.map((pin) => [pin[1], pin[2]])),
  };
  const manifestText = `${JSON.stringify(manifest, null, 2)}\n`;
  writeFileSync(path.join(scratch, "package.json"), manifestText);
  execFileSync(
    "npm",
    ["install", "--package-lock-only", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"],
    { cwd: scratch, stdio: ["ignore", "inherit", "inherit"], env: { ...process.env, HOME: scratch } },
  );
  const lock = JSON.parse(readFileSync(path.join(scratch, "package-lock.json"), "utf8"));
  const present = new Set(Object.keys(lock.packages).map((key) => key.split("node_modules/").at(-1)));
  const dropped = new Set();
  for (const entry of Object.values(lock.packages)) {
    for (const dep of Object.keys(entry.optionalDependencies ?? {})) {
      if (present.has(dep)) continue;
      delete entry.optionalDependencies[dep];
      dropped.add(dep);
    }
    if (entry.optionalDependencies && Object.keys(entry.optionalDependencies).length === 0)
      delete entry.optionalDependencies;
  }
  const out = path.resolve("manifest/locks", name);
  mkdirSync(out, { recursive: true });
  const lockText = `${JSON.stringify(lock, null, 2)}\n`;
  writeFileSync(path.join(out, "package.json"), manifestText);
  writeFileSync(path.join(out, "package-lock.json"), lockText);
  const sha = (text) => createHash("sha256").update(text).digest("hex");
  process.stdout.write(
    `${JSON.stringify(
      {
        lock: path.relative(process.cwd(), path.join(out, "package-lock.json")),
        packages: Object.keys(lock.packages).length - 1,
        dropped_unpublished_optional: [...dropped].sort(),
        package_json_sha256: sha(manifestText),
        lock_sha256: sha(lockText),
      },
      null,
      2,
    )}\n`,
  );
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
