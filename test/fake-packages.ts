// Tiny packed fake agent packages for the install tests: the bin honours --version (with a chosen exit code),
// and a postinstall records the environment it got, so a test can tell whether install scripts ran.
import { execFile } from "node:child_process";
import { promises as fs } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface PackedFake {
  file: string;
  integrity: string;
}

/** Packs `name@version` (bin `bin`) under `root`; returns the tarball and its npm integrity. */
export async function packFakeAgent(
  root: string,
  name: string,
  bin: string,
  version: string,
  versionExit = 0,
): Promise<PackedFake> {
  const src = path.join(root, "src", `${name}-${version}`);
  await fs.mkdir(path.join(src, "bin"), { recursive: true });
  await fs.writeFile(
    path.join(src, "package.json"),
    JSON.stringify({
      name,
      version,
      bin: { [bin]: `bin/${bin}.js` },
      scripts: {
        postinstall:
          "node -e \"require('fs').writeFileSync('install-env.json', JSON.stringify(process.env))\"",
      },
    }),
  );
  await fs.writeFile(
    path.join(src, "bin", `${bin}.js`),
    `#!/usr/bin/env node\nif (process.argv[2] === "--version") { console.log("${bin}-cli ${version}"); process.exit(${versionExit}); }\n`,
    { mode: 0o755 },
  );
  const out = path.join(root, "tgz");
  await fs.mkdir(out, { recursive: true });
  const { stdout } = await run("npm", ["pack", src, "--json", "--pack-destination", out], {
    env: { ...process.env, npm_config_update_notifier: "false" },
  });
  const [info] = JSON.parse(stdout) as { filename: string; integrity: string }[];
  return { file: path.join(out, info?.filename ?? ""), integrity: info?.integrity ?? "" };
}
