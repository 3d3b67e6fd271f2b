// A newcomer's first commands on a fresh machine (empty XDG dirs, no agent CLIs, no servers), run with the built
// binary: doctor says what to do next for each missing or unhealthy row, `update --check` is not a failure.
import { mkdir, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runIvoai, tempDir } from "./helpers.js";

interface Row {
  next: string | null;
}
interface Doctor {
  status: string;
  components: (Row & { component: string; installed: string })[];
  servers: (Row & { alias: string; reachable: string; credential_stored: boolean })[];
  next: string[];
}

let dir: string;
let cleanup: () => Promise<void>;
let env: NodeJS.ProcessEnv;

/** Fresh XDG roots under `base`, and a PATH with no agent CLI on it. */
async function freshEnv(base: string): Promise<NodeJS.ProcessEnv> {
  const bin = path.join(base, "empty-bin");
  await mkdir(bin, { recursive: true });
  return {
    HOME: base,
    XDG_CONFIG_HOME: path.join(base, "config"),
    XDG_DATA_HOME: path.join(base, "data"),
    XDG_STATE_HOME: path.join(base, "state"),
    XDG_CACHE_HOME: path.join(base, "cache"),
    PATH: bin,
  };
}

/** A loopback port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir("ivoai-newcomer-"));
  env = await freshEnv(path.join(dir, "fresh"));
});
afterAll(() => cleanup());

describe("a fresh doctor", () => {
  it("names a next step for each missing row and how to connect a first server (--json)", async () => {
    const result = await runIvoai(["doctor", "--json"], { env, timeoutMs: 60_000 });
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as Doctor;
    expect(report.status).toBe("warn");
    for (const agent of ["codex", "claude", "opencode"]) {
      const row = report.components.find((entry) => entry.component === agent);
      expect(row, result.stdout).toMatchObject({ installed: "no", next: `ivoai setup --agents ${agent}` });
    }
    expect(report.components.find((entry) => entry.component === "node")?.next).toBeNull();
    expect(report.servers).toEqual([]);
    expect(report.next[0]).toBe("install the agent CLIs (codex, claude, opencode not found): ivoai setup");
    expect(report.next.some((step) => step.includes("ivoai connect server add ALIAS --url URL"))).toBe(true);
  });

  it("prints the next steps in text too", async () => {
    const result = await runIvoai(["doctor"], { env, timeoutMs: 60_000 });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(
      "\nnext steps:\n  - install the agent CLIs (codex, claude, opencode not found): ivoai setup\n",
    );
    expect(result.stdout).toMatch(/\n {2}- connect a knowledge server: .*ivoai connect server add /);
  });

  it("says what to do about a server that is down and has no credential, without a secret", async () => {
    const base = path.join(dir, "one-server");
    const withServer = await freshEnv(base);
    const config = path.join(base, "config", "ivoai");
    await mkdir(config, { recursive: true, mode: 0o700 });
    const url = `http://127.0.0.1:${await closedPort()}`;
    await writeFile(
      path.join(config, "config.toml"),
      `[servers.srv_lab]\nalias = "lab"\npurpose = "lab"\nurl = "${url}"\n`,
      { mode: 0o600 },
    );
    const result = await runIvoai(["doctor", "--json"], { env: withServer, timeoutMs: 60_000 });
    expect(result.code, result.stderr).toBe(1);
    const report = JSON.parse(result.stdout) as Doctor;
    const lab = report.servers.find((row) => row.alias === "lab");
    expect(lab).toMatchObject({ reachable: "no", credential_stored: false });
    expect(lab?.next).toBe(
      "ivoai disconnect server lab, then connect it again with a new enrollment code: " +
        `ivoai connect server add lab --url ${url} --purpose lab --code-stdin`,
    );
    expect(report.next).toContain(`server lab: ${lab?.next}`);
    expect(report.next.some((step) => step.startsWith("connect a knowledge server"))).toBe(false);
  });
});

describe("update --check with nothing installed", () => {
  it("says so, names 'ivoai setup' and exits 0", async () => {
    const text = await runIvoai(["update", "--check"], { env, timeoutMs: 60_000 });
    expect(text.stderr).toBe("");
    expect(text.code).toBe(0);
    expect(text.stdout).toBe(
      "nothing is installed yet: run 'ivoai setup' to install the pinned agent CLIs\n",
    );
    const json = await runIvoai(["update", "--check", "--json"], { env, timeoutMs: 60_000 });
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ installed: false, up_to_date: null, next: ["ivoai setup"] });
  });

  it("stays a failure for update itself, naming setup", async () => {
    const result = await runIvoai(["update"], { env, timeoutMs: 60_000 });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe("ivoai: nothing is installed yet: run 'ivoai setup' first\n");
  });
});
