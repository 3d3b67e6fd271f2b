// Doctor's component matrix with the built binary and isolated HOME/XDG dirs: a fresh machine, agents installed
// and logged in (fake CLIs with the official status contracts), Ruflo present or configured and missing, a
// connected server that stops, a probe that hangs, and the native module loaded by another Node.js.
import { chmod, mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCode, initRoot, type RunResult, runIvoai, startServer, tempDir } from "./helpers.js";
import { ensureNode, NODE22_VERSION } from "./npm-tools.js";

interface MatrixRow {
  component: string;
  status: string;
  healthy: string;
  active: string | null;
  why: string;
  required: boolean;
  version: string | null;
  next: string | null;
}
interface Report {
  status: string;
  matrix: MatrixRow[];
  next: string[];
}

const FAKE = path.resolve("test/fixtures/fake-agent.mjs");
let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir("ivoai-doctor-matrix-"));
});
afterAll(() => cleanup());

/** Fresh XDG roots under `dir/name`, with a PATH holding only `bin` (and the managed bin, data/ivoai/bin). */
async function machine(name: string) {
  const base = path.join(dir, name);
  const bin = path.join(base, "bin");
  const managed = path.join(base, "data", "ivoai", "bin");
  await mkdir(bin, { recursive: true });
  await mkdir(managed, { recursive: true });
  const env: NodeJS.ProcessEnv = {
    HOME: base,
    XDG_CONFIG_HOME: path.join(base, "config"),
    XDG_DATA_HOME: path.join(base, "data"),
    XDG_STATE_HOME: path.join(base, "state"),
    XDG_CACHE_HOME: path.join(base, "cache"),
    PATH: bin,
    FAKE_LOGIN_MARK: path.join(base, "logged-in"),
  };
  const executable = async (folder: string, file: string, body: string) => {
    await writeFile(path.join(folder, file), `#!/bin/sh\n${body}\n`);
    await chmod(path.join(folder, file), 0o755);
  };
  return {
    base,
    env,
    bin,
    managed,
    executable,
    /** The fake official CLIs in the managed bin, where `ivoai setup` puts them. */
    async installAgents() {
      for (const agent of ["codex", "claude", "opencode"])
        await executable(
          managed,
          agent,
          `FAKE_AGENT_NAME=${agent} exec "${process.execPath}" "${FAKE}" "$@"`,
        );
    },
    async config(text: string) {
      await mkdir(path.join(base, "config", "ivoai"), { recursive: true, mode: 0o700 });
      await writeFile(path.join(base, "config", "ivoai", "config.toml"), text, { mode: 0o600 });
    },
  };
}

async function doctor(
  env: NodeJS.ProcessEnv,
  args: string[] = [],
): Promise<{ result: RunResult; report: Report }> {
  const result = await runIvoai(["doctor", "--json", ...args], { env, timeoutMs: 90_000 });
  let report: Report;
  try {
    report = JSON.parse(result.stdout) as Report;
  } catch {
    throw new Error(`doctor printed no JSON (exit ${result.code}):\n${result.stdout}\n${result.stderr}`);
  }
  return { result, report };
}

function rowOf(report: Report, component: string): MatrixRow {
  const row = report.matrix.find((entry) => entry.component === component);
  if (!row) throw new Error(`no ${component} row in:\n${JSON.stringify(report.matrix, null, 2)}`);
  return row;
}

describe("a fresh machine", () => {
  it("lists every component with why, the agents unsupported with next steps, and exits 0 (warn)", async () => {
    const fresh = await machine("fresh");
    const { result, report } = await doctor(fresh.env);
    expect(result.code, result.stderr).toBe(0);
    expect(report.status).toBe("warn");
    for (const agent of ["codex", "claude", "opencode"])
      expect(rowOf(report, `agent:${agent}`)).toMatchObject({
        status: "unsupported",
        healthy: "unknown",
        active: null,
        required: false,
        why: `not found on PATH nor in ${fresh.managed}`,
        next: `ivoai setup --agents ${agent}`,
      });
    expect(rowOf(report, "native-sqlite")).toMatchObject({
      status: "supported",
      healthy: "yes",
      required: true,
    });
    expect(rowOf(report, "store")).toMatchObject({ healthy: "yes", required: true, active: "session files" });
    expect(rowOf(report, "knowledge")).toMatchObject({ status: "unknown", active: null });
    expect(rowOf(report, "knowledge").next).toMatch(/ivoai connect server add ALIAS/);
    expect(rowOf(report, "embedder")).toMatchObject({ active: "none" });
    expect(rowOf(report, "compression")).toMatchObject({
      active: "direct",
      healthy: "yes",
      why: "direct: no compression requested (the default)",
    });
    expect(rowOf(report, "compression:headroom")).toMatchObject({
      status: "unsupported",
      active: "direct",
      why: "direct: headroom preflight failed: not installed",
    });
    expect(rowOf(report, "compression:caveman").why).toBe("direct: caveman preflight failed: not installed");
    expect(rowOf(report, "coordinator")).toMatchObject({ active: "none", healthy: "yes", required: false });
    expect(rowOf(report, "coordinator").why).toContain(`ruflo is not on PATH nor in ${fresh.managed}`);
    expect(rowOf(report, "coordinator").next).toBe(
      "optional: 'ivoai setup --with ruflo' installs the reviewed Ruflo for AUTO's admission",
    );
    expect(rowOf(report, "skills")).toMatchObject({ status: "supported", healthy: "yes" });
    expect(report.next[0]).toBe("install the agent CLIs (codex, claude, opencode not found): ivoai setup");

    const text = await runIvoai(["doctor"], { env: fresh.env, timeoutMs: 90_000 });
    expect(text.stdout).toMatch(/\nCOMPONENT +STATUS +HEALTHY +ACTIVE +REQUIRED +WHY\n/);
    expect(text.stdout).toMatch(
      /\ncompression:headroom +unsupported +unknown +direct +no +direct: headroom preflight failed: not installed\n/,
    );
  });

  it("refuses a probe timeout out of range with exit 2", async () => {
    const fresh = await machine("bad-flag");
    const result = await runIvoai(["doctor", "--probe-timeout", "0"], { env: fresh.env });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/probe-timeout/);
  });
});

describe("after setup", () => {
  it("shows the managed agents logged in, and status ok", async () => {
    const ready = await machine("ready");
    await ready.installAgents();
    await writeFile(ready.env.FAKE_LOGIN_MARK ?? "", "yes");
    const { result, report } = await doctor(ready.env);
    expect(result.code, result.stderr).toBe(0);
    for (const agent of ["codex", "claude"]) {
      const row = rowOf(report, `agent:${agent}`);
      expect(row).toMatchObject({
        status: "supported",
        healthy: "yes",
        active: agent,
        version: `${agent} 0.0.0-fake`,
      });
      expect(row.why).toMatch(new RegExp(`^${agent} 0\\.0\\.0-fake \\(managed\\), logged in`));
      expect(row.why).not.toContain("dev@example.com");
    }
    expect(rowOf(report, "agent:opencode")).toMatchObject({ status: "supported", healthy: "unknown" });
    expect(rowOf(report, "agent:opencode").why).toBe(
      "opencode 0.0.0-fake (managed) starts; its login is not known",
    );
    expect(report.status, JSON.stringify(report.matrix, null, 2)).toBe("ok");
  });

  it("says an agent logged out is unhealthy, with the login command", async () => {
    const out = await machine("logged-out");
    await out.installAgents();
    const { report } = await doctor(out.env);
    expect(rowOf(report, "agent:codex")).toMatchObject({ healthy: "no", next: "ivoai connect chatgpt" });
    expect(rowOf(report, "agent:codex").why).toMatch(/, logged out$/);
    expect(report.status).toBe("warn");
  });
});

describe("a probe that hangs", () => {
  it("says the agent's --version timed out after 1 s, not 'Command failed'", async () => {
    const hung = await machine("hung");
    // Its --version never answers (a grandchild holding the pipes too): the probe ends its process group.
    await hung.executable(hung.bin, "codex", `"${process.execPath}" -e "setTimeout(() => {}, 60000)" & wait`);
    const { result, report } = await doctor(hung.env, ["--probe-timeout", "1"]);
    expect(result.code, result.stderr).toBe(0);
    expect(rowOf(report, "agent:codex")).toMatchObject({
      status: "unknown",
      healthy: "no",
      why: "--version timed out after 1 s",
    });
    expect(result.stdout).not.toContain("Command failed");
  });
});

describe("Ruflo", () => {
  const RUFLO = 'if [ "$1" = "--version" ]; then echo "ruflo v3.38.12"; exit 0; fi; exit 64';

  it("present with the default setting (auto): ruflo is active, its admission mandatory", async () => {
    const m = await machine("ruflo-present");
    await m.executable(m.managed, "ruflo", RUFLO);
    const { report } = await doctor(m.env);
    const row = rowOf(report, "coordinator");
    expect(row).toMatchObject({ active: "ruflo", healthy: "yes", required: true, version: "ruflo v3.38.12" });
    expect(row.why).toBe(
      `ruflo: [auto] coordinator = "auto" and ruflo v3.38.12 at ${path.join(m.managed, "ruflo")}: ` +
        "every orchestrated session passes its admission",
    );
  });

  it("present but switched off (none): none is active, and doctor says ruflo is there", async () => {
    const m = await machine("ruflo-off");
    await m.executable(m.managed, "ruflo", RUFLO);
    await m.config('[auto]\ncoordinator = "none"\n');
    const { report } = await doctor(m.env);
    const row = rowOf(report, "coordinator");
    expect(row).toMatchObject({ active: "none", healthy: "yes", required: false, version: "ruflo v3.38.12" });
    expect(row.next).toBeNull();
    expect(row.why).toContain(`ruflo v3.38.12 at ${path.join(m.managed, "ruflo")} is installed`);
  });

  it("configured and present: ruflo is active and required", async () => {
    const m = await machine("ruflo-on");
    await m.executable(m.bin, "ruflo", RUFLO);
    await m.config('[auto]\ncoordinator = "ruflo"\n');
    const { result, report } = await doctor(m.env);
    expect(result.code, result.stderr).toBe(0);
    expect(rowOf(report, "coordinator")).toMatchObject({
      status: "supported",
      active: "ruflo",
      healthy: "yes",
      required: true,
      why: `ruflo: [auto] coordinator = "ruflo", ruflo v3.38.12 at ${path.join(m.bin, "ruflo")}`,
    });
  });

  it("configured and missing: AUTO would refuse, so doctor fails with exit 1", async () => {
    const m = await machine("ruflo-missing");
    await m.config('[auto]\ncoordinator = "ruflo"\n');
    const { result, report } = await doctor(m.env);
    expect(result.code).toBe(1);
    expect(report.status).toBe("fail");
    const row = rowOf(report, "coordinator");
    expect(row).toMatchObject({ status: "unsupported", healthy: "no", required: true, active: "none" });
    expect(row.why).toMatch(
      /^\[auto\] coordinator = "ruflo" but ruflo is not installed .*: AUTO refuses to start$/,
    );
    expect(
      report.next.some((step) => step.startsWith("coordinator: 'ivoai setup --with ruflo' installs")),
    ).toBe(true);
  });
});

describe("a connected server", () => {
  it("is remote knowledge while it runs; stopped, its row is unreachable and doctor fails", async () => {
    const m = await machine("server");
    const root = path.join(m.base, "server-root");
    await initRoot(root);
    const server = await startServer(root);
    try {
      const { code } = await createCode(root);
      const added = await runIvoai(
        ["connect", "server", "add", "lab", "--url", server.url, "--purpose", "lab", "--code-stdin"],
        { env: m.env, input: `${code}\n`, timeoutMs: 60_000 },
      );
      expect(added.code, added.stderr).toBe(0);
      const up = await doctor(m.env);
      expect(rowOf(up.report, "server:lab")).toMatchObject({
        status: "supported",
        healthy: "yes",
        required: true,
        active: "protocol 1",
      });
      expect(rowOf(up.report, "knowledge")).toMatchObject({ status: "supported", active: "remote" });
      expect(rowOf(up.report, "knowledge").why).toMatch(/^remote: context from lab; memory from lab/);
      expect(rowOf(up.report, "knowledge:backend")).toMatchObject({ status: "not_exposed" });
      expect(rowOf(up.report, "embedder")).toMatchObject({ status: "not_exposed" });
      expect(rowOf(up.report, "compression").why).toMatch(/^direct: ivoai memory\/context active/);
    } finally {
      await server.stop();
    }
    const { result, report } = await doctor(m.env);
    expect(result.code).toBe(1);
    expect(report.status).toBe("fail");
    const row = rowOf(report, "server:lab");
    expect(row).toMatchObject({ status: "unknown", healthy: "no", required: true, active: null });
    expect(row.why).toMatch(/^unreachable: /);
    expect(row.next).toMatch(/check that the server at .* is running/);
    expect(rowOf(report, "knowledge")).toMatchObject({ healthy: "no", active: null });
  });
});

describe("a native module built for another Node.js", () => {
  it("is unhealthy with the ABI reason, and doctor fails", async () => {
    // This checkout's better-sqlite3 is built for the Node.js running the tests; Node 22 has another ABI.
    const node22 = await ensureNode(NODE22_VERSION);
    const m = await machine("other-abi");
    const { execFile } = await import("node:child_process");
    const result = await new Promise<RunResult>((resolve) =>
      execFile(
        node22,
        [path.resolve("dist/ivoai.mjs"), "doctor", "--json"],
        { env: m.env },
        (error, stdout, stderr) =>
          resolve({
            code: error ? ((error as { code?: number }).code ?? null) : 0,
            signal: null,
            stdout: `${stdout}`,
            stderr: `${stderr}`,
          }),
      ),
    );
    expect(result.code, result.stderr).toBe(1);
    const report = JSON.parse(result.stdout) as Report;
    const row = rowOf(report, "native-sqlite");
    expect(row).toMatchObject({ status: "unsupported", healthy: "no", required: true, active: null });
    expect(row.why).toContain(
      `the native SQLite module was built for Node.js ABI ${process.versions.modules} but this is Node.js v${NODE22_VERSION}`,
    );
  }, 900_000);
});
