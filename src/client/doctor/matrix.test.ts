// The matrix's user-MCP seam and verdict, in process: a stopped server's probe fails, a hung one times out,
// a disabled one is not active; a required one that fails makes doctor fail.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkNativeSqlite } from "../../shared/native-sqlite.js";
import { buildMatrix, checkSkill, type MatrixInput, matrixVerdict, type UserServerProbe } from "./matrix.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "ivoai-matrix-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const input = (userServers: UserServerProbe[]): MatrixInput => ({
  agents: [],
  nativeSqlite: checkNativeSqlite(),
  servers: [],
  managedBin: path.join(dir, "bin"),
  stateDir: path.join(dir, "state"),
  configFile: path.join(dir, "config.toml"),
  env: { PATH: path.join(dir, "empty") },
  timeoutMs: 300,
  userServers,
});

const refused = "connect ECONNREFUSED 127.0.0.1:9";

describe("user MCP rows", () => {
  it("says why each is unhealthy, timed out or left out", async () => {
    const rows = await buildMatrix(
      input([
        {
          name: "stopped",
          probe: async () => ({ ok: false, tools: [], hidden: [], missing: [], ms: 3, error: refused }),
        },
        { name: "hung", probe: () => new Promise(() => {}) },
        { name: "off", enabled: false, probe: () => Promise.reject(new Error("must not be probed")) },
        {
          name: "docs",
          probe: async () => ({
            ok: true,
            tools: ["search", "read"],
            hidden: ["write"],
            missing: [],
            ms: 12,
          }),
        },
      ]),
    );
    const byName = (name: string) => rows.find((row) => row.component === `user-mcp:${name}`);
    expect(byName("stopped")).toMatchObject({ healthy: "no", active: null, why: refused, required: false });
    expect(byName("stopped")?.next).toMatch(/ivoai mcp test stopped/);
    expect(byName("hung")).toMatchObject({ healthy: "no", why: "timed out after 0.3 s" });
    expect(byName("off")).toMatchObject({ healthy: "unknown", active: null, why: "disabled" });
    expect(byName("docs")).toMatchObject({ status: "supported", healthy: "yes", active: "2 tools" });
    expect(byName("docs")?.why).toMatch(
      /^initialize and tools\/list in 12 ms: 2 tools \(1 hidden by its allow-list\)$/,
    );
    expect(matrixVerdict(rows)).toBe("warn");
  });

  it("fails the verdict when a required one is unhealthy", async () => {
    const rows = await buildMatrix(
      input([
        {
          name: "must",
          required: true,
          probe: async () => ({ ok: false, tools: [], hidden: [], missing: [], ms: 1, error: refused }),
        },
      ]),
    );
    expect(rows.find((row) => row.component === "user-mcp:must")).toMatchObject({
      required: true,
      healthy: "no",
    });
    expect(matrixVerdict(rows)).toBe("fail");
  });
});

describe("the coordinator seam", () => {
  it("shows what the injected coordinator says", async () => {
    const rows = await buildMatrix({
      ...input([]),
      coordinator: async () => ({
        implementation: "ruflo",
        active: true,
        why: "ruflo: admitted",
        ok: true,
        version: "3.38.12",
      }),
    });
    expect(rows.find((row) => row.component === "coordinator")).toMatchObject({
      active: "ruflo",
      healthy: "yes",
      required: true,
      version: "3.38.12",
      why: "ruflo: admitted",
    });
  });
});

describe("checkSkill", () => {
  it("finds the repository's skill from inside it, and none outside a package", async () => {
    expect(await checkSkill(path.resolve("src/client/doctor"))).toMatchObject({ found: true, matches: true });
    expect(await checkSkill(dir)).toEqual({ found: false, file: null });
  });
});
