// `server stop` and `server enrollment create` in process with fakes for their boundary only (the server's
// process; the enrollment store): durations reach them in milliseconds, a refused one reaches nothing.
import { describe, expect, it } from "vitest";
import type { Scope } from "../../protocol/scopes.js";
import { group, runInProcess } from "../invoke.test-kit.js";
import { createEnrollmentCreateCommand, type EnrollmentCreateDeps } from "./server-enrollment.js";
import { createServerStopCommand, type StopCommandDeps } from "./server-ops.js";

describe("server stop through its deps", () => {
  const stopper = (asked: { root: string; timeoutMs: number }[]): StopCommandDeps => ({
    stopServer: async (paths, { timeoutMs }) => {
      asked.push({ root: paths.root, timeoutMs });
      return { outcome: "stopped", root: paths.root, pid: 42, waited_ms: 1500 };
    },
  });
  const run = (deps: StopCommandDeps, argv: string[]) =>
    runInProcess([group("server", [createServerStopCommand(deps)])], argv);

  it("waits --timeout in milliseconds (default 30s) for the server of --root", async () => {
    const asked: { root: string; timeoutMs: number }[] = [];
    const { code, stdout } = await run(stopper(asked), [
      "server",
      "stop",
      "--root",
      "/srv/a",
      "--timeout",
      "2m",
    ]);
    expect(code).toBe(0);
    expect(stdout).toBe("stopped the server for /srv/a (pid 42) in 1.5s\n");
    await run(stopper(asked), ["server", "stop", "--root", "/srv/b"]);
    expect(asked).toEqual([
      { root: "/srv/a", timeoutMs: 120_000 },
      { root: "/srv/b", timeoutMs: 30_000 },
    ]);
  });

  it("refuses --timeout soon before signalling anything", async () => {
    const asked: { root: string; timeoutMs: number }[] = [];
    await expect(
      run(stopper(asked), ["server", "stop", "--root", "/srv/a", "--timeout", "soon"]),
    ).rejects.toThrow('invalid --timeout "soon"');
    expect(asked).toEqual([]);
  });
});

describe("server enrollment create through its deps", () => {
  type Asked = { ttlMs: number | undefined; scopes?: Scope[] };
  const store = (asked: Asked[]): EnrollmentCreateDeps => ({
    createCode: async (_ctx, request) => {
      asked.push(request);
      const enrollment = {
        id: "enr_1",
        status: "pending" as const,
        scopes: request.scopes ?? [],
        created_at: "2026-12-03T00:00:00.000Z",
        expires_at: "2026-12-03T00:10:00.000Z",
        consumed_at: null,
        consumed_by: null,
        revoked_at: null,
      };
      return { enrollment, code: "ivoai_enr_x" };
    },
  });
  const run = (deps: EnrollmentCreateDeps, argv: string[]) =>
    runInProcess([group("server", [group("enrollment", [createEnrollmentCreateCommand(deps)])])], argv);

  it("asks for --ttl in milliseconds, or the tree's default when none is given", async () => {
    const asked: Asked[] = [];
    const json = await run(store(asked), ["server", "enrollment", "create", "--ttl", "2h", "--json"]);
    expect(JSON.parse(json.stdout)).toMatchObject({ id: "enr_1", code: "ivoai_enr_x" });
    await run(store(asked), ["server", "enrollment", "create"]);
    expect(asked).toEqual([{ ttlMs: 7_200_000 }, { ttlMs: undefined }]);
  });

  it("refuses a --ttl past 30d or not a duration before the store is opened", async () => {
    const asked: Asked[] = [];
    for (const ttl of ["31d", "forever", "1e1m"]) {
      await expect(run(store(asked), ["server", "enrollment", "create", "--ttl", ttl])).rejects.toMatchObject(
        {
          code: "USAGE",
        },
      );
    }
    expect(asked).toEqual([]);
  });
});
