// Builds the web console (Vite, into dist/console), then bundles the CLI: dist/ivoai.mjs, a small entry holding the
// runner and the command manifest (every command's name, help and flags), and dist/chunks/, the commands' code
// and the console's files, each loaded by a dynamic import when a command runs; native modules stay external.
// Splitting keeps `ivoai --version` and `ivoai hook` from compiling the whole program (Node 20 has no compile cache).
// Outputs are written to a temporary name and renamed, chunks before the entry that imports them, so a test or
// `npm pack` running at the same time never executes or packs a half-written bundle (the console too: built aside,
// embedded from there, swapped in).
import { execFile } from "node:child_process";
import { chmod, mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { build } from "esbuild";
import { build as viteBuild } from "vite";

const root = new URL("..", import.meta.url).pathname;
const pkg = JSON.parse(await readFile(new URL("../package.json", import.meta.url), "utf8"));
const distDir = path.join(root, "dist");
const outfile = path.join(distDir, "ivoai.mjs");
const chunksDir = path.join(distDir, "chunks");
const consoleDir = path.join(root, `dist/.console.${process.pid}.tmp`);

/** What every bundle shares: Node ESM, better-sqlite3 external, `require` for bundled CommonJS modules. */
const common = {
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20.19",
  // pg-native: node-postgres's optional libpq binding, which ivoai never asks for (pure-JS pg is bundled).
  // onnxruntime-node: the optional native runtime of [context.embedder] provider = "onnx", imported lazily.
  external: ["better-sqlite3", "pg-native", "onnxruntime-node"],
  define: { __IVOAI_VERSION__: JSON.stringify(pkg.version) },
  banner: {
    js: [
      "#!/usr/bin/env node",
      "import { createRequire as __ivoaiCreateRequire } from 'node:module';",
      "const require = __ivoaiCreateRequire(import.meta.url);",
    ].join("\n"),
  },
  logLevel: "warning",
};

/**
 * The command manifest of src/cli/tree.ts: bundled aside with every command module and run once, since the
 * specs are code (option lists come from the modules they configure).
 */
async function commandManifest() {
  const extractor = path.join(distDir, `.manifest.${process.pid}.mjs`);
  try {
    await build({
      ...common,
      stdin: {
        contents: [
          'import { sourceManifest } from "./src/cli/run.ts";',
          "const manifest = JSON.stringify(await sourceManifest());",
          "process.stdout.write(manifest, () => process.exit(0));",
        ].join("\n"),
        resolveDir: root,
        sourcefile: "extract-manifest.ts",
        loader: "ts",
      },
      outfile: extractor,
    });
    const run = promisify(execFile);
    const { stdout } = await run(process.execPath, [extractor], { encoding: "utf8", maxBuffer: 64 << 20 });
    return JSON.parse(stdout);
  } finally {
    await rm(extractor, { force: true });
  }
}
const manifest = commandManifest();
manifest.catch(() => {}); // awaited below; a failure is reported there

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

/** Replaces src/cli/bundled-manifest.ts (which exports undefined from source) with the extracted manifest. */
const embedManifest = {
  name: "embed-manifest",
  setup(pluginBuild) {
    pluginBuild.onLoad({ filter: /[\\/]src[\\/]cli[\\/]bundled-manifest\.ts$/ }, async () => ({
      contents: `export const BUNDLED_COMMAND_MANIFEST = JSON.parse(${JSON.stringify(JSON.stringify(await manifest))});\n`,
      loader: "js",
    }));
  },
};

// Nothing half-built is left behind: the console's temporary folder goes with a failed bundle.
try {
  const result = await build({
    ...common,
    entryPoints: { ivoai: path.join(root, "src/cli/main.ts") },
    outdir: distDir,
    entryNames: "[name]",
    chunkNames: "chunks/[name]-[hash]",
    outExtension: { ".js": ".mjs" },
    splitting: true,
    sourcemap: "linked",
    plugins: [embedConsole, embedManifest],
    write: false,
  });
  await mkdir(chunksDir, { recursive: true });
  // Maps first (each bundle's last line points at its map), then the chunks, the entry that imports them last.
  const rank = (file) => (file === outfile ? 2 : file.endsWith(".map") ? 0 : 1);
  const outputs = [...result.outputFiles].sort((a, b) => rank(a.path) - rank(b.path));
  for (const output of outputs) {
    const mode = output.path === outfile ? 0o755 : 0o644;
    const temporary = `${output.path}.${process.pid}.tmp`;
    await writeFile(temporary, output.contents, { mode });
    await chmod(temporary, mode);
    await rename(temporary, output.path);
  }
  // Chunks of older builds (their names carry their content's hash) go, but not the previous build's: a process
  // started from it a moment ago may still import its command's chunk. Another build's temporary files stay.
  const current = outputs
    .filter((output) => path.dirname(output.path) === chunksDir)
    .map((output) => path.basename(output.path));
  const listFile = path.join(chunksDir, ".build.json");
  const previousBuild = await readFile(listFile, "utf8")
    .then((text) => JSON.parse(text).files)
    .catch(() => []);
  const keep = new Set([...current, ...previousBuild, ".build.json"]);
  for (const name of await readdir(chunksDir)) {
    if (!keep.has(name) && !name.endsWith(".tmp")) await rm(path.join(chunksDir, name), { force: true });
  }
  const listTemporary = `${listFile}.${process.pid}.tmp`;
  await writeFile(listTemporary, `${JSON.stringify({ files: current })}\n`);
  await rename(listTemporary, listFile);
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
