// `npm run release [-- --out DIR]`: packs the release tarball (prepack builds dist/) into release/, writes the
// skill bundle beside it (ivoai-memory-context.zip, the repository's skills/ directory: scripts/skills.mjs) and
// SHA256SUMS for both in sha256sum's format, so `sha256sum -c SHA256SUMS` checks the download.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { skillZip } from "./skills.mjs";

const root = new URL("..", import.meta.url).pathname;
let values;
try {
  ({ values } = parseArgs({ options: { out: { type: "string" }, help: { type: "boolean", short: "h" } } }));
} catch (error) {
  process.stderr.write(`release: ${error.message}\n`);
  process.exit(2);
}
if (values.help) {
  process.stdout.write("usage: npm run release [-- --out DIR]   (default DIR: release/)\n");
  process.exit(0);
}
const out = path.resolve(values.out ?? path.join(root, "release"));
const pkg = JSON.parse(await readFile(path.join(root, "package.json"), "utf8"));
const tarball = `${pkg.name}-${pkg.version}.tgz`;

// The skill first: a stale skills/ directory stops the release before the slow pack.
let skill;
try {
  skill = await skillZip(root);
} catch (error) {
  process.stderr.write(`release: ${error.message}\n`);
  process.exit(1);
}
await mkdir(out, { recursive: true });
await rm(path.join(out, tarball), { force: true });
// Under `npm run`, npm_execpath is the npm that runs us; otherwise the npm on PATH.
const npm = process.env.npm_execpath
  ? [process.execPath, process.env.npm_execpath]
  : [process.platform === "win32" ? "npm.cmd" : "npm"];
// --loglevel=warn: npm pack lists every packed file as an `npm notice` line (about 200); warnings and errors stay.
const packed = spawnSync(npm[0], [...npm.slice(1), "pack", "--loglevel=warn", "--pack-destination", out], {
  cwd: root,
  stdio: ["ignore", "ignore", "inherit"],
  env: { ...process.env, npm_config_loglevel: "warn" },
});
if (packed.status !== 0) {
  process.stderr.write(`release: npm pack failed (exit ${packed.status ?? packed.signal})\n`);
  process.exit(1);
}

await writeFile(path.join(out, `${skill.name}.tmp`), skill.data);
await rename(path.join(out, `${skill.name}.tmp`), path.join(out, skill.name));

const sha256 = (data) => createHash("sha256").update(data).digest("hex");
const lines = [
  `${sha256(await readFile(path.join(out, tarball)))}  ${tarball}`,
  `${sha256(skill.data)}  ${skill.name}`,
].join("\n");
const sums = path.join(out, "SHA256SUMS");
await writeFile(`${sums}.tmp`, `${lines}\n`);
await rename(`${sums}.tmp`, sums);
process.stdout.write(`${path.join(out, tarball)}\n${path.join(out, skill.name)}\n${lines}\n`);
