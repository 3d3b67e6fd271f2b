// The release path a user takes: `npm run release` packs the tarball and SHA256SUMS, `npm install -g`
// puts it in an empty prefix (better-sqlite3 compiled there), and that copy works with no checkout around.
// Then the same install run by another Node.js ABI must say what to rebuild, and doctor must say so too.
import { execFile } from "node:child_process";
import { readdir, readFile, realpath } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunResult, tempDir } from "./helpers.js";
import { ensureNode, NODE22_VERSION, NODE24_VERSION } from "./npm-tools.js";

const run = promisify(execFile);
const REPO = path.resolve(".");

interface DoctorJson {
  status: string;
  components: {
    component: string;
    healthy: string;
    version: string | null;
    path: string | null;
    detail: string;
  }[];
  matrix: { component: string; healthy: string; detail: string }[];
}

describe("release tarball installed with npm install -g", () => {
  let work: Awaited<ReturnType<typeof tempDir>>;
  let version: string;
  let prefix: string;
  let packageDir: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    work = await tempDir("ivoai-install-");
    version = (JSON.parse(await readFile(path.join(REPO, "package.json"), "utf8")) as { version: string })
      .version;
    const releaseDir = path.join(work.dir, "release");
    const released = await run(process.execPath, ["scripts/release.mjs", "--out", releaseDir], {
      cwd: REPO,
      timeout: 300_000,
    });
    // The tarball's and the skill bundle's paths and their checksum lines, and no `npm notice` line per packed
    // file on stderr.
    expect(released.stdout.split("\n")).toHaveLength(5);
    expect(released.stderr).not.toMatch(/npm notice/);
    // The checksum lines are in sha256sum's own format.
    const checked = await run("sha256sum", ["-c", "SHA256SUMS"], { cwd: releaseDir });
    expect(checked.stdout).toBe(`ivoai-${version}.tgz: OK\nivoai-memory-context.zip: OK\n`);

    prefix = path.join(work.dir, "prefix");
    const started = Date.now();
    // What the README tells users to run; npm 11 asks for the install script of better-sqlite3 by name.
    await run(
      "npm",
      [
        "install",
        "--global",
        "--prefix",
        prefix,
        "--allow-scripts=better-sqlite3",
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
        path.join(releaseDir, `ivoai-${version}.tgz`),
      ],
      { cwd: work.dir, timeout: 1_200_000, maxBuffer: 64 * 1024 * 1024 },
    );
    process.stderr.write(`install.e2e: npm install -g took ${Math.round((Date.now() - started) / 1000)} s\n`);
    packageDir = path.join(prefix, "lib", "node_modules", "ivoai");

    const home = path.join(work.dir, "home");
    env = {
      // Only the prefix's bin and the system: nothing of the checkout is reachable.
      PATH: [path.join(prefix, "bin"), path.dirname(process.execPath), "/usr/bin", "/bin"].join(
        path.delimiter,
      ),
      HOME: home,
      XDG_CONFIG_HOME: path.join(home, ".config"),
      XDG_DATA_HOME: path.join(home, ".local", "share"),
      XDG_STATE_HOME: path.join(home, ".local", "state"),
      XDG_CACHE_HOME: path.join(home, ".cache"),
      LANG: "C.UTF-8",
    };
  }, 1_500_000);

  afterAll(async () => {
    await work?.cleanup();
  });

  /** Runs `ivoai` by name from PATH (or through `node` when given), in a folder outside the checkout. */
  async function ivoai(args: readonly string[], node?: string): Promise<RunResult> {
    const [file, argv] = node ? [node, [path.join(prefix, "bin", "ivoai"), ...args]] : ["ivoai", [...args]];
    try {
      const { stdout, stderr } = await run(file, argv, { cwd: work.dir, env, timeout: 120_000 });
      return { code: 0, signal: null, stdout, stderr };
    } catch (error) {
      const failed = error as {
        code?: unknown;
        signal?: NodeJS.Signals | null;
        stdout?: string;
        stderr?: string;
      };
      if (typeof failed.code !== "number") throw error;
      return {
        code: failed.code,
        signal: failed.signal ?? null,
        stdout: failed.stdout ?? "",
        stderr: failed.stderr ?? "",
      };
    }
  }

  it("holds the bundle and only the native dependency", async () => {
    expect((await readdir(packageDir)).sort()).toEqual([
      "README.md",
      "dist",
      "node_modules",
      "package.json",
      "skills",
    ]);
    const modules = await readdir(path.join(packageDir, "node_modules"));
    expect(modules).toContain("better-sqlite3");
    for (const bundled of ["hono", "zod", "@modelcontextprotocol", "smol-toml", "yaml"]) {
      expect(modules).not.toContain(bundled);
    }
  });

  it("the README's rebuild recipe finds the installed package from the ivoai on PATH", async () => {
    const recipe = 'cd "$(dirname "$(readlink -f "$(command -v ivoai)")")/.." && pwd -P';
    const { stdout } = await run("sh", ["-c", recipe], { cwd: work.dir, env });
    expect(stdout.trim()).toBe(await realpath(packageDir));
  });

  it("prints the package version", async () => {
    const result = await ivoai(["--version"]);
    expect(result).toMatchObject({ code: 0, stdout: `${version}\n` });
  });

  it("runs the demo search end to end", async () => {
    const result = await ivoai(["demo", "--json"]);
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as {
      search: { structured: { status: string; data: { results: { path: string }[] } } };
    };
    expect(report.search.structured.status).toBe("SUCCESS");
    expect(report.search.structured.data.results[0]?.path).toBe("runbooks/deploy-billing.md");
  });

  it("doctor reports the native SQLite module healthy", async () => {
    const result = await ivoai(["doctor", "--json"]);
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as DoctorJson;
    expect(report.status).not.toBe("fail");
    const native = report.components.find((row) => row.component === "native-sqlite");
    expect(native).toMatchObject({ healthy: "yes", version: expect.stringMatching(/^3\.\d+\.\d+$/) });
    expect(native?.path).toBe(packageDir);
    const self = report.components.find((row) => row.component === "ivoai");
    expect(self?.version).toBe(version);
    // The package ships skills/: the installed doctor finds the SKILL.md skills/get serves.
    expect(report.matrix.find((row) => row.component === "skills")).toMatchObject({
      healthy: "yes",
      detail: path.join(packageDir, "skills", "ivoai-memory-context", "SKILL.md"),
    });
  });

  // Every supported LTS besides the one running the suite: the tree built for this Node.js, run by that one.
  const otherVersions = [NODE22_VERSION, NODE24_VERSION].filter(
    (pin) => pin.split(".")[0] !== process.versions.node.split(".")[0],
  );

  describe.each(otherVersions)("run by Node.js %s (another ABI)", (pin) => {
    let otherNode: string;
    let otherAbi: string;
    let expectedLine: string;

    beforeAll(async () => {
      otherNode = await ensureNode(pin);
      otherAbi = (await run(otherNode, ["-p", "process.versions.modules"])).stdout.trim();
      expect(otherAbi).not.toBe(process.versions.modules);
      expectedLine =
        `ivoai: the native SQLite module was built for Node.js ABI ${process.versions.modules} ` +
        `but this is Node.js v${pin} (ABI ${otherAbi}): run "npm rebuild better-sqlite3" in ${packageDir} ` +
        "(or reinstall ivoai with this Node.js)";
    }, 900_000);

    it("says in one line what to rebuild and exits 1", async () => {
      const result = await ivoai(["demo"], otherNode);
      expect(result.code).toBe(1);
      // The demo's progress lines come first; the error is the one `ivoai:` line, and the last.
      const lines = result.stderr.trimEnd().split("\n");
      expect(lines.filter((line) => line.startsWith("ivoai:"))).toEqual([expectedLine]);
      expect(lines.at(-1)).toBe(expectedLine);
    });

    it("still answers --version, which needs no SQLite", async () => {
      expect(await ivoai(["--version"], otherNode)).toMatchObject({ code: 0, stdout: `${version}\n` });
    });

    it("doctor reports the module unhealthy and fails", async () => {
      const result = await ivoai(["doctor", "--json"], otherNode);
      expect(result.code).toBe(1);
      const report = JSON.parse(result.stdout) as DoctorJson;
      expect(report.status).toBe("fail");
      const native = report.components.find((row) => row.component === "native-sqlite");
      expect(native).toMatchObject({ healthy: "no", detail: expectedLine.replace(/^ivoai: /, "") });
    });
  });

  // Last: it changes the installed tree. The command the message prints, run by the newest other LTS, is the whole
  // switch; that Node's own headers (the package ships them), since the registry is the only network here.
  it("after the printed npm rebuild, the other Node.js runs the demo and doctor is healthy", async () => {
    const pin = otherVersions.at(-1) as string;
    const otherNode = await ensureNode(pin);
    const nodeDir = path.dirname(path.dirname(otherNode));
    const started = Date.now();
    await run("npm", ["rebuild", "better-sqlite3", "--no-audit", "--no-fund", "--loglevel=error"], {
      cwd: packageDir,
      env: {
        ...env,
        PATH: [path.dirname(otherNode), env.PATH].join(path.delimiter),
        npm_config_nodedir: nodeDir,
      },
      timeout: 1_200_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    process.stderr.write(`install.e2e: npm rebuild took ${Math.round((Date.now() - started) / 1000)} s\n`);
    const demo = await ivoai(["demo", "--json"], otherNode);
    expect(demo.code, demo.stderr).toBe(0);
    const doctor = await ivoai(["doctor", "--json"], otherNode);
    const native = (JSON.parse(doctor.stdout) as DoctorJson).components.find(
      (row) => row.component === "native-sqlite",
    );
    expect(native).toMatchObject({ healthy: "yes", path: packageDir });
  }, 1_500_000);
});
