// Bundles the CLI into one ESM file; native modules stay external (they cannot be bundled).
import { chmod, readFile } from "node:fs/promises";
import { build } from "esbuild";

const pkg = JSON.parse(await readFile(new URL("../package.json", import.meta.url), "utf8"));
const outfile = new URL("../dist/ivoai.mjs", import.meta.url).pathname;

await build({
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
});
await chmod(outfile, 0o755);
