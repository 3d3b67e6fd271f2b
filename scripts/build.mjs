// Builds the web console (Vite, into dist/console), then bundles the CLI into one ESM file with the console's
// files inside it; native modules stay external (they cannot be bundled).
// Outputs are written to a temporary name and renamed, so a test or `npm pack` running at the same
// time never executes or packs a half-written bundle (the console too: built aside, embedded from there, swapped in).
import { chmod, mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { build } from "esbuild";
import { build as viteBuild } from "vite";

const root = new URL("..", import.meta.url).pathname;
const pkg = JSON.parse(await readFile(new URL("../package.json", import.meta.url), "utf8"));
const outfile = new URL("../dist/ivoai.mjs", import.meta.url).pathname;
const consoleDir = path.join(root, `dist/.console.${process.pid}.tmp`);

// Always React's production build, whatever NODE_ENV the caller has (vitest runs this with NODE_ENV=test): the
// development build is larger and would carry this checkout's absolute source paths to every browser.
const callerNodeEnv = process.env.NODE_ENV;
process.env.NODE_ENV = "production";
try {
  await viteBuild({
    configFile: path.join(root, "web/vite.config.ts"),
    mode: "production",
    logLevel: "warn",
    build: { outDir: consoleDir, emptyOutDir: true },
  });
} catch (error) {
  await rm(consoleDir, { recursive: true, force: true });
  throw error;
} finally {
  if (callerNodeEnv === undefined) delete process.env.NODE_ENV;
  else process.env.NODE_ENV = callerNodeEnv;
}

/** Files embedded as text (JSON-escaped, about their own size); anything else is embedded as base64. */
const TEXT_FILES = /\.(html|m?js|css|json|svg|txt)$/i;

/** dist/console as {path → {encoding, body}}; the gateway derives each file's media type from its name. */
async function consoleAssets() {
  const assets = {};
  const entries = await readdir(consoleDir, { recursive: true, withFileTypes: true });
  for (const entry of entries.filter((e) => e.isFile()).sort((a, b) => a.name.localeCompare(b.name))) {
    const file = path.join(entry.parentPath ?? entry.path, entry.name);
    const name = path.relative(consoleDir, file).split(path.sep).join("/");
    const text = TEXT_FILES.test(name);
    assets[name] = {
      encoding: text ? "utf8" : "base64",
      body: (await readFile(file)).toString(text ? "utf8" : "base64"),
    };
  }
  if (!assets["index.html"]) throw new Error(`${consoleDir} has no index.html: the console build failed`);
  return assets;
}

/** Replaces src/server/console/bundled-assets.ts (which exports undefined from source) with the built files. */
const embedConsole = {
  name: "embed-console",
  setup(pluginBuild) {
    pluginBuild.onLoad({ filter: /[\\/]src[\\/]server[\\/]console[\\/]bundled-assets\.ts$/ }, async () => ({
      contents: `export const BUNDLED_CONSOLE_ASSETS = ${JSON.stringify(await consoleAssets())};\n`,
      loader: "js",
    }));
  },
};

// Nothing half-built is left behind: the console's temporary folder goes with a failed bundle.
try {
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
    plugins: [embedConsole],
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
  // dist/console for running from source (the gateway falls back to it when nothing is bundled).
  // Another build may swap its own in between our two renames: then move that one aside too and try again.
  const finalConsole = path.join(root, "dist/console");
  const previous = path.join(root, `dist/.console.${process.pid}.old`);
  for (let attempt = 1; ; attempt++) {
    await rm(previous, { recursive: true, force: true });
    await rename(finalConsole, previous).catch((error) => {
      if (error.code !== "ENOENT") throw error;
    });
    try {
      await rename(consoleDir, finalConsole);
      break;
    } catch (error) {
      if (attempt === 5 || (error.code !== "ENOTEMPTY" && error.code !== "EEXIST")) throw error;
    }
  }
  await rm(previous, { recursive: true, force: true });
} catch (error) {
  await rm(consoleDir, { recursive: true, force: true });
  throw error;
}
