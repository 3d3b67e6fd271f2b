#!/usr/bin/env node
// The module rules Biome cannot express (`npm run lint` runs this after `biome check`; docs/CONTRIBUTING.md):
//   layers  what a folder may import: src/shared nothing of ivoai's, src/protocol only shared, src/config only
//           shared, src/server/store only shared and config (the composition root hands it the domains), the
//           server and the client never each other, and nothing but src/cli imports src/cli;
//   doors   a folder with an index.ts is entered only through it from outside (tests may reach in), and a
//           door nobody outside uses is dead: use it or remove it.
// Usage: node scripts/lint-modules.mjs  (prints one line per violation; exit 1 if any).
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** Folder prefix → the folders under src/ it may import (besides itself). */
const LAYERS = [
  { from: "src/shared/", allow: [] },
  { from: "src/protocol/", allow: ["src/shared/"] },
  { from: "src/config/", allow: ["src/shared/"] },
  { from: "src/server/store/", allow: ["src/shared/", "src/config/"] },
  { from: "src/server/", deny: ["src/client/", "src/cli/"] },
  { from: "src/client/", deny: ["src/server/", "src/cli/"] },
];

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+"(\.[^"]+)"|import\(\s*"(\.[^"]+)"\s*\)/g;

/** Relative specifiers of `text` resolved against `file` (both repo-relative, POSIX), `.js` read as `.ts`. */
export function importsOf(file, text) {
  const found = [];
  for (const match of text.matchAll(IMPORT)) {
    const spec = match[1] ?? match[2];
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec));
    found.push(target.replace(/\.js$/, ".ts"));
  }
  return found;
}

/** Tests and benchmarks may reach past a door to what they measure. */
const isTest = (file) =>
  /\.test\.tsx?$/.test(file) ||
  /\.test-kit\.ts$/.test(file) ||
  file.startsWith("test/") ||
  file.startsWith("bench/");

function layerViolation(file, target) {
  if (!target.startsWith("src/")) return undefined;
  for (const rule of LAYERS) {
    if (!file.startsWith(rule.from) || target.startsWith(rule.from)) continue;
    if (rule.allow && !rule.allow.some((prefix) => target.startsWith(prefix)))
      return `${rule.from} may import only ${rule.allow.join(", ") || "itself"}`;
    if (rule.deny?.some((prefix) => target.startsWith(prefix)))
      return `${rule.from} may not import ${target}`;
    // The first matching rule decides (src/server/store/ before src/server/).
    return undefined;
  }
  if (target.startsWith("src/cli/") && !file.startsWith("src/cli/")) return "only src/cli imports src/cli";
  return undefined;
}

function innermostDoor(doors, target) {
  return doors
    .filter((door) => target.startsWith(`${door}/`))
    .reduce((inner, door) => (inner === undefined || door.length > inner.length ? door : inner), undefined);
}

/**
 * Every violation in `files` (repo-relative paths; `read(file)` gives a file's text), as
 * `file: message` lines.
 */
export function checkModules(files, read) {
  const doors = files.filter((file) => /\/index\.tsx?$/.test(file)).map((file) => path.posix.dirname(file));
  const doorUsed = new Map(doors.map((door) => [door, false]));
  const problems = [];
  for (const file of files) {
    for (const target of importsOf(file, read(file))) {
      const layer = layerViolation(file, target);
      if (layer !== undefined && !isTest(file)) problems.push(`${file}: imports ${target}: ${layer}`);
      const door = innermostDoor(doors, target);
      if (door === undefined || file.startsWith(`${door}/`)) continue;
      if (/\/index\.tsx?$/.test(target) && path.posix.dirname(target) === door) doorUsed.set(door, true);
      else if (!isTest(file))
        problems.push(`${file}: imports ${target} past its door: import ${door}/index.js`);
    }
  }
  for (const [door, used] of doorUsed)
    if (!used) problems.push(`${door}/index.ts: a door nobody outside ${door}/ imports: use it or remove it`);
  return problems;
}

function main() {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
  const files = execFileSync("git", ["ls-files", "-co", "--exclude-standard", "src", "test", "bench"], {
    cwd: root,
    encoding: "utf8",
  })
    .split("\n")
    .filter((file) => /\.tsx?$/.test(file));
  const present = files.filter((file) => {
    try {
      readFileSync(path.join(root, file));
      return true;
    } catch {
      return false;
    }
  });
  const problems = checkModules(present, (file) => readFileSync(path.join(root, file), "utf8"));
  for (const problem of problems) process.stderr.write(`lint-modules: ${problem}\n`);
  if (problems.length > 0) process.exit(1);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
