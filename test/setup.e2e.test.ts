// `ivoai setup|update|rollback|uninstall` with real npm and real files: tiny packed fake agents installed from
// local tarballs through the catalogue test seam (IVOAI_INSTALL_CATALOGUE with IVOAI_UNSAFE_TEST_CATALOGUE=1).
import { execFile, spawn } from "node:child_process";
import { existsSync, promises as fs } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packFakeAgent } from "./fake-packages.js";
import { BIN, homeEnv, type RunResult, runIvoai, tempDir } from "./helpers.js";

const run = promisify(execFile);
let root: string;
let cleanup: () => Promise<void>;
const tarballs: Record<string, { file: string; integrity: string }> = {};

/** A fake agent package (test/fake-packages.ts), kept by `name@version`. */
async function pack(name: string, bin: string, version: string, versionExit = 0): Promise<void> {
  tarballs[`${name}@${version}`] = await packFakeAgent(root, name, bin, version, versionExit);
}

interface Machine {
  home: string;
  env: NodeJS.ProcessEnv;
  data: string;
  state: string;
  cache: string;
  config: string;
  useCatalogue(codex: string, options?: { tarball?: string; maxBytes?: number }): Promise<void>;
}

/** One user's machine: its own HOME and XDG roots, provider keys in the environment, a catalogue file. */
async function machine(name: string, extraPath: string[] = []): Promise<Machine> {
  const home = path.join(root, name);
  await fs.mkdir(home, { recursive: true });
  const catalogue = path.join(home, "catalogue.json");
  const env = {
    ...homeEnv(home),
    PATH: [...extraPath, path.dirname(process.execPath), "/usr/bin", "/bin"].join(path.delimiter),
    OPENAI_API_KEY: "sk-test-must-not-reach-npm",
    ANTHROPIC_API_KEY: "sk-ant-must-not-reach-npm",
    NPM_TOKEN: "npm-token-must-not-reach-npm",
    IVOAI_INSTALL_CATALOGUE: catalogue,
    IVOAI_UNSAFE_TEST_CATALOGUE: "1",
  };
  return {
    home,
    env,
    data: path.join(env.XDG_DATA_HOME, "ivoai"),
    state: path.join(env.XDG_STATE_HOME, "ivoai"),
    cache: path.join(env.XDG_CACHE_HOME, "ivoai"),
    config: path.join(env.XDG_CONFIG_HOME, "ivoai"),
    async useCatalogue(codex, options = {}) {
      const [, version] = codex.split("@") as [string, string];
      const entry = (
        pkg: string,
        agent: string,
        bin: string,
        v: string,
        allow: boolean,
        tarball?: string,
      ) => ({
        agent,
        package: pkg,
        version: v,
        integrity: tarballs[`${pkg}@${v}`]?.integrity,
        bins: [bin],
        allow_scripts: allow,
        scripts_note: "test fake",
        tarball: tarball ?? tarballs[`${pkg}@${v}`]?.file,
      });
      await fs.writeFile(
        catalogue,
        JSON.stringify({
          revision: Number(version.split(".")[1]) + 1,
          ...(options.maxBytes ? { max_install_bytes: options.maxBytes } : {}),
          agents: [
            entry("fake-codex", "codex", "codex", version, true, options.tarball),
            entry("fake-claude", "claude", "claude", "1.0.0", false),
          ],
        }),
      );
    },
  };
}

const ivoai = (m: Machine, ...args: string[]) => runIvoai(args, { env: m.env, timeoutMs: 120_000 });

/** The real binary in `cwd` with exactly `env` (nothing inherited), as a shell with odd variables would run it. */
function ivoaiIn(cwd: string, env: NodeJS.ProcessEnv, ...args: string[]): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd,
      env,
      stdio: ["ignore", "pipe", "pipe"],
      timeout: 60_000,
      killSignal: "SIGKILL",
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** Every file under `dir`, relative, sorted. */
async function tree(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
    .sort();
}
const managedVersion = async (m: Machine) =>
  (await run(path.join(m.data, "bin", "codex"), ["--version"])).stdout.trim();

beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir("ivoai-install-"));
  await pack("fake-codex", "codex", "1.0.0");
  await pack("fake-codex", "codex", "1.1.0");
  await pack("fake-codex", "codex", "2.0.0", 1);
  await pack("fake-claude", "claude", "1.0.0");
}, 120_000);
afterAll(() => cleanup());

describe("ivoai setup", () => {
  it("refuses a tarball whose integrity differs from the catalogue and leaves nothing behind", async () => {
    const m = await machine("tampered");
    await m.useCatalogue("fake-codex@1.0.0", { tarball: tarballs["fake-codex@1.1.0"]?.file ?? "" });
    const result = await ivoai(m, "setup", "--agents", "codex,claude");
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/integrity check failed for fake-codex@1\.0\.0/);
    expect(await fs.readdir(path.join(m.data, "agents"))).toEqual([]);
    expect(existsSync(path.join(m.data, "bin"))).toBe(false);
    expect(existsSync(path.join(m.state, "install.json"))).toBe(false);
  });

  it("refuses an install that grows past the catalogue's size bound and leaves nothing behind", async () => {
    const m = await machine("oversize");
    await m.useCatalogue("fake-codex@1.0.0", { maxBytes: 200 });
    const result = await ivoai(m, "setup", "--agents", "codex");
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/over the catalogue's bound of 0 MiB; nothing was installed/);
    expect(await fs.readdir(path.join(m.data, "agents"))).toEqual([]);
    expect(existsSync(path.join(m.state, "install.json"))).toBe(false);
  });

  it("refuses IVOAI_INSTALL_CATALOGUE without IVOAI_UNSAFE_TEST_CATALOGUE=1 and installs nothing", async () => {
    const m = await machine("override-alone");
    await m.useCatalogue("fake-codex@1.0.0");
    const result = await runIvoai(["setup", "--agents", "codex"], {
      env: { ...m.env, IVOAI_UNSAFE_TEST_CATALOGUE: "" },
      timeoutMs: 60_000,
    });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(
      /IVOAI_INSTALL_CATALOGUE is a test seam and is refused unless IVOAI_UNSAFE_TEST_CATALOGUE=1/,
    );
    expect(existsSync(m.data)).toBe(false);
    expect(existsSync(m.state)).toBe(false);
  });

  it("rejects a bad --agents value with a usage error", async () => {
    const m = await machine("usage");
    const result = await ivoai(m, "setup", "--agents", "codex,gemini");
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('ivoai: invalid --agents "gemini": expected one of codex, claude, opencode\n');
  });

  it("installs exact pinned packages with a lockfile, a scrubbed environment and only allowed scripts", async () => {
    const m = await machine("fresh");
    await m.useCatalogue("fake-codex@1.0.0");
    const result = await ivoai(m, "setup", "--agents", "codex,claude", "--json");
    expect(result.code, result.stderr).toBe(0);
    const out = JSON.parse(result.stdout) as {
      generation: string;
      agents: { agent: string; status: string }[];
    };
    expect(out.agents.map((a) => [a.agent, a.status])).toEqual([
      ["codex", "managed"],
      ["claude", "managed"],
    ]);
    expect(result.stderr).toContain("installing fake-codex@1.0.0");
    expect(await managedVersion(m)).toBe("codex-cli 1.0.0");
    const generation = path.join(m.data, "agents", out.generation);
    const lock = JSON.parse(await fs.readFile(path.join(generation, "package-lock.json"), "utf8"));
    expect(lock.packages["node_modules/fake-codex"].integrity).toBe(tarballs["fake-codex@1.0.0"]?.integrity);
    // codex's script was allowed and ran with the minimal environment; claude's was not allowed.
    const installEnv = JSON.parse(
      await fs.readFile(path.join(generation, "node_modules/fake-codex/install-env.json"), "utf8"),
    ) as Record<string, string>;
    expect(Object.keys(installEnv).filter((k) => /OPENAI|ANTHROPIC|TOKEN|XDG/.test(k))).toEqual([]);
    expect(installEnv.HOME).toBe(path.join(m.cache, "npm-home"));
    // Not $PREFIX/etc/npmrc (it can hold an _authToken): an empty file in the private npm home.
    expect(installEnv.npm_config_globalconfig).toBe(path.join(m.cache, "npm-home", "global-npmrc"));
    expect(await fs.readFile(installEnv.npm_config_globalconfig ?? "", "utf8")).toBe("");
    expect(result.stderr).toMatch(
      /WARNING: IVOAI_INSTALL_CATALOGUE=\S+ replaces the reviewed install catalogue/,
    );
    expect(existsSync(path.join(m.cache, "npm-home", "cache"))).toBe(false);
    expect(existsSync(path.join(generation, "node_modules/fake-claude/install-env.json"))).toBe(false);
    const manifest = path.join(m.state, "install.json");
    expect((await fs.stat(manifest)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await fs.readFile(manifest, "utf8")).agents.codex.status).toBe("managed");
  });

  it("records a codex already on PATH as pre_existing and never replaces it", async () => {
    const prebin = path.join(root, "prebin");
    await fs.mkdir(prebin, { recursive: true });
    const theirs = "#!/bin/sh\necho vendor-codex 9.9.9\n";
    await fs.writeFile(path.join(prebin, "codex"), theirs, { mode: 0o755 });
    const m = await machine("preexisting", [prebin]);
    await m.useCatalogue("fake-codex@1.0.0");
    const result = await ivoai(m, "setup", "--agents", "codex", "--json");
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).agents).toEqual([
      { agent: "codex", status: "pre_existing", version: null, path: path.join(prebin, "codex") },
    ]);
    expect(existsSync(path.join(m.data, "bin", "codex"))).toBe(false);
    expect(await fs.readFile(path.join(prebin, "codex"), "utf8")).toBe(theirs);

    const gone = await ivoai(m, "uninstall", "--yes", "--purge");
    expect(gone.code, gone.stderr).toBe(0);
    expect(gone.stdout).toContain(`left codex at ${path.join(prebin, "codex")} alone`);
    expect(await fs.readFile(path.join(prebin, "codex"), "utf8")).toBe(theirs);
  });
});

describe("ivoai update, rollback and uninstall", () => {
  let m: Machine;
  const legacyConfig =
    '# my notes\nfuture_flag = "keep me"\n\n[server]\nurl = "https://knowledge.example"\n\n[team.extra]\nanswer = 42\n';
  const legacySecrets = `${JSON.stringify({ schema: 1, server: { credential: "ivo_secret_value" } })}\n`;
  const session = `${JSON.stringify({ id: "ses_0123456789abcdef", agent: "codex", status: "exited" })}\n`;
  const files = () => [
    path.join(m.config, "config.toml"),
    path.join(m.config, "secrets.json"),
    path.join(m.state, "sessions", "ses_0123456789abcdef.json"),
  ];
  const contents = () => Promise.all(files().map((file) => fs.readFile(file)));

  beforeAll(async () => {
    m = await machine("updates");
    await m.useCatalogue("fake-codex@1.0.0");
    const result = await ivoai(m, "setup", "--agents", "codex,claude");
    expect(result.code, result.stderr).toBe(0);
    await fs.mkdir(m.config, { recursive: true, mode: 0o700 });
    await fs.writeFile(path.join(m.config, "config.toml"), legacyConfig, { mode: 0o600 });
    await fs.writeFile(path.join(m.config, "secrets.json"), legacySecrets, { mode: 0o600 });
    await fs.mkdir(path.join(m.state, "sessions"), { recursive: true });
    await fs.writeFile(files()[2] ?? "", session, { mode: 0o600 });
  }, 120_000);

  it("--check reports the version change and the migrations and changes nothing", async () => {
    await m.useCatalogue("fake-codex@1.1.0");
    const before = await contents();
    const result = await ivoai(m, "update", "--check", "--json");
    expect(result.code, result.stderr).toBe(0);
    const probe = JSON.parse(result.stdout);
    expect(probe.agents).toContainEqual({
      agent: "codex",
      installed: "1.0.0",
      available: "1.1.0",
      change: "upgrade",
    });
    expect(probe.data).toMatchObject({ version: 1, target: 2, migrations: [{ id: "0002-servers-by-id" }] });
    expect(await contents()).toEqual(before);
    expect(await managedVersion(m)).toBe("codex-cli 1.0.0");
  });

  it("a failing update (the new codex does not start) rolls itself back", async () => {
    await m.useCatalogue("fake-codex@2.0.0");
    const before = await contents();
    const result = await ivoai(m, "update");
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/update failed and was rolled back .*doctor after update: codex 2\.0\.0/);
    expect(await managedVersion(m)).toBe("codex-cli 1.0.0");
    expect(await contents()).toEqual(before);
    expect(await fs.readdir(path.join(m.data, "agents"))).toHaveLength(2); // one generation + current
  });

  it("updates to the newer version with migrations, and rollback restores the files byte for byte", async () => {
    await m.useCatalogue("fake-codex@1.1.0");
    const before = await contents();
    const result = await ivoai(m, "update", "--json");
    expect(result.code, result.stderr).toBe(0);
    const outcome = JSON.parse(result.stdout);
    expect(outcome.updated).toBe(true);
    expect(outcome.doctor).toContainEqual(expect.objectContaining({ agent: "codex", ok: true }));
    expect(await managedVersion(m)).toBe("codex-cli 1.1.0");
    const secrets = JSON.parse(await fs.readFile(files()[1] ?? "", "utf8"));
    expect(secrets.servers.srv_legacy_default.credential).toBe("ivo_secret_value");
    const config = await fs.readFile(files()[0] ?? "", "utf8");
    expect(config).toContain("[servers.srv_legacy_default]");
    expect(config).toContain('future_flag = "keep me"');
    expect(config).toMatch(/\[team\.extra\]\nanswer = 42/);
    expect(result.stdout).not.toContain("ivo_secret_value");

    const back = await ivoai(m, "rollback", "--json");
    expect(back.code, back.stderr).toBe(0);
    expect(JSON.parse(back.stdout).agents).toContainEqual({ agent: "codex", version: "1.0.0" });
    expect(await managedVersion(m)).toBe("codex-cli 1.0.0");
    expect(await contents()).toEqual(before);
    expect((await ivoai(m, "rollback")).stderr).toMatch(/nothing to roll back to/);
  });

  it("rollback refuses when secrets.json changed after the update; --force restores the old files", async () => {
    await m.useCatalogue("fake-codex@1.1.0");
    const before = await contents();
    const result = await ivoai(m, "update");
    expect(result.code, result.stderr).toBe(0);
    const secretsFile = files()[1] ?? "";
    const secrets = JSON.parse(await fs.readFile(secretsFile, "utf8"));
    secrets.servers.srv_legacy_default.credential = "ivo_rotated_after_update";
    await fs.writeFile(secretsFile, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
    const changed = await contents();

    const refused = await ivoai(m, "rollback");
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(`${secretsFile} changed after the update`);
    expect(refused.stderr).toMatch(/nothing was changed; pass --force/);
    expect(await contents()).toEqual(changed);
    expect(await managedVersion(m)).toBe("codex-cli 1.1.0");

    const forced = await ivoai(m, "rollback", "--force");
    expect(forced.code, forced.stderr).toBe(0);
    expect(await contents()).toEqual(before);
    expect(await managedVersion(m)).toBe("codex-cli 1.0.0");
  });

  it("uninstall waits for the install lock and removes nothing while another install holds it", async () => {
    const sqlite = createRequire(import.meta.url).resolve("better-sqlite3");
    const holder = spawn(
      process.execPath,
      [
        "-e",
        `const db = new (require(${JSON.stringify(sqlite)}))(process.argv[1]); db.exec("BEGIN EXCLUSIVE");` +
          'console.log("held"); process.stdin.resume(); process.stdin.on("end", () => process.exit(0));',
        path.join(m.state, "install.lock"),
      ],
      { stdio: ["pipe", "pipe", "inherit"] },
    );
    await new Promise<void>((resolve, reject) => {
      holder.stdout.on("data", (chunk) => `${chunk}`.includes("held") && resolve());
      holder.on("exit", (code) => reject(new Error(`lock holder exited ${code}`)));
    });
    try {
      const result = await ivoai(m, "uninstall", "--yes", "--purge");
      expect(result.code).not.toBe(0);
      expect(result.stderr).toMatch(/another ivoai setup\/update\/rollback is running/);
      for (const dir of [m.data, m.state, m.config]) expect(existsSync(dir)).toBe(true);
      expect(await managedVersion(m)).toBe("codex-cli 1.0.0");
    } finally {
      holder.stdin.end();
    }
  });

  it("uninstall refuses without a terminal or --yes, then keeps config, secrets and vendor logins", async () => {
    const login = path.join(m.home, ".codex", "auth.json");
    await fs.mkdir(path.dirname(login), { recursive: true });
    await fs.writeFile(login, "{}");
    const refused = await ivoai(m, "uninstall");
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/no terminal to ask on: pass --yes/);
    expect(existsSync(m.data)).toBe(true);

    // On a terminal (util-linux `script` gives it one) it asks; anything but yes keeps everything.
    const asked = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn("script", ["-qec", `${process.execPath} ${BIN} uninstall`, "/dev/null"], {
        env: { ...m.env },
        stdio: ["pipe", "pipe", "pipe"],
        timeout: 30_000,
        killSignal: "SIGKILL",
      });
      let output = "";
      let answered = false;
      child.stdout.on("data", (chunk) => {
        output += chunk;
        if (answered || !output.includes("[y/N]")) return;
        answered = true;
        child.stdin.write("n\r");
      });
      child.on("close", (code) => resolve({ code, output }));
    });
    expect(asked.output).toContain(`Remove ${m.data}, ${m.state}, ${m.cache}? [y/N]`);
    expect(asked.output).toContain("nothing removed");
    expect(asked.code).toBe(1);
    expect(existsSync(m.data)).toBe(true);

    const result = await ivoai(m, "uninstall", "--yes", "--json");
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).removed).toEqual([m.data, m.state, m.cache]);
    for (const dir of [m.data, m.state, m.cache]) expect(existsSync(dir)).toBe(false);
    expect(existsSync(path.join(m.config, "secrets.json"))).toBe(true);
    expect(JSON.parse(result.stdout).kept.map((k: { path: string }) => k.path)).toContain(
      path.join(m.config, "secrets.json"),
    );
    expect(await fs.readFile(login, "utf8")).toBe("{}");

    const purged = await ivoai(m, "uninstall", "--yes", "--purge");
    expect(purged.code, purged.stderr).toBe(0);
    expect(existsSync(m.config)).toBe(false);
    expect(await fs.readFile(login, "utf8")).toBe("{}");
  });
});

describe("ivoai uninstall with unusual HOME and XDG settings", () => {
  it("refuses when HOME is empty or relative and removes nothing under the working directory", async () => {
    const cwd = path.join(root, "cwd-home");
    const planted = [".local/share/ivoai/keep", ".local/state/ivoai/keep", ".cache/ivoai/keep"];
    planted.push(".config/ivoai/config.toml", ".config/ivoai/secrets.json");
    for (const file of planted) {
      await fs.mkdir(path.join(cwd, path.dirname(file)), { recursive: true });
      await fs.writeFile(path.join(cwd, file), "precious");
    }
    const env = { PATH: process.env.PATH ?? "", XDG_CONFIG_HOME: "", XDG_DATA_HOME: "" };
    for (const HOME of ["", "."])
      for (const args of [
        ["uninstall", "--yes"],
        ["uninstall", "--yes", "--purge"],
      ]) {
        const result = await ivoaiIn(cwd, { ...env, HOME }, ...args);
        expect(result.code, `HOME=${HOME} ${args.join(" ")}`).not.toBe(0);
        expect(result.stderr).toMatch(/HOME is not an absolute path/);
        expect(await tree(cwd)).toEqual([...planted].sort());
      }
  });

  it("keeps config.toml and secrets.json when XDG_DATA_HOME is XDG_CONFIG_HOME (without --purge)", async () => {
    const home = path.join(root, "same-xdg");
    const xdg = path.join(home, "xdg");
    const shared = path.join(xdg, "ivoai");
    await fs.mkdir(shared, { recursive: true });
    await fs.writeFile(path.join(shared, "config.toml"), '[servers.a]\nurl = "https://k.example"\n');
    await fs.writeFile(path.join(shared, "secrets.json"), '{"schema":2,"servers":{}}\n');
    await fs.mkdir(path.join(xdg, "other"));
    await fs.writeFile(path.join(xdg, "other", "file"), "not ivoai's");
    const state = path.join(home, ".local/state/ivoai");
    await fs.mkdir(state, { recursive: true });
    await fs.writeFile(path.join(state, "keep"), "");
    const env = { PATH: process.env.PATH ?? "", HOME: home, XDG_CONFIG_HOME: xdg, XDG_DATA_HOME: xdg };

    const result = await ivoaiIn(home, env, "uninstall", "--yes", "--json");
    expect(result.code, result.stderr).toBe(0);
    const out = JSON.parse(result.stdout) as { removed: string[]; kept: { path: string; why: string }[] };
    expect(out.removed).toEqual([state]);
    expect(out.kept).toContainEqual({
      path: shared,
      why: `it is, holds or sits in the config dir ${shared} (remove with --purge)`,
    });
    expect(await tree(xdg)).toEqual(["ivoai/config.toml", "ivoai/secrets.json", "other/file"]);

    const purged = await ivoaiIn(home, env, "uninstall", "--yes", "--purge", "--json");
    expect(purged.code, purged.stderr).toBe(0);
    expect(await tree(xdg)).toEqual(["other/file"]);
  });
});
