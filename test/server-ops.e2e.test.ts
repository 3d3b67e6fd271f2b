// Operating a server with the real binary: status, stop, the pid file, one server per root, log rotation, systemd units.
import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, chown, mkdir, readdir, readFile, realpath, stat, writeFile } from "node:fs/promises";
import http from "node:http";
import path from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import type { ServerStatus } from "../src/server/ops/status.js";
import {
  BIN,
  initRoot,
  initWithDocs,
  type RunningServer,
  runIvoai,
  startServer,
  tempDir,
} from "./helpers.js";

const run = promisify(execFile);

/** The JSON `server status --json` prints: the same type the command serialises. */
type Status = ServerStatus;

const status = async (root: string) => {
  const result = await runIvoai(["server", "status", "--root", root, "--json"]);
  return { code: result.code, status: JSON.parse(result.stdout) as Status, stderr: result.stderr };
};
const pidFile = (root: string) => path.join(root, "run/ivoai/server.pid");

/** A pid that no process holds any more: a child that already exited (and was reaped). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  await new Promise((resolve) => child.on("exit", resolve));
  return child.pid ?? 0;
}

const stalePidRecord = (pid: number) =>
  `${JSON.stringify({ pid, start_ticks: "1", started_at: "2026-01-01T00:00:00.000Z", version: "0.0.1", url: "http://127.0.0.1:9", public_url: "http://127.0.0.1:9" })}\n`;

describe("ivoai server status / stop", () => {
  const cleanups: (() => Promise<void>)[] = [];
  const servers: RunningServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.stop("SIGKILL")));
    await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
  });
  const fresh = async () => {
    const { dir, cleanup } = await tempDir();
    cleanups.push(cleanup);
    return dir;
  };

  it("reports a running server with its counts, refuses a second one, and stops it gracefully", async () => {
    const root = await fresh();
    const docs = path.join(root, "docs");
    await mkdir(docs);
    await writeFile(path.join(docs, "guide.md"), "# Guide\n\nDeploy with the blue-green runbook.\n");
    await initWithDocs(root, docs);

    const before = await status(root);
    expect(before.code).toBe(3);
    expect(before.status).toMatchObject({ running: false, pid: null, ready: "stopped" });

    const server = await startServer(root);
    servers.push(server);
    const record = JSON.parse(await readFile(pidFile(root), "utf8")) as { pid: number; url: string };
    expect(record).toMatchObject({ pid: server.child.pid, url: server.url });

    const running = await status(root);
    expect(running.code).toBe(0);
    expect(running.status).toMatchObject({
      running: true,
      pid: server.child.pid,
      url: server.url,
      ready: "ready",
      counts: { clients: { active: 0, total: 0 }, connectors: 1, documents: 1, pending_approvals: 0 },
      degraded: [],
    });
    expect(running.status.counts.chunks).toBeGreaterThan(0);
    expect(running.status.versions.server).toBe(running.status.versions.cli);
    const text = await runIvoai(["server", "status", "--root", root]);
    expect(text.stdout).toContain(`running (pid ${server.child.pid}), ready`);

    const second = await runIvoai(["server", "start", "--root", root]);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`already running (pid ${server.child.pid}`);
    expect((await fetch(`${server.url}/health`)).status).toBe(200);

    const exited = new Promise<number | null>((resolve) => server.child.on("exit", (code) => resolve(code)));
    const stop = await runIvoai(["server", "stop", "--root", root, "--json"]);
    expect(stop.code).toBe(0);
    expect(JSON.parse(stop.stdout)).toMatchObject({ outcome: "stopped", pid: server.child.pid });
    // stop returns only once the process is gone, and the server exited cleanly.
    expect(server.child.exitCode ?? (await exited)).toBe(0);
    expect(existsSync(pidFile(root))).toBe(false);

    const again = await runIvoai(["server", "stop", "--root", root]);
    expect(again).toMatchObject({ code: 0, stdout: `no server is running for ${root}\n` });
    expect((await status(root)).code).toBe(3);
  });

  it("detects and cleans a stale pid file: a dead pid, a pid reused by another program, a killed server", async () => {
    const root = await fresh();
    await initRoot(root);

    await writeFile(pidFile(root), stalePidRecord(await deadPid()));
    const dead = await status(root);
    expect(dead.code).toBe(3);
    expect(dead.status.running).toBe(false);
    expect(dead.status.stale_pid_file).toMatch(/^pid \d+ is not running$/);
    expect(existsSync(pidFile(root))).toBe(false);

    // This test's own process is alive, but started at another time than the record says.
    await writeFile(pidFile(root), stalePidRecord(process.pid));
    const stop = await runIvoai(["server", "stop", "--root", root]);
    expect(stop.code).toBe(0);
    expect(stop.stdout).toContain(
      `removed a stale pid file: pid ${process.pid} now belongs to another program`,
    );
    expect(existsSync(pidFile(root))).toBe(false);

    // A server killed without a chance to clean up does not block the next start.
    const killed = await startServer(root);
    await killed.stop("SIGKILL");
    expect(existsSync(pidFile(root))).toBe(true);
    const next = await startServer(root);
    servers.push(next);
    expect((await status(root)).status).toMatchObject({ running: true, pid: next.child.pid });
  });

  it("gives up after --timeout on a server that ignores SIGTERM, naming its pid, and does not kill it", async () => {
    const root = await fresh();
    await initRoot(root);
    // What stop checks before it signals: an ivoai entry running 'server start' for this root, as the pid file's owner.
    const stub = path.join(await fresh(), "ivoai.mjs");
    await writeFile(
      stub,
      "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000); console.log('up')\n",
    );
    const stubborn = spawn(process.execPath, [stub, "server", "start", "--root", root], {
      stdio: ["ignore", "pipe", "ignore"],
    });
    cleanups.push(async () => void stubborn.kill("SIGKILL"));
    await new Promise((resolve) => stubborn.stdout.once("data", resolve));
    const stat = await readFile(`/proc/${stubborn.pid}/stat`, "utf8");
    const ticks = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
    await writeFile(
      pidFile(root),
      JSON.stringify({ ...JSON.parse(stalePidRecord(stubborn.pid ?? 0)), start_ticks: ticks }),
    );
    const stop = await runIvoai(["server", "stop", "--root", root, "--timeout", "1s"]);
    expect(stop.code).toBe(1);
    expect(stop.stderr).toContain(`the server (pid ${stubborn.pid}) is still running 1s after SIGTERM`);
    expect(stubborn.exitCode).toBeNull();
    expect((await status(root)).status).toMatchObject({
      running: true,
      pid: stubborn.pid,
      ready: "unreachable",
    });
  });

  it("signals only this root's ivoai server: a pid file naming another program leaves it running", async () => {
    const root = await fresh();
    await initRoot(root);
    const other = await fresh();
    await initRoot(other);
    const sleeper = spawn("sleep", ["300"], { stdio: "ignore" });
    cleanups.push(async () => void sleeper.kill("SIGKILL"));
    await new Promise((resolve) => sleeper.once("spawn", resolve));
    const state = async (pid: number) => {
      const stat = await readFile(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      return { state: fields[0], ticks: fields[19] };
    };
    const pidOf = sleeper.pid ?? 0;
    await writeFile(
      pidFile(root),
      JSON.stringify({ ...JSON.parse(stalePidRecord(pidOf)), start_ticks: (await state(pidOf)).ticks }),
    );
    const stop = await runIvoai(["server", "stop", "--root", root, "--timeout", "1s"]);
    expect(stop.code).toBe(1);
    expect(stop.stderr).toContain(
      `${pidFile(root)} does not name an ivoai server for ${root} (pid ${pidOf} is not 'ivoai server start')`,
    );
    expect((await state(pidOf)).state).not.toBe("Z");
    expect(existsSync(pidFile(root))).toBe(true);

    // A real server, but for another root: not this root's to stop.
    const server = await startServer(other);
    servers.push(server);
    const record = JSON.parse(await readFile(pidFile(other), "utf8")) as { pid: number };
    await writeFile(pidFile(root), JSON.stringify(record));
    const wrongRoot = await runIvoai(["server", "stop", "--root", root]);
    expect(wrongRoot.code).toBe(1);
    expect(wrongRoot.stderr).toContain(`(pid ${record.pid} serves another root (${other}))`);
    expect((await status(other)).status).toMatchObject({ running: true, ready: "ready" });
  });

  it("asks /ready at the configured listen address, never at another host the pid file names", async () => {
    const root = await fresh();
    await initRoot(root);
    const server = await startServer(root);
    servers.push(server);
    let asked = 0;
    const decoy = http.createServer((_request, response) => {
      asked += 1;
      response.end(JSON.stringify({ status: "ready", degraded: ["decoy"] }));
    });
    await new Promise<void>((resolve) => decoy.listen(0, "127.0.0.2", resolve));
    cleanups.push(() => new Promise((resolve) => decoy.close(() => resolve())));
    const port = (decoy.address() as { port: number }).port;
    const record = JSON.parse(await readFile(pidFile(root), "utf8")) as Record<string, unknown>;
    await writeFile(pidFile(root), JSON.stringify({ ...record, url: `http://127.0.0.2:${port}` }));
    const probed = (await status(root)).status;
    expect(probed.running).toBe(true);
    expect(probed.degraded).not.toContain("decoy");
    expect(asked).toBe(0);
  });

  it.runIf(process.getuid?.() === 0)(
    "as root, cleans a stale pid file without leaving a lock the service user cannot open",
    async () => {
      const root = await fresh();
      await initRoot(root);
      await chown(path.join(root, "run/ivoai"), 65534, 65534);
      await writeFile(pidFile(root), stalePidRecord(await deadPid()));
      expect((await runIvoai(["server", "stop", "--root", root])).stdout).toContain(
        "removed a stale pid file",
      );
      expect((await stat(path.join(root, "run/ivoai/server.pid.lock"))).uid).toBe(65534);
    },
  );

  it("writes logs to a 0600 file rotated by size without losing a line or delaying requests", async () => {
    const root = await fresh();
    await initRoot(root);
    const logs = path.join(root, "logs");
    await mkdir(logs);
    const file = path.join(logs, "server.log");
    const server = await startServer(root, [
      "--log-file",
      file,
      "--log-max-size",
      "2KiB",
      "--log-keep",
      "100",
    ]);
    servers.push(server);
    const responses = await Promise.all(
      Array.from({ length: 100 }, () => fetch(`${server.url}/health`).then((response) => response.status)),
    );
    expect(responses.every((code) => code === 200)).toBe(true);
    expect((await runIvoai(["server", "stop", "--root", root])).code).toBe(0);

    const names = await readdir(logs);
    expect(names.length).toBeGreaterThan(5);
    const lines: string[] = [];
    for (let index = names.length - 1; index >= 0; index -= 1) {
      const name = index === 0 ? file : `${file}.${index}`;
      const info = await stat(name);
      expect(info.mode & 0o777).toBe(0o600);
      expect(info.size).toBeLessThanOrEqual(2048);
      lines.push(...(await readFile(name, "utf8")).split("\n").filter(Boolean));
    }
    const messages = lines.map((line) => (JSON.parse(line) as { msg: string }).msg);
    expect(messages.filter((msg) => msg === "request")).toHaveLength(100);
    // The first lines are the start's (memory's index may report ready before or after the listener opens).
    expect(messages.filter((msg) => msg !== "memory index ready")[0]).toBe("gateway listening");
    expect(messages.filter((msg) => msg === "memory index ready")).toHaveLength(1);
    expect(messages.at(-1)).toBe("gateway stopped");
    // Logs went to the file, not to stderr.
    expect(server.output()).not.toContain('"msg":"request"');
  });

  it("asks a TLS server on a wildcard address for its readiness through its own certificate", async () => {
    const root = await fresh();
    const certDir = await fresh();
    const cert = path.join(certDir, "cert.pem");
    const key = path.join(certDir, "key.pem");
    // A certificate for a public name, not for the loopback address status connects to.
    await run(
      "openssl",
      ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "30"].concat([
        "-subj",
        "/CN=ai.example.com",
        "-keyout",
        key,
        "-out",
        cert,
      ]),
    );
    const init = await runIvoai(
      [
        "server",
        "init",
        "--root",
        root,
        "--public-url",
        "https://ai.example.com",
        "--listen",
        "0.0.0.0:0",
      ].concat(["--tls-cert", cert, "--tls-key", key]),
    );
    expect(init.code).toBe(0);
    const server = await startServer(root);
    servers.push(server);
    expect((await status(root)).status).toMatchObject({ running: true, ready: "ready", degraded: [] });
  });

  it("refuses bad flags with exit 2 and a missing tree with the way to name it", async () => {
    const root = await fresh();
    const badTimeout = await runIvoai(["server", "stop", "--root", root, "--timeout", "soon"]);
    expect(badTimeout.code).toBe(2);
    expect(badTimeout.stderr.trim().split("\n")).toHaveLength(1);
    const badSize = await runIvoai([
      "server",
      "start",
      "--root",
      root,
      "--log-file",
      "x",
      "--log-max-size",
      "lots",
    ]);
    expect(badSize.code).toBe(2);
    expect(badSize.stderr).toContain("invalid --log-max-size 'lots'");
    const missing = await runIvoai(["server", "status", "--root", path.join(root, "nothing")]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("--root DIR (or set IVOAI_SERVER_ROOT)");
  });
});

describe("ivoai server systemd render", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
  });

  it("writes a unit that systemd-analyze verifies, with an exposure below 2.0 (OK)", async () => {
    const { dir, cleanup } = await tempDir();
    cleanups.push(cleanup);
    const out = path.join(dir, "units");
    // ExecStart names this node and the built entry: the unit runs what rendered it.
    const result = await runIvoai([
      "server",
      "systemd",
      "render",
      "--root",
      "/srv/ivoai",
      "--out",
      out,
      "--json",
    ]);
    expect(result.code).toBe(0);
    const render = JSON.parse(result.stdout) as { units: { name: string; path: string; content: string }[] };
    expect(render.units.map((unit) => unit.name)).toEqual(["ivoai-gateway.service"]);
    const unitFile = path.join(out, "ivoai-gateway.service");
    expect(render.units[0]?.path).toBe(unitFile);
    expect((await stat(unitFile)).mode & 0o777).toBe(0o644);
    const content = await readFile(unitFile, "utf8");
    expect(content).toContain(
      `ExecStart=${await realpath(process.execPath)} ${await realpath(BIN)} server start --root /srv/ivoai\n`,
    );

    const verify = await run("systemd-analyze", ["verify", unitFile]);
    expect(verify.stderr).toBe("");
    const security = await run("systemd-analyze", ["security", "--offline=true", "--no-pager", unitFile]);
    const exposure = /Overall exposure level for ivoai-gateway\.service: (\d+\.\d+) (\w+)/.exec(
      security.stdout,
    );
    expect(exposure?.[2]).toBe("OK");
    expect(Number(exposure?.[1])).toBeLessThan(2);
  });

  it.runIf(process.getuid?.() === 0)(
    "warns when another account could change the code ExecStart runs, and refuses to --apply it",
    async () => {
      const { dir, cleanup } = await tempDir();
      cleanups.push(cleanup);
      const pkg = path.join(await realpath(dir), "pkg");
      await mkdir(path.join(pkg, "dist"), { recursive: true, mode: 0o755 });
      await writeFile(path.join(pkg, "package.json"), "{}");
      const entry = path.join(pkg, "dist/ivoai.mjs");
      await writeFile(entry, "");
      await chmod(pkg, 0o757);
      const root = path.join(await realpath(dir), "srv");
      await initRoot(root);
      const args = ["server", "systemd", "render", "--root", root, "--exec", entry];
      const why = `${pkg} is writable by its group or others (mode 757), so that account could change the code the unit runs`;
      const rendered = await runIvoai(args);
      expect(rendered.code).toBe(0);
      expect(rendered.stderr).toContain(`warning: ${why}`);
      expect(rendered.stdout).toContain(`ExecStart=`);
      const applied = await runIvoai([...args, "--apply"]);
      expect(applied.code).not.toBe(0);
      expect(applied.stderr).toContain(`ivoai: refusing --apply: ${why}`);
      expect(applied.stderr).toContain("install ivoai globally as root");
    },
  );

  it("refuses --apply without root, before touching anything", async () => {
    const { dir, cleanup } = await tempDir();
    cleanups.push(cleanup);
    await chmod(dir, 0o755);
    const out = path.join(dir, "units");
    await mkdir(out);
    await chmod(out, 0o777);
    // As an unprivileged user: "nobody" (65534) when the tests run as root, else the test's own user.
    const argv = [BIN, "server", "systemd", "render", "--root", "/srv/ivoai", "--out", out, "--apply"];
    const child = await (process.getuid?.() === 0
      ? run("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, ...argv])
      : run(process.execPath, argv)
    ).catch((error: { code: number; stderr: string; stdout: string }) => error);
    expect(child).toMatchObject({ code: 1, stdout: "" });
    expect(child.stderr).toBe(
      "ivoai: --apply must run as root (it creates the system user, changes ownership and installs units): " +
        "run it with sudo, or drop --apply and install the rendered units yourself\n",
    );
    expect(await readdir(out)).toEqual([]);
  });

  // Real useradd/systemctl would change this machine: fake ones record their argv (and getent answers for the
  // user once useradd ran), and a private mount namespace puts tmpfs over /etc/systemd/system and /srv. --apply
  // refuses code under a temporary directory (PrivateTmp hides it), so the package this test built is bound at
  // /srv/ivoai-package, as an installed ivoai would be outside /tmp, wherever the clone lives (CI may use /tmp).
  it.runIf(process.getuid?.() === 0)(
    "--apply creates the user, owns the tree, installs and enables the unit",
    async () => {
      const { dir, cleanup } = await tempDir();
      cleanups.push(cleanup);
      const fakes = path.join(dir, "bin");
      const log = path.join(dir, "calls.log");
      await mkdir(fakes);
      const record = `#!/bin/sh\necho "$(basename "$0") $*" >> ${log}\n`;
      for (const name of ["groupadd", "useradd", "systemctl"]) {
        await writeFile(path.join(fakes, name), record, { mode: 0o755 });
      }
      await writeFile(
        path.join(fakes, "getent"),
        `#!/bin/sh\ngrep -q "^$([ "$1" = group ] && echo groupadd || echo useradd) " ${log} 2>/dev/null || exit 2\n` +
          `[ "$1" = group ] && echo "$2:x:4243:" || echo "$2:x:4242:4243::/nonexistent:/usr/sbin/nologin"\n`,
        { mode: 0o755 },
      );
      const script = [
        "set -e",
        "mount -t tmpfs none /etc/systemd/system",
        "mount -t tmpfs none /srv",
        'mkdir /srv/ivoai-package && mount --bind "$PACKAGE" /srv/ivoai-package',
        "BIN=/srv/ivoai-package/dist/ivoai.mjs",
        `"$NODE" "$BIN" server init --root /srv/ivoai --public-url http://127.0.0.1:0 --listen 127.0.0.1:0 >/dev/null`,
        // The same package under a temporary directory: refused before anything changes.
        "mount -t tmpfs none /var/tmp",
        'mkdir /var/tmp/ivoai-package && mount --bind "$PACKAGE" /var/tmp/ivoai-package',
        "code=0",
        `PATH="$FAKES:$PATH" "$NODE" /var/tmp/ivoai-package/dist/ivoai.mjs server systemd render --root /srv/ivoai --apply 2> "$OUT/refused.txt" || code=$?`,
        `echo "$code" > "$OUT/refused-code.txt"`,
        `PATH="$FAKES:$PATH" "$NODE" "$BIN" server systemd render --root /srv/ivoai --apply --json > "$OUT/render.json"`,
        `cp /etc/systemd/system/ivoai-gateway.service "$OUT/installed.service"`,
        `cd /srv/ivoai && stat -c '%u:%g %a %n' etc/ivoai etc/ivoai/server.toml etc/ivoai/secrets var/lib/ivoai ` +
          `var/lib/ivoai/enrollment/enrollment.sqlite run/ivoai > "$OUT/owners.txt"`,
      ].join("\n");
      await run("unshare", ["--mount", "--propagation", "private", "sh", "-c", script], {
        env: {
          ...process.env,
          NODE: process.execPath,
          PACKAGE: path.dirname(path.dirname(BIN)),
          FAKES: fakes,
          OUT: dir,
        },
      });
      const render = JSON.parse(await readFile(path.join(dir, "render.json"), "utf8")) as {
        applied: boolean;
        units: { content: string }[];
      };
      expect((await readFile(path.join(dir, "refused-code.txt"), "utf8")).trim()).toBe("2");
      expect(await readFile(path.join(dir, "refused.txt"), "utf8")).toBe(
        "warning: /var/tmp/ivoai-package/dist/ivoai.mjs is under a temporary directory, which PrivateTmp=yes hides from the service\n" +
          "ivoai: refusing --apply: the unit could not see its files (see the warning above)\n",
      );
      expect(render.applied).toBe(true);
      expect(render.units[0]?.content).toContain(
        " /srv/ivoai-package/dist/ivoai.mjs server start --root /srv/ivoai",
      );
      expect(await readFile(path.join(dir, "installed.service"), "utf8")).toBe(render.units[0]?.content);
      expect((await readFile(log, "utf8")).split("\n").filter(Boolean)).toEqual([
        "groupadd --system ivoai",
        "useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin --gid ivoai ivoai-gateway",
        "systemctl daemon-reload",
        "systemctl enable --now ivoai-gateway.service",
      ]);
      expect((await readFile(path.join(dir, "owners.txt"), "utf8")).trim().split("\n")).toEqual([
        "0:4243 750 etc/ivoai",
        "0:4243 640 etc/ivoai/server.toml",
        "4242:4243 700 etc/ivoai/secrets",
        "4242:4243 750 var/lib/ivoai",
        "4242:4243 600 var/lib/ivoai/enrollment/enrollment.sqlite",
        "4242:4243 750 run/ivoai",
      ]);
    },
  );
});
