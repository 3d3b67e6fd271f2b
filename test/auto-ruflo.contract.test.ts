// Contract with the real, pinned Ruflo CLI: admission passes offline, its swarm id verifies through Ruflo
// itself, deviations fail closed, and no credential of the parent reaches any Ruflo process.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { cp, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createCoordinator,
  type LifecycleCoordinator,
  opaqueTaskId,
} from "../src/client/auto/coordinator.js";
import { RUFLO_PIN, RUFLO_SAFE_PROFILE, type RufloSafeProfile } from "../src/client/auto/ruflo.js";
import { rufloEnv, runRuflo, trailingJson } from "../src/client/auto/ruflo-process.js";
import { installFakeClis } from "./fake-clis.js";
import { autoJsonLines, runIvoai } from "./helpers.js";
import { ensureNpmTools } from "./npm-tools.js";

const FAKE_SECRET = "sk-ivoai-fake-credential-7f3a";
const parentEnv: NodeJS.ProcessEnv = {
  ...process.env,
  OPENAI_API_KEY: FAKE_SECRET,
  ANTHROPIC_API_KEY: FAKE_SECRET,
  OPENROUTER_API_KEY: FAKE_SECRET,
  IVOAI_FAKE_ROUTER_TOKEN: FAKE_SECRET,
  NODE_OPTIONS: "--max-old-space-size=64",
};

let command: string;
let scratch: string;
let runtimeDir: string;
let coordinator: LifecycleCoordinator;
let admission: Awaited<ReturnType<LifecycleCoordinator["admit"]>>;
/** The environment of every Ruflo process, as the kernel shows it (/proc/PID/environ) right after exec. */
const seenEnvs: Record<string, string>[] = [];
const observingSpawn = ((...args: Parameters<typeof spawn>) => {
  const child = spawn(...args);
  if (child.pid !== undefined) {
    const raw = readFileSync(`/proc/${child.pid}/environ`, "utf8");
    seenEnvs.push(Object.fromEntries(raw.split("\0").filter(Boolean).map(splitVar)));
  }
  return child;
}) as typeof spawn;

function splitVar(entry: string): [string, string] {
  const at = entry.indexOf("=");
  return [entry.slice(0, at), entry.slice(at + 1)];
}

const sessionId = "sess_contract_0001";
const secretTaskKey = "research-the-secret-plan";

beforeAll(async () => {
  const tools = await ensureNpmTools("ruflo", {
    ruflo: RUFLO_PIN.version,
    [RUFLO_PIN.cliPackage]: RUFLO_PIN.cliVersion,
  });
  command = path.join(tools, "node_modules", ".bin", "ruflo");
  scratch = await mkdtemp(path.join(tmpdir(), "ivoai-ruflo-"));
  runtimeDir = path.join(scratch, "runtime");
  await mkdir(runtimeDir, { mode: 0o700 });
  coordinator = createCoordinator("ruflo", {
    ruflo: { command, env: parentEnv, spawn: observingSpawn },
  });
  admission = await coordinator.admit({ sessionId, runtimeDir });
}, 900_000);

afterAll(async () => {
  await coordinator?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe("the ruflo coordinator against the real ruflo 3.38.12", () => {
  it("admits the session offline with a hierarchical swarm and the primary registered", async () => {
    expect(admission.reason).toMatch(/^ruflo 3\.38\.12 admitted: hierarchical swarm swarm-/);
    expect(admission.admitted).toBe(true);
    expect(admission.swarmId).toMatch(/^swarm-\d+-[a-z0-9]+$/);
    const dir = path.join(runtimeDir, "ruflo");
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    const store = JSON.parse(await readFile(path.join(dir, ".claude-flow/tasks/store.json"), "utf8")) as {
      tasks: Record<string, { description: string; status: string }>;
    };
    expect(Object.values(store.tasks)).toEqual([
      expect.objectContaining({ description: opaqueTaskId(sessionId, "@primary"), status: "in_progress" }),
    ]);
  });

  it("gives a swarm id that Ruflo itself confirms, and only that one", async () => {
    const dir = path.join(runtimeDir, "ruflo");
    const ask = async (swarmId: string) => {
      const { stdout } = await runRuflo({
        entry: await realEntry(),
        args: [
          "mcp",
          "exec",
          "--tool",
          "swarm_status",
          "--params",
          JSON.stringify({ swarmId }),
          "--format",
          "json",
        ],
        cwd: dir,
        env: rufloEnv(process.env, dir, RUFLO_SAFE_PROFILE.tools),
        ioDir: path.join(dir, ".ivoai"),
        timeoutMs: 60_000,
        killAfterMs: 1_000,
      });
      return (trailingJson(stdout, "swarm_status") as { result: { swarmId: string; topology: string } })
        .result;
    };
    const confirmed = await ask(admission.swarmId ?? "");
    expect(confirmed).toMatchObject({ swarmId: admission.swarmId, topology: "hierarchical" });
    // An unknown id is answered with the most recent swarm: that is why admission compares the ids.
    const other = await ask("swarm-1-zzzzzz");
    expect(other.swarmId).not.toBe("swarm-1-zzzzzz");
  }, 180_000);

  it("tracks worker tasks by opaque id and lifecycle state only", async () => {
    const id = opaqueTaskId(sessionId, secretTaskKey);
    await coordinator.registerTask(id, "pending");
    await coordinator.updateTask(id, "running");
    await coordinator.updateTask(id, "done");
    const dir = path.join(runtimeDir, "ruflo");
    const store = JSON.parse(await readFile(path.join(dir, ".claude-flow/tasks/store.json"), "utf8")) as {
      tasks: Record<string, { description: string; status: string }>;
    };
    expect(Object.values(store.tasks).find((task) => task.description === id)?.status).toBe("completed");
    const everything = await readTree(dir);
    expect(everything).not.toContain(secretTaskKey);
    expect(everything).not.toContain(sessionId);
    await expect(coordinator.registerTask("summarise the secret plan", "pending")).rejects.toMatchObject({
      code: "USAGE",
    });
  }, 180_000);

  it("lets no credential of the parent reach a ruflo process", () => {
    expect(seenEnvs.length).toBeGreaterThanOrEqual(7);
    for (const env of seenEnvs) {
      expect(Object.values(env)).not.toContain(FAKE_SECRET);
      expect(env).not.toHaveProperty("NODE_OPTIONS");
      expect(env).toMatchObject({
        RUFLO_PROVIDER: "ivoai-disabled",
        CLAUDE_FLOW_MEMORY_BACKEND: "memory",
        HOME: path.join(runtimeDir, "ruflo"),
      });
    }
  });

  it("refuses a tampered allow-list or provider execution before running anything", async () => {
    const tampered: RufloSafeProfile[] = [
      { ...RUFLO_SAFE_PROFILE, tools: [...RUFLO_SAFE_PROFILE.tools, "agent_execute"] },
      { ...RUFLO_SAFE_PROFILE, tools: RUFLO_SAFE_PROFILE.tools.slice(1) },
      { ...RUFLO_SAFE_PROFILE, providerExecution: true },
      { ...RUFLO_SAFE_PROFILE, durableMemory: true },
    ];
    const reasons: string[] = [];
    for (const profile of tampered) {
      const before = seenEnvs.length;
      const refused = createCoordinator("ruflo", { ruflo: { command, profile, spawn: observingSpawn } });
      const result = await refused.admit({ sessionId: "sess_tampered", runtimeDir: await freshRuntime() });
      expect(result.admitted).toBe(false);
      expect(seenEnvs.length).toBe(before);
      reasons.push(result.reason);
    }
    expect(reasons).toEqual([
      "ruflo safe profile does not match the reviewed allow-list (+agent_execute)",
      "ruflo safe profile does not match the reviewed allow-list (-swarm_init)",
      "ruflo safe profile enables provider execution",
      "ruflo safe profile enables durable memory",
    ]);
  });

  it("refuses a ruflo that is not the reviewed release", async () => {
    const fake = path.join(scratch, "fake-install", "node_modules");
    await cp(path.dirname(path.dirname(await realEntry())), path.join(fake, "ruflo"), {
      recursive: true,
      filter: (source) => !source.includes(`${path.sep}node_modules${path.sep}ruflo${path.sep}node_modules`),
    });
    const wrapper = path.join(fake, "ruflo", "bin", "ruflo.js");
    await writeFile(wrapper, `${await readFile(wrapper, "utf8")}\n// tampered\n`);
    const result = await createCoordinator("ruflo", { ruflo: { command: wrapper } }).admit({
      sessionId: "sess_tampered",
      runtimeDir: await freshRuntime(),
    });
    expect(result).toEqual({ admitted: false, reason: "ruflo wrapper does not match the reviewed release" });

    const missing = await createCoordinator("ruflo", {
      ruflo: { command: path.join(scratch, "nope") },
    }).admit({
      sessionId: "sess_missing",
      runtimeDir: await freshRuntime(),
    });
    expect(missing.admitted).toBe(false);
    expect(missing.reason).toMatch(/^ruflo executable .*nope does not exist$/);
  });

  it("leaves nothing behind after close", async () => {
    await coordinator.close();
    await expect(stat(path.join(runtimeDir, "ruflo"))).rejects.toMatchObject({ code: "ENOENT" });
    await expect(
      coordinator.updateTask(opaqueTaskId(sessionId, secretTaskKey), "done"),
    ).rejects.toMatchObject({
      code: "USAGE",
    });
  });
});

/** A client with the fake agents and `config` as config.toml, ruflo on PATH; one scripted one-task plan. */
async function autoMachine(xdg: string, config: string) {
  const fakes = await installFakeClis(path.join(xdg, "fakes"));
  const env = {
    ...fakes.env,
    PATH: `${fakes.binDir}:${path.dirname(command)}:${process.env.PATH}`,
    XDG_CONFIG_HOME: path.join(xdg, "config"),
    XDG_STATE_HOME: path.join(xdg, "state"),
    XDG_DATA_HOME: path.join(xdg, "data"),
    HOME: xdg,
  };
  await mkdir(path.join(xdg, "config", "ivoai"), { recursive: true, mode: 0o700 });
  await writeFile(path.join(xdg, "config", "ivoai", "config.toml"), config);
  const plan = {
    tasks: [
      {
        id: "survey",
        kind: "research",
        instructions: "SECRET-INSTRUCTIONS survey the code",
        depends_on: [],
        signals: { complexity: 0.5, context_need: 0.5, risk: 0.3, ambiguity: 0.2, est_tokens: 30_000 },
      },
    ],
  };
  const script = () =>
    fakes.script({
      codex: {
        turns: {
          plan: [{ reply: plan }],
          worker: [{ reply: { summary: "ok", findings: [], state_delta: [] } }],
          consolidate: [{ reply: "done" }],
        },
      },
      claude: {},
    });
  await script();
  const withoutRuflo = { ...env, PATH: `${fakes.binDir}:${path.dirname(process.execPath)}:/usr/bin:/bin` };
  return { env, withoutRuflo, script };
}

async function expectAdmittedRun(env: NodeJS.ProcessEnv, xdg: string): Promise<void> {
  const result = await runIvoai(["auto", "--print", "Implement the canary stage", "--json"], {
    env,
    timeoutMs: 180_000,
  });
  expect(result.stderr).toMatch(/Ruflo admitted the session/);
  expect(result.code).toBe(0);
  const out = autoJsonLines(result.stdout).result as { tasks: { id: string; state: string }[] };
  expect(out.tasks).toEqual([expect.objectContaining({ id: "survey", state: "done" })]);
  // Ruflo's runtime subtree was private to the session and is gone with it.
  const run = path.join(xdg, "state", "ivoai", "run");
  expect(await readdir(run).catch(() => [])).toEqual([]);
}

describe("ivoai auto with Ruflo", () => {
  it('coordinator = "ruflo": starts the session only after Ruflo\'s admission, refuses to start without ruflo', async () => {
    const xdg = await mkdtemp(path.join(tmpdir(), "ivoai-ruflo-auto-"));
    try {
      const machine = await autoMachine(xdg, '[auto]\ncoordinator = "ruflo"\n');
      await expectAdmittedRun(machine.env, xdg);
      // Without ruflo installed the session does not start, and says why.
      const missing = await runIvoai(["auto", "--print", "Implement the canary stage"], {
        env: machine.withoutRuflo,
        timeoutMs: 60_000,
      });
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/coordinator = "ruflo" but ruflo is not installed/);
    } finally {
      await rm(xdg, { recursive: true, force: true });
    }
  }, 240_000);

  it("the default (auto): an installed ruflo's admission is mandatory, without one AUTO runs uncoordinated", async () => {
    const xdg = await mkdtemp(path.join(tmpdir(), "ivoai-ruflo-default-"));
    try {
      const machine = await autoMachine(xdg, "");
      await expectAdmittedRun(machine.env, xdg);
      await machine.script();
      const bare = await runIvoai(["auto", "--print", "Implement the canary stage", "--json"], {
        env: machine.withoutRuflo,
        timeoutMs: 180_000,
      });
      expect(bare.code).toBe(0);
      expect(bare.stderr).not.toMatch(/Ruflo/);
    } finally {
      await rm(xdg, { recursive: true, force: true });
    }
  }, 300_000);
});

async function realEntry(): Promise<string> {
  const { realpath } = await import("node:fs/promises");
  return realpath(command);
}

let runtimes = 0;
async function freshRuntime(): Promise<string> {
  const dir = path.join(scratch, `runtime-${++runtimes}`);
  await mkdir(dir, { mode: 0o700 });
  return dir;
}

/** Every file below `dir`, concatenated (bounded by what admission writes: a few small JSON files). */
async function readTree(dir: string): Promise<string> {
  let text = "";
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) text += await readFile(path.join(entry.parentPath, entry.name), "utf8");
  }
  return text;
}
