#!/usr/bin/env node
// `npm run skills [-- --check]`: writes skills/ivoai-memory-context/ from src/protocol/skill-bundle.ts, the one
// source of the skill (the Web MCP skill serves the same text), or with --check lists what is stale and exits 1.
// The release zips the directory only when it is up to date (scripts/release.mjs).
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { build } from "esbuild";
import { zipStored } from "./zip.mjs";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/**
 * The skill as the code writes it: its name and files (path → text), from src/protocol/skill-bundle.ts bundled
 * with esbuild (a script cannot import TypeScript on Node 20).
 * @returns {Promise<{ name: string, files: Record<string, string> }>}
 */
export async function skillFromCode(root = ROOT) {
  const bundled = await build({
    entryPoints: [path.join(root, "src/protocol/skill-bundle.ts")],
    bundle: true,
    write: false,
    format: "esm",
    platform: "node",
    logLevel: "silent",
  });
  const source = bundled.outputFiles[0].text;
  const module = await import(`data:text/javascript;base64,${Buffer.from(source).toString("base64")}`);
  return {
    name: module.SKILL_NAME,
    files: Object.fromEntries(module.SKILL_FILES.map((file) => [file.path, file.content])),
  };
}

/** Every file under `dir` (POSIX paths relative to it, sorted), or none when it does not exist. */
async function filesUnder(dir) {
  let entries;
  try {
    entries = await readdir(dir, { recursive: true, withFileTypes: true });
  } catch (error) {
    if (error.code === "ENOENT") return {};
    throw error;
  }
  const files = {};
  for (const entry of entries.filter((e) => e.isFile())) {
    const full = path.join(entry.parentPath ?? entry.path, entry.name);
    files[path.relative(dir, full).split(path.sep).join("/")] = await readFile(full, "utf8");
  }
  return files;
}

/** The directory's paths that differ from the code's (missing, changed or extra), sorted. */
export async function staleSkillFiles(root = ROOT) {
  const skill = await skillFromCode(root);
  const onDisk = await filesUnder(path.join(root, "skills", skill.name));
  const names = new Set([...Object.keys(skill.files), ...Object.keys(onDisk)]);
  return [...names].filter((name) => skill.files[name] !== onDisk[name]).sort();
}

/** Writes the skill's directory from the code, removing files the code no longer has. */
export async function writeSkillDir(root = ROOT) {
  const skill = await skillFromCode(root);
  const dir = path.join(root, "skills", skill.name);
  for (const name of Object.keys(await filesUnder(dir))) {
    if (!(name in skill.files)) await rm(path.join(dir, name));
  }
  for (const [name, content] of Object.entries(skill.files)) {
    await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await writeFile(path.join(dir, name), content);
  }
  return dir;
}

/**
 * The release's `<name>.zip` of the committed directory: the folder `<name>/` with its files, as Claude imports a
 * custom skill. Throws when the directory is stale, so the zip is what the code and skills/get say.
 */
export async function skillZip(root = ROOT) {
  const stale = await staleSkillFiles(root);
  if (stale.length > 0) {
    throw new Error(`skills/ is out of date (${stale.join(", ")}): run npm run skills`);
  }
  const skill = await skillFromCode(root);
  const files = await filesUnder(path.join(root, "skills", skill.name));
  const entries = Object.fromEntries(
    Object.entries(files).map(([name, text]) => [`${skill.name}/${name}`, text]),
  );
  return { name: `${skill.name}.zip`, data: zipStored(entries) };
}

async function main() {
  let values;
  try {
    ({ values } = parseArgs({
      options: { check: { type: "boolean" }, help: { type: "boolean", short: "h" } },
    }));
  } catch (error) {
    process.stderr.write(`skills: ${error.message}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(
      "usage: npm run skills [-- --check]   (writes or checks skills/ivoai-memory-context/)\n",
    );
    return 0;
  }
  if (values.check) {
    const stale = await staleSkillFiles();
    for (const name of stale) process.stderr.write(`skills: stale: ${name} (run npm run skills)\n`);
    return stale.length > 0 ? 1 : 0;
  }
  process.stdout.write(`${await writeSkillDir()}\n`);
  return 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) process.exitCode = await main();
