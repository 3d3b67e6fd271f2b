// Bundles the CLI into one ESM file; native modules stay external (they cannot be bundled).
// Outputs are written to a temporary name and renamed, so a test or `npm pack` running at the same
// time never executes or packs a half-written bundle.
import { chmod, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { build } from "esbuild";

const pkg = JSON.parse(await readFile(new URL("../package.json", import.meta.url), "utf8"));
const outfile = new URL("../dist/ivoai.mjs", import.meta.url).pathname;

const result = await build({
  entryPoints: [new URL("../src/cli/main.ts", import.meta.url).pathname],
  outfile,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20.19",
  sourcemap: "linked",
  external: ["better-sqlite3"],
  define: { __IVOAI_VERSION__: JSON.stringify(pkg.version) },
  banner: {
    js: [
      "#!/usr/bin/env node",
      "import { createRequire as __ivoaiCreateRequire } from 'node:module';",
      "const require = __ivoaiCreateRequire(import.meta.url);",
    ].join("\n"),
  },
  logLevel: "warning",
  write: false,
});
await mkdir(path.dirname(outfile), { recursive: true });
// The map first: the bundle's last line points at it.
const outputs = [...result.outputFiles].sort((a) => (a.path === outfile ? 1 : -1));
for (const output of outputs) {
  const temporary = `${output.path}.${process.pid}.tmp`;
  await writeFile(temporary, output.contents, { mode: output.path === outfile ? 0o755 : 0o644 });
  await chmod(temporary, output.path === outfile ? 0o755 : 0o644);
  await rename(temporary, output.path);
}
