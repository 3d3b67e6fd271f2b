// The client's server connections with the built binary: a legacy single-server config disconnects for good, a
// refusal comes before the single-use code is spent, --purpose has a default, and https to plain http says so.

import { lstat, mkdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCode, initRoot, type RunningServer, runIvoai, startServer, tempDir } from "./helpers.js";

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/** Fresh XDG roots under a new temporary folder. */
async function freshEnv(): Promise<{ env: NodeJS.ProcessEnv; configDir: string }> {
  const made = await tempDir("ivoai-connections-");
  cleanups.push(made.cleanup);
  const env = {
    HOME: made.dir,
    XDG_CONFIG_HOME: path.join(made.dir, "config"),
    XDG_DATA_HOME: path.join(made.dir, "data"),
    XDG_STATE_HOME: path.join(made.dir, "state"),
    XDG_CACHE_HOME: path.join(made.dir, "cache"),
  };
  return { env, configDir: path.join(made.dir, "config", "ivoai") };
}

async function readOptional(file: string): Promise<string> {
  return readFile(file, "utf8").catch(() => "");
}

describe("a legacy single-server config", () => {
  const LEGACY_CREDENTIAL = "ivoai_cred_legacy_0123456789abcdef";
  const OTHER_CREDENTIAL = "ivoai_cred_other_0123456789abcdef";

  /** config.toml with [server] url and a v2 profile beside it, secrets.json schema 1 (its `server` mirror). */
  async function legacySetup(withOther: boolean) {
    const { env, configDir } = await freshEnv();
    await mkdir(configDir, { recursive: true, mode: 0o700 });
    const other = withOther
      ? '\n[servers.srv_other]\nalias = "other"\nurl = "http://127.0.0.1:9"\npurpose = "other"\n'
      : "";
    await writeFile(
      path.join(configDir, "config.toml"),
      `[ui]\ntheme = "kept"\n\n[server]\nurl = "http://127.0.0.1:9"\n${other}`,
      { mode: 0o600 },
    );
    const secrets = withOther
      ? {
          schema: 2,
          servers: {
            srv_legacy_default: { credential: LEGACY_CREDENTIAL },
            srv_other: { credential: OTHER_CREDENTIAL },
          },
          server: { credential: LEGACY_CREDENTIAL },
        }
      : { schema: 1, server: { credential: LEGACY_CREDENTIAL } };
    await writeFile(path.join(configDir, "secrets.json"), JSON.stringify(secrets), { mode: 0o600 });
    return { env, configDir };
  }

  const listed = async (env: NodeJS.ProcessEnv) => {
    const list = await runIvoai(["connect", "server", "list", "--json"], { env });
    expect(list.code, list.stderr).toBe(0);
    return (JSON.parse(list.stdout) as { servers: { alias: string; enabled: boolean }[] }).servers;
  };

  it.each([
    ["by alias", ["default"]],
    ["with --all", ["--all"]],
  ])("disconnect %s removes the profile, the [server] table and the credential", async (_name, args) => {
    const { env, configDir } = await legacySetup(false);
    expect((await listed(env)).map((row) => row.alias)).toEqual(["default"]);

    const gone = await runIvoai(["disconnect", "server", ...args], { env });
    expect(gone.code, gone.stderr).toBe(0);
    expect(gone.stdout).toContain("disconnected default");

    expect(await listed(env)).toEqual([]);
    const config = await readFile(path.join(configDir, "config.toml"), "utf8");
    expect(config).not.toMatch(/^\[server\]/m);
    expect(config).toContain('theme = "kept"');
    const secrets = await readFile(path.join(configDir, "secrets.json"), "utf8");
    expect(secrets).not.toContain(LEGACY_CREDENTIAL);
    expect(JSON.parse(secrets)).toEqual({ schema: 2, servers: {} });

    const doctor = await runIvoai(["doctor", "--json"], { env, timeoutMs: 120_000 });
    const report = JSON.parse(doctor.stdout) as { servers: { alias: string }[] };
    expect(report.servers, doctor.stdout).toEqual([]);
    expect(doctor.stdout).not.toContain("CREDENTIAL MISSING");
  });

  it("disconnecting the legacy profile keeps the other profile and its credential", async () => {
    const { env, configDir } = await legacySetup(true);
    expect((await listed(env)).map((row) => row.alias)).toEqual(["default", "other"]);
    const gone = await runIvoai(["disconnect", "server", "default"], { env });
    expect(gone.code, gone.stderr).toBe(0);
    expect((await listed(env)).map((row) => row.alias)).toEqual(["other"]);
    const secrets = JSON.parse(await readFile(path.join(configDir, "secrets.json"), "utf8"));
    expect(secrets).toEqual({ schema: 2, servers: { srv_other: { credential: OTHER_CREDENTIAL } } });
  });
});

describe("connect server add against a real server", () => {
  let root: string;
  let server: RunningServer;

  beforeAll(async () => {
    const made = await tempDir("ivoai-connections-server-");
    cleanups.push(made.cleanup);
    root = made.dir;
    await initRoot(root);
    server = await startServer(root);
    cleanups.push(async () => {
      await server.stop();
    });
  }, 120_000);

  const add = (env: NodeJS.ProcessEnv, code: string, ...args: string[]) =>
    runIvoai(["connect", "server", "add", ...args, "--url", server.url, "--code-stdin", "--json"], {
      env,
      input: `${code}\n`,
      timeoutMs: 120_000,
    });

  it("refuses a symlinked config.toml before spending the code; the fixed retry redeems it", async () => {
    const { env, configDir } = await freshEnv();
    await mkdir(configDir, { recursive: true, mode: 0o700 });
    const elsewhere = path.join(configDir, "..", "real-config.toml");
    await writeFile(elsewhere, "", { mode: 0o600 });
    await symlink(elsewhere, path.join(configDir, "config.toml"));
    const { code } = await createCode(root);

    const refused = await add(env, code, "acme", "--purpose", "acme");
    expect(refused.code, refused.stdout).not.toBe(0);
    expect(refused.stderr).toMatch(/config\.toml: it is a symbolic link/);
    const secrets = await readOptional(path.join(configDir, "secrets.json"));
    expect(secrets).not.toContain("ivoai_");
    if (secrets) expect(JSON.parse(secrets)).toEqual({ schema: 2, servers: {} });

    // The operator replaces the symlink with a file; the same single-use code still works.
    await rm(path.join(configDir, "config.toml"));
    const added = await add(env, code, "acme");
    expect(added.code, added.stderr).toBe(0);
    const result = JSON.parse(added.stdout) as { profile: { alias: string; purpose: string; id: string } };
    expect(result.profile).toMatchObject({ alias: "acme", purpose: "acme" });
    expect((await lstat(path.join(configDir, "config.toml"))).isFile()).toBe(true);
    const stored = JSON.parse(await readFile(path.join(configDir, "secrets.json"), "utf8")) as {
      servers: Record<string, { credential: string }>;
    };
    expect(Object.keys(stored.servers)).toEqual([result.profile.id]);
  });

  it("refuses a taken alias before spending the code", async () => {
    const { env } = await freshEnv();
    const first = await createCode(root);
    expect((await add(env, first.code, "dup", "--purpose", "dup")).code).toBe(0);
    const second = await createCode(root);
    const refused = await add(env, second.code, "dup", "--purpose", "dup");
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/already connected/);
    const other = await add(env, second.code, "dup-2", "--purpose", "dup");
    expect(other.code, other.stderr).toBe(0);
  });

  it("defaults --purpose to the alias, or to the redundancy group's purpose, and says so in --help", async () => {
    const { env } = await freshEnv();
    const purposeOf = async (...args: string[]) => {
      const { code } = await createCode(root);
      const added = await add(env, code, ...args);
      expect(added.code, added.stderr).toBe(0);
      return (JSON.parse(added.stdout) as { profile: { purpose: string } }).profile.purpose;
    };
    expect(await purposeOf("solo")).toBe("solo");
    expect(await purposeOf("mind-1", "--redundancy-group", "mind-prod")).toBe("mind-prod");
    expect(await purposeOf("mind-0", "--purpose", "mind", "--redundancy-group", "mind-dr")).toBe("mind");
    expect(await purposeOf("mind-2", "--redundancy-group", "mind-dr")).toBe("mind");

    const help = await runIvoai(["connect", "server", "add", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--purpose NAME .*default: the alias/);
  });
});

describe("an https URL that reaches a plain HTTP server", () => {
  let plain: Server;
  let port: number;

  beforeAll(async () => {
    plain = createServer((_request, response) => response.end("plain\n"));
    await new Promise<void>((resolve) => plain.listen(0, "127.0.0.1", resolve));
    port = (plain.address() as { port: number }).port;
    cleanups.push(() => new Promise<void>((resolve) => plain.close(() => resolve())));
  });

  it("says the server answered plain HTTP and to use http:// on loopback, not that TLS is invalid", async () => {
    const { env } = await freshEnv();
    const result = await runIvoai(
      [
        "connect",
        "server",
        "add",
        "plain",
        "--url",
        `https://127.0.0.1:${port}`,
        "--purpose",
        "p",
        "--code-stdin",
      ],
      { env, input: "ivoai_enr_unused\n", timeoutMs: 120_000 },
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `the server at https://127.0.0.1:${port} answered plain HTTP, not TLS: use http://127.0.0.1:${port}`,
    );
    expect(result.stderr).not.toMatch(/certificate/);
  });
});
