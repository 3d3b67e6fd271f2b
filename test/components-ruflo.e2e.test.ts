// `ivoai setup --with ruflo` against the real npm registry: Ruflo 3.38.12 from the full lock compiled into ivoai
// (npm ci, no install scripts, no optional packages), checked as AUTO's admission checks it, kept by update,
// restored by rollback, and seen by doctor and AUTO's admission. The agent beside it is a tiny packed fake.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, promises as fs } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import rufloLock from "../manifest/locks/ruflo/package-lock.json" with { type: "json" };
import { createRufloCoordinator } from "../src/client/auto/ruflo.js";
import { COMPILED_CATALOGUE } from "../src/client/install/catalogue.js";
import { type PackedFake, packFakeAgent } from "./fake-packages.js";
import { homeEnv, runIvoai, tempDir } from "./helpers.js";

const run = promisify(execFile);
let root: string;
let cleanup: () => Promise<void>;
const fakes: Record<string, PackedFake> = {};
const ruflo = COMPILED_CATALOGUE.components.find((entry) => entry.name === "ruflo");

/** One user's machine: its own HOME and XDG roots, a catalogue file with a fake codex and the real Ruflo. */
async function machine(name: string, extraPath: string[] = []) {
  const home = path.join(root, name);
  await fs.mkdir(home, { recursive: true });
  const catalogue = path.join(home, "catalogue.json");
  const env: NodeJS.ProcessEnv = {
    ...homeEnv(home),
    PATH: [...extraPath, path.dirname(process.execPath), "/usr/bin", "/bin"].join(path.delimiter),
    IVOAI_INSTALL_CATALOGUE: catalogue,
    IVOAI_UNSAFE_TEST_CATALOGUE: "1",
  };
  if (process.env.npm_config_registry) env.npm_config_registry = process.env.npm_config_registry;
  const data = path.join(home, ".local/share/ivoai");
  return {
    env,
    data,
    bin: (name: string) => path.join(data, "bin", name),
    state: path.join(home, ".local/state/ivoai"),
    async useCatalogue(codex: string, rufloPin: Partial<typeof ruflo> = {}) {
      const fake = fakes[codex];
      await fs.writeFile(
        catalogue,
        JSON.stringify({
          revision: Number(codex.split(".")[1]) + 1,
          agents: [
            {
              agent: "codex",
              package: "fake-codex",
              version: codex,
              integrity: fake?.integrity,
              bins: ["codex"],
              allow_scripts: false,
              scripts_note: "test fake",
              tarball: fake?.file,
            },
          ],
          components: [{ ...ruflo, ...rufloPin }],
        }),
      );
    },
  };
}
type Machine = Awaited<ReturnType<typeof machine>>;

const ivoai = (m: Machine, ...args: string[]) => runIvoai(args, { env: m.env, timeoutMs: 600_000 });

async function json<T>(m: Machine, ...args: string[]): Promise<T> {
  const result = await ivoai(m, ...args, "--json");
  if (result.code !== 0)
    throw new Error(`ivoai ${args.join(" ")} exited ${result.code}:\n${result.stdout}\n${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

const version = async (file: string) =>
  (await run(file, ["--version"], { timeout: 60_000, env: { PATH: process.env.PATH ?? "" } })).stdout.trim();
const current = async (m: Machine) => fs.readlink(path.join(m.data, "agents", "current"));
const sha256 = async (file: string) =>
  createHash("sha256")
    .update(await fs.readFile(file))
    .digest("hex");

beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir("ivoai-ruflo-install-"));
  fakes["1.0.0"] = await packFakeAgent(root, "fake-codex", "codex", "1.0.0");
  fakes["1.1.0"] = await packFakeAgent(root, "fake-codex", "codex", "1.1.0");
}, 120_000);
afterAll(() => cleanup());

describe("ivoai setup --with ruflo", () => {
  let m: Machine;
  let setupResult: {
    generation: string;
    components: { component: string; status: string; version: string; path: string }[];
  };

  beforeAll(async () => {
    m = await machine("with-ruflo");
    await m.useCatalogue("1.0.0");
    setupResult = await json(m, "setup", "--agents", "codex", "--with", "ruflo");
  }, 900_000);

  it("installs the reviewed Ruflo from the compiled lock, links it and records it as managed", async () => {
    expect(setupResult.components).toEqual([
      { component: "ruflo", status: "managed", version: "3.38.12", path: m.bin("ruflo") },
    ]);
    expect(await version(m.bin("ruflo"))).toBe("ruflo v3.38.12");
    const dir = path.join(m.data, "agents", setupResult.generation, "ruflo");
    expect(JSON.parse(await fs.readFile(path.join(dir, "package-lock.json"), "utf8"))).toEqual(rufloLock);
    const installed = JSON.parse(
      await fs.readFile(path.join(dir, "node_modules/.package-lock.json"), "utf8"),
    ) as {
      packages: Record<string, { optional?: boolean; version?: string }>;
    };
    // npm ci --omit=optional: the reviewed tree without the native and model packages, and the inner CLI pinned.
    expect(Object.values(installed.packages).filter((item) => item.optional)).toEqual([]);
    expect(installed.packages["node_modules/@claude-flow/cli"]?.version).toBe("3.38.12");
    const record = JSON.parse(await fs.readFile(path.join(m.state, "install.json"), "utf8"));
    expect(record.components.ruflo).toMatchObject({
      status: "managed",
      version: "3.38.12",
      allow_scripts: false,
    });
    expect(await sha256(path.join(dir, "node_modules/ruflo/bin/ruflo.js"))).toBe(
      "af863233c65b825ae38c689f759d9dcbb18528b42771aed4e929ca6d57f21ccd",
    );
  });

  it("AUTO's admission passes with the installed Ruflo", async () => {
    const runtimeDir = await mkdtemp(path.join(tmpdir(), "ivoai-ruflo-runtime-"));
    try {
      const admission = await createRufloCoordinator({ command: m.bin("ruflo") }).admit({
        sessionId: "sess_setup_ruflo_01",
        runtimeDir,
      });
      expect(admission.reason).toMatch(/^ruflo 3\.38\.12 admitted: hierarchical swarm /);
      expect(admission.admitted).toBe(true);
    } finally {
      await fs.rm(runtimeDir, { recursive: true, force: true });
    }
  }, 300_000);

  it("doctor and ivoai components see it: the coordinator row says ruflo is active and why", async () => {
    // Not json(): doctor exits non-zero for the agents this machine lacks, and still prints its report.
    const doctor = await ivoai(m, "doctor", "--json");
    const report = JSON.parse(doctor.stdout) as {
      matrix: { component: string; active: string; healthy: string; why: string }[];
    };
    const row = report.matrix.find((entry) => entry.component === "coordinator");
    expect(row).toMatchObject({ active: "ruflo", healthy: "yes" });
    expect(row?.why).toContain(`ruflo v3.38.12 at ${m.bin("ruflo")}`);
    const rows = await json<{ name: string; installed: string; found: string | null }[]>(m, "components");
    expect(rows.find((entry) => entry.name === "ruflo")).toMatchObject({
      installed: "yes",
      found: m.bin("ruflo"),
    });
  }, 120_000);

  it("update installs a new generation that keeps Ruflo, and rollback returns to the one before", async () => {
    const before = await current(m);
    await m.useCatalogue("1.1.0");
    const probe = await json<{
      agents: { change: string }[];
      components: { component: string; change: string }[];
    }>(m, "update", "--check");
    expect(probe.components).toEqual([
      { component: "ruflo", installed: "3.38.12", available: "3.38.12", change: "none" },
    ]);
    expect(probe.agents.map((row) => row.change)).toEqual(["upgrade"]);
    const updated = await json<{
      updated: boolean;
      generation: string;
      doctor: { agent: string; ok: boolean }[];
    }>(m, "update");
    expect(updated.updated).toBe(true);
    expect(updated.doctor.map((row) => [row.agent, row.ok])).toEqual([
      ["codex", true],
      ["ruflo", true],
    ]);
    expect(await current(m)).not.toBe(before);
    expect(await version(m.bin("ruflo"))).toBe("ruflo v3.38.12");
    expect(await version(m.bin("codex"))).toBe("codex-cli 1.1.0");
    const rolled = await json<{ components: { component: string; version: string }[] }>(m, "rollback");
    expect(rolled.components).toEqual([{ component: "ruflo", version: "3.38.12" }]);
    expect(await current(m)).toBe(before);
    expect(await version(m.bin("codex"))).toBe("codex-cli 1.0.0");
    expect(await version(m.bin("ruflo"))).toBe("ruflo v3.38.12");
  }, 900_000);
});

describe("ivoai setup --with ruflo refusals", () => {
  it("a catalogue pin the compiled lock does not hold installs nothing", async () => {
    const m = await machine("bad-pin");
    await m.useCatalogue("1.0.0", { integrity: `sha512-${"A".repeat(86)}==` });
    const result = await ivoai(m, "setup", "--agents", "codex", "--with", "ruflo");
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toMatch(/integrity check failed for ruflo@3\.38\.12: .*nothing was installed/);
    expect(existsSync(m.bin("ruflo"))).toBe(false);
    expect(existsSync(m.bin("codex"))).toBe(false);
    expect(await fs.readdir(path.join(m.data, "agents")).catch(() => [])).toEqual([]);
    expect(existsSync(path.join(m.state, "install.json"))).toBe(false);
  }, 120_000);

  it("a ruflo already on PATH is recorded as pre_existing and left alone", async () => {
    const own = path.join(root, "own-bin");
    await fs.mkdir(own, { recursive: true });
    await fs.writeFile(path.join(own, "ruflo"), "#!/bin/sh\necho 'ruflo v3.38.12'\n", { mode: 0o755 });
    const m = await machine("own-ruflo", [own]);
    await m.useCatalogue("1.0.0");
    const result = await json<{ components: { component: string; status: string; path: string }[] }>(
      m,
      "setup",
      "--agents",
      "codex",
      "--with",
      "ruflo",
    );
    expect(result.components).toEqual([
      { component: "ruflo", status: "pre_existing", version: null, path: path.join(own, "ruflo") },
    ]);
    expect(existsSync(m.bin("ruflo"))).toBe(false);
  }, 120_000);

  it("a bad --with value is a usage error", async () => {
    const m = await machine("bad-flag");
    const result = await ivoai(m, "setup", "--with", "headroom");
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.stderr).toContain("ruflo");
  });
});
