// `ivoai server init/start` as an operator uses them: idempotent tree, safe modes, listener rules, TLS, exit codes.
import { execFileSync } from "node:child_process";
import { chmod, chown, lstat, mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import https from "node:https";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openSqlite } from "../src/shared/native-sqlite.js";
import { initRoot, type RunningServer, runIvoai, startServer, tempDir } from "./helpers.js";

const modeOf = async (file: string) => (await lstat(file)).mode & 0o777;
/** `ivoai server init` for a public https origin, plus any extra arguments. */
const init = (root: string, ...extra: string[]) =>
  runIvoai(["server", "init", "--root", root, "--public-url", "https://ai.example.com", ...extra]);

describe("ivoai server init", () => {
  const cleanups: (() => Promise<void>)[] = [];
  const servers: RunningServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.stop()));
    await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
  });
  const fresh = async () => {
    const { dir, cleanup } = await tempDir();
    cleanups.push(cleanup);
    return dir;
  };

  it("creates the seed's tree with private secrets and is idempotent", async () => {
    const root = await fresh();
    const first = await init(root, "--json");
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ config_written: true, listener: "loopback" });
    expect(await modeOf(path.join(root, "etc/ivoai/secrets"))).toBe(0o700);
    expect(await modeOf(path.join(root, "var/lib/ivoai/enrollment/enrollment.sqlite"))).toBe(0o600);
    for (const dir of [
      "var/lib/ivoai/context",
      "var/lib/ivoai/memory",
      "var/lib/ivoai/backups",
      "run/ivoai",
    ]) {
      expect((await lstat(path.join(root, dir))).isDirectory()).toBe(true);
    }
    const config = await readFile(path.join(root, "etc/ivoai/server.toml"), "utf8");
    expect(config).toContain('public_url = "https://ai.example.com"');

    // Tighter modes set by the operator survive; looser secrets are tightened.
    await chmod(path.join(root, "var/lib/ivoai/context"), 0o700);
    await chmod(path.join(root, "etc/ivoai/secrets"), 0o755);
    const again = await runIvoai(["server", "init", "--root", root, "--json"]);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ config_written: false, created: [] });
    expect(await modeOf(path.join(root, "var/lib/ivoai/context"))).toBe(0o700);
    expect(await modeOf(path.join(root, "etc/ivoai/secrets"))).toBe(0o700);
    expect(await readFile(path.join(root, "etc/ivoai/server.toml"), "utf8")).toBe(config);
  });

  it("refuses a symlinked target and leaves the link's destination untouched", async () => {
    const root = await fresh();
    const elsewhere = await fresh();
    await mkdir(path.join(root, "etc"));
    await symlink(elsewhere, path.join(root, "etc/ivoai"));
    const result = await init(root);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^ivoai: refusing .*etc\/ivoai: it is a symbolic link\n$/);
    expect(execFileSync("ls", ["-A", elsewhere], { encoding: "utf8" })).toBe("");
  });

  it.runIf(process.getuid?.() === 0)("refuses a directory owned by another user", async () => {
    const root = await fresh();
    await mkdir(path.join(root, "etc/ivoai"), { recursive: true });
    await chown(path.join(root, "etc/ivoai"), 4242, 4242);
    const result = await init(root);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("owned by uid 4242");
  });

  it("refuses a plaintext listener off loopback, and bad flags with exit 2", async () => {
    const root = await fresh();
    const open = await init(root, "--listen", "0.0.0.0:8443");
    expect(open.code).toBe(1);
    expect(open.stderr).toContain("refusing plaintext listener on 0.0.0.0:8443");
    const http = await runIvoai(["server", "init", "--root", root, "--public-url", "http://ai.example.com"]);
    expect(http.code).toBe(2);
    expect(http.stderr).toContain("must use https");
    const bad = await runIvoai(["server", "init", "--root", root, "--frobnicate"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split("\n")).toHaveLength(1);
    expect(bad.stderr).toContain('unknown option "--frobnicate"');
    expect((await runIvoai(["server", "bogus"])).code).toBe(2);
    expect(
      (await runIvoai(["server", "enrollment", "create", "--root", root, "--ttl", "forever"])).code,
    ).toBe(2);
  });

  it("refuses to start, or to create a code, on a setting it cannot read: exit 1 naming the file and the key", async () => {
    const root = await fresh();
    expect((await init(root)).code).toBe(0);
    const configFile = path.join(root, "etc/ivoai/server.toml");
    const text = await readFile(configFile, "utf8");
    // Earlier releases started with memory and the approval gate silently off on this one.
    const set = (key: string, value: string) => {
      const next = text.replace(new RegExp(`^${key} = .*$`, "m"), `${key} = "${value}"`);
      expect(next, `${key} in server.toml`).not.toBe(text);
      return writeFile(configFile, next);
    };
    await set("approval_ttl", "7 days");
    const started = await runIvoai(["server", "start", "--root", root], { timeoutMs: 60_000 });
    expect(started.code, started.stderr).toBe(1);
    expect(started.stderr).toContain(`${configFile}: memory.approval_ttl: '7 days' is not a duration`);
    await set("default_ttl", "10");
    const code = await runIvoai(["server", "enrollment", "create", "--root", root]);
    expect(code.code, code.stderr).toBe(1);
    expect(code.stderr).toContain(`${configFile}: enrollment.default_ttl: '10' is not a duration`);
  });

  it("behind a reverse proxy serves only trusted sources over forwarded HTTPS", async () => {
    const root = await fresh();
    await initRoot(root, ["--listen", "0.0.0.0:0", "--trusted-proxy", "127.0.0.0/8"]);
    const server = await startServer(root, ["--listen", "0.0.0.0:0"]);
    servers.push(server);
    const url = server.url.replace("0.0.0.0", "127.0.0.1");
    expect((await fetch(`${url}/.well-known/ivoai`)).status).toBe(403);
    expect(
      (await fetch(`${url}/.well-known/ivoai`, { headers: { "x-forwarded-proto": "https" } })).status,
    ).toBe(200);
    expect((await fetch(`${url}/health`)).status).toBe(200);

    const other = await fresh();
    await initRoot(other, ["--listen", "0.0.0.0:0", "--trusted-proxy", "10.0.0.0/8"]);
    const untrusted = await startServer(other, ["--listen", "0.0.0.0:0"]);
    servers.push(untrusted);
    const answer = await fetch(`${untrusted.url.replace("0.0.0.0", "127.0.0.1")}/health`);
    expect(answer.status).toBe(403);
    expect(await answer.json()).toMatchObject({ error: "untrusted_source" });
  });

  it("serves TLS on any interface with a private copy of the certificate and key", async () => {
    const root = await fresh();
    const certDir = await fresh();
    const cert = path.join(certDir, "cert.pem");
    const key = path.join(certDir, "key.pem");
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "30",
        "-subj",
        "/CN=127.0.0.1",
        "-addext",
        "subjectAltName=IP:127.0.0.1",
        "-keyout",
        key,
        "-out",
        cert,
      ],
      { stdio: "ignore" },
    );
    const withTls = await init(root, "--listen", "0.0.0.0:0", "--tls-cert", cert, "--tls-key", key);
    expect(withTls.code).toBe(0);
    expect(await modeOf(path.join(root, "etc/ivoai/secrets/tls/key.pem"))).toBe(0o600);
    expect(await modeOf(path.join(root, "etc/ivoai/secrets/tls/cert.pem"))).toBe(0o600);
    const server = await startServer(root);
    servers.push(server);
    expect(server.url).toMatch(/^https:\/\//);
    const port = new URL(server.url).port;
    const ca = await readFile(cert);
    const body = await new Promise<string>((resolve, reject) => {
      https
        .get({ host: "127.0.0.1", port, path: "/.well-known/ivoai", ca }, (response) => {
          let data = "";
          response.on("data", (chunk) => (data += chunk));
          response.on("end", () => resolve(data));
        })
        .on("error", reject);
    });
    expect(JSON.parse(body)).toMatchObject({
      protocol_version: 1,
      public_base_url: "https://ai.example.com",
    });

    // A client does not trust a certificate outside the Web PKI: discovery refuses it, and no code is spent.
    const xdg = await fresh();
    const refused = await runIvoai(
      [
        "connect",
        "server",
        "add",
        "selfsigned",
        "--url",
        `https://127.0.0.1:${port}`,
        "--purpose",
        "x",
        "--code-stdin",
      ],
      { env: { XDG_CONFIG_HOME: xdg, HOME: xdg }, input: "ivoai_enr_unused\n" },
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/TLS certificate not valid/);
  });

  it("reports not ready (503) when the enrollment state is corrupt", async () => {
    const root = await fresh();
    await initRoot(root);
    const server = await startServer(root);
    servers.push(server);
    // Another process breaks the stored document (bumping its version, as every writer does).
    const db = openSqlite(path.join(root, "var/lib/ivoai/enrollment/enrollment.sqlite"));
    try {
      db.prepare("UPDATE enrollment_state SET doc = '{ not json', version = version + 1").run();
    } finally {
      db.close();
    }
    const ready = await fetch(`${server.url}/ready`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: "not_ready", degraded: [], failed: ["enrollment"] });
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
    const list = await runIvoai(["server", "enrollment", "list", "--root", root]);
    expect(list.code).toBe(1);
    expect(list.stderr).toContain("is not valid JSON");
  });
});
